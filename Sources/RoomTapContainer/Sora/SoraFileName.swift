/// What the name of a file in a Sora recording folder says (hisui `docs/usage.md`,
/// sora-archive-uploader `finder.go`):
///
///     report-<recording_id>.json                    the recording's report, written last
///     archive-<connection_id>.json|.webm|.mp4       one connection's whole recording
///     split-archive-<connection_id>_NNNN.json|...   one piece of a split recording (NNNN from 0001)
///     split-archive-end-<connection_id>.json        the end of a connection's split recording
///
/// Thread: a value type; pure, any thread.
package struct SoraFileName: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case report(recordingID: String)
        case archive
        case split(index: Int)
        case splitEnd
    }

    public enum Extension: String, Sendable {
        case json, webm, mp4
    }

    public let kind: Kind
    /// The connection id the name carries ("" for a report).
    public let connectionID: String
    public let fileExtension: Extension

    /// Parses a file name (no directory part); nil when it is none of Sora's names.
    public init?(_ name: String) {
        guard let dot = name.lastIndex(of: "."),
            let ext = Extension(rawValue: String(name[name.index(after: dot)...]))
        else { return nil }
        let base = String(name[..<dot])
        fileExtension = ext
        if base.hasPrefix("report-") {
            let id = String(base.dropFirst("report-".count))
            guard ext == .json, Self.isID(id) else { return nil }
            kind = .report(recordingID: id)
            connectionID = ""
        } else if base.hasPrefix("split-archive-end-") {
            let id = String(base.dropFirst("split-archive-end-".count))
            guard ext == .json, Self.isID(id) else { return nil }
            kind = .splitEnd
            connectionID = id
        } else if base.hasPrefix("split-archive-") {
            let rest = base.dropFirst("split-archive-".count)
            guard let underscore = rest.lastIndex(of: "_") else { return nil }
            let digits = rest[rest.index(after: underscore)...]
            let id = String(rest[..<underscore])
            guard digits.count >= 4, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let index = Int(digits), index >= 1, Self.isID(id)
            else { return nil }
            kind = .split(index: index)
            connectionID = id
        } else if base.hasPrefix("archive-") {
            let id = String(base.dropFirst("archive-".count))
            guard Self.isID(id) else { return nil }
            kind = .archive
            connectionID = id
        } else {
            return nil
        }
    }

    /// An id Sora gives (and a name part safe in a path): 1–255 characters, none of them `/`, a
    /// control character or a space.
    static func isID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 255
            && id.unicodeScalars.allSatisfy { $0.value > 0x20 && $0 != "/" && $0.value != 0x7F }
    }

    /// The file name of the media beside a JSON of this kind, in `format`.
    public static func mediaName(ofJSON json: String, format: SoraArchiveMetadata.Format) -> String {
        String(json.dropLast(".json".count)) + "." + format.rawValue
    }
}
