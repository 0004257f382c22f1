import RoomTapJSON

/// A Sora recording's `report-<recording_id>.json`, written when the recording ends, after every
/// archive (sora-archive-uploader `gatekeeper.go`).
///
/// hisui reads `split_only` and `archives[]` (`connection_id`, `metadata_filename`,
/// `split_last_index`; `src/sora/recording_metadata.rs`); roomtap also reads `recording_id`,
/// `channel_id`, `session_id`, `failed_archives[]` (what Sora could not record) and, when the
/// report has one, its own `start_timestamp` (RFC 3339; inferred: no public source shows it), the
/// wall-clock time of the recording's start against which archives' `start_timestamp`s place
/// them. Entries of the wrong shape are left out; a report that is not a JSON object is an error.
///
/// Thread: a value type; parsing is pure, any thread.
public struct SoraRecordingReport: Sendable, Equatable {
    /// One entry of `archives` or `failed_archives`.
    public struct Entry: Sendable, Equatable {
        /// Absent in some failed entries (then ``filename`` may say which connection's it was).
        public var connectionID: String?
        /// The archive JSON's name (`metadata_filename`), when a plain name.
        public var metadataFilename: String?
        /// The media's name (`filename`), when a plain name.
        public var filename: String?
        /// The last split piece's index (`split_last_index`), for a split recording.
        public var splitLastIndex: Int?
    }

    /// Largest report read (16 MiB: tens of thousands of archives).
    public static let maxBytes = 16 << 20

    public var recordingID: String?
    public var channelID: String?
    public var sessionID: String?
    /// `split_only`: only split files were written (no `archive-<id>.json`).
    public var splitOnly = false
    public var archives: [Entry] = []
    public var failedArchives: [Entry] = []
    /// The recording's own start, when the report gives it.
    public var startTimestamp: RFC3339Timestamp?

    public init() {}

    /// Parses a report's bytes. One-line errors: not JSON, not an object, more than ``maxBytes``.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(SoraMetadataError) -> SoraRecordingReport {
        guard bytes.count <= maxBytes else {
            throw SoraMetadataError("larger than \(maxBytes >> 20) MiB, not a recording report")
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: bytes) } catch {
            throw SoraMetadataError("not JSON (\(error.description))")
        }
        guard value.objectValue != nil else { throw SoraMetadataError("not a JSON object") }
        var report = SoraRecordingReport()
        report.recordingID = value["recording_id"]?.stringValue
        report.channelID = value["channel_id"]?.stringValue
        report.sessionID = value["session_id"]?.stringValue
        report.splitOnly = value["split_only"]?.boolValue ?? false
        report.startTimestamp = value["start_timestamp"]?.stringValue.flatMap(RFC3339Timestamp.init)
        report.archives = (value["archives"]?.arrayValue ?? []).compactMap(entry)
        report.failedArchives = (value["failed_archives"]?.arrayValue ?? []).compactMap(entry)
        return report
    }

    /// An entry; nil when it is not an object or names nothing.
    static func entry(_ value: JSONValue) -> Entry? {
        guard value.objectValue != nil else { return nil }
        let plain = { (key: String) in
            value[key]?.stringValue.flatMap { SoraArchiveMetadata.isPlainName($0) ? $0 : nil }
        }
        let entry = Entry(
            connectionID: value["connection_id"]?.stringValue.flatMap { SoraFileName.isID($0) ? $0 : nil },
            metadataFilename: plain("metadata_filename"), filename: plain("filename"),
            splitLastIndex: SoraArchiveMetadata.index(value["split_last_index"]))
        guard entry.connectionID != nil || entry.metadataFilename != nil || entry.filename != nil else { return nil }
        return entry
    }
}
