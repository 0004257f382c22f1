public import RoomTapJSON

/// One archive JSON of a Sora recording: `archive-<connection_id>.json`,
/// `split-archive-<connection_id>_NNNN.json` or `split-archive-end-<connection_id>.json`.
///
/// The fields hisui reads (`src/sora/recording_metadata.rs`: `connection_id`, `format`, `audio`,
/// `video`, `start_time_offset`, `stop_time_offset`) and those of Sora's archive webhooks that
/// roomtap uses (sora-server-sdk-go `event_recording_webhook.go`: `client_id`, `session_id`,
/// `channel_id`, `recording_id`, `metadata`, `filename`, `start_timestamp`, `stop_timestamp`,
/// `split_index`, `split_last_index`). Only `connection_id` is required; a field of the wrong
/// type is treated as absent, except those that decide what is played (`format`, the offsets),
/// which are errors.
///
/// Thread: a value type; parsing is pure, any thread.
public struct SoraArchiveMetadata: Sendable, Equatable {
    /// The media's container (`format`; absent before Sora 2024.2, which wrote only WebM).
    public enum Format: String, Sendable, Equatable {
        case webm, mp4
    }

    /// Largest archive JSON read (1 MiB): Sora's are about 2 KB; `metadata` is the client's.
    public static let maxBytes = 1 << 20
    /// Offsets past this (48 hours, in seconds) are refused, as roomtap's longest input.
    public static let maxOffsetSeconds = 48.0 * 3600

    public var connectionID: String
    public var clientID: String?
    public var sessionID: String?
    public var channelID: String?
    public var recordingID: String?
    public var format: Format
    /// False only when the JSON says `"audio": false` (hisui's rule: other values, objects in some
    /// Sora versions, mean audio).
    public var hasAudio: Bool
    /// Whole seconds from the recording's start to this file's start (Sora writes integers).
    public var startTimeOffset: Double?
    public var stopTimeOffset: Double?
    /// The wall-clock start and stop of this file.
    public var startTimestamp: RFC3339Timestamp?
    public var stopTimestamp: RFC3339Timestamp?
    /// The media file's name (`filename`), when given and a plain name (no directory part).
    public var filename: String?
    /// The connection's `metadata` (any JSON the client sent).
    public var metadata: JSONValue?
    /// `split_index` of a split piece; `split_last_index` of a split end.
    public var splitIndex: Int?
    public var splitLastIndex: Int?

    public init(connectionID: String, format: Format = .webm) {
        self.connectionID = connectionID
        self.format = format
        hasAudio = true
    }

    /// Parses an archive JSON's bytes. One-line errors: not JSON, not an object, no
    /// `connection_id`, a `format` other than webm/mp4, an offset that is not a number of seconds
    /// between 0 and 48 hours, more than ``maxBytes``.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(SoraMetadataError) -> SoraArchiveMetadata {
        guard bytes.count <= maxBytes else {
            throw SoraMetadataError("larger than \(maxBytes / 1024) KiB, not an archive JSON")
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: bytes) } catch {
            throw SoraMetadataError("not JSON (\(error.description))")
        }
        guard value.objectValue != nil else { throw SoraMetadataError("not a JSON object") }
        guard let id = value["connection_id"]?.stringValue, SoraFileName.isID(id) else {
            throw SoraMetadataError("no connection_id")
        }
        var archive = SoraArchiveMetadata(connectionID: id)
        archive.clientID = value["client_id"]?.stringValue
        archive.sessionID = value["session_id"]?.stringValue
        archive.channelID = value["channel_id"]?.stringValue
        archive.recordingID = value["recording_id"]?.stringValue
        if let format = value["format"], !format.isNull {
            guard let text = format.stringValue, let known = Format(rawValue: text.lowercased()) else {
                throw SoraMetadataError("format \(format.jsonText.prefix(40)) is neither webm nor mp4")
            }
            archive.format = known
        }
        archive.hasAudio = value["audio"]?.boolValue != false
        archive.startTimeOffset = try seconds(value, "start_time_offset")
        archive.stopTimeOffset = try seconds(value, "stop_time_offset")
        archive.startTimestamp = value["start_timestamp"]?.stringValue.flatMap(RFC3339Timestamp.init)
        archive.stopTimestamp = value["stop_timestamp"]?.stringValue.flatMap(RFC3339Timestamp.init)
        if let name = value["filename"]?.stringValue, isPlainName(name) { archive.filename = name }
        if let metadata = value["metadata"], !metadata.isNull { archive.metadata = metadata }
        archive.splitIndex = index(value["split_index"])
        archive.splitLastIndex = index(value["split_last_index"])
        return archive
    }

    /// A file name without a directory part (no `/`, not `.` or `..`, no NUL).
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && !name.contains("/") && !name.contains("\0") && name != "."
            && name != ".."
    }

    /// `key` as seconds: absent or null → nil; otherwise a number in 0...48 h.
    static func seconds(_ value: JSONValue, _ key: String) throws(SoraMetadataError) -> Double? {
        guard let field = value[key], !field.isNull else { return nil }
        guard let seconds = field.doubleValue, seconds.isFinite, seconds >= 0, seconds <= maxOffsetSeconds else {
            throw SoraMetadataError("\(key) \(field.jsonText.prefix(40)) is not a number of seconds from 0 to 172800")
        }
        return seconds
    }

    /// A split index (Sora writes strings like `"0003"`; numbers accepted): 1...999999, else nil.
    static func index(_ field: JSONValue?) -> Int? {
        if let text = field?.stringValue, text.count <= 6, let n = Int(text), n >= 1 { return n }
        if let n = field?.doubleValue, n.isFinite, n >= 1, n <= 999_999, n == n.rounded() { return Int(n) }
        return nil
    }

    /// The value of `key` in `metadata` as a track name: a string, or a number or boolean as
    /// written; nil when `metadata` is not an object, lacks the key, or holds an empty string,
    /// an object or an array there.
    public func metadataName(_ key: String) -> String? {
        guard let field = metadata?[key] else { return nil }
        switch field {
        case .string(let text): return text.isEmpty ? nil : text
        case .number, .bool: return field.jsonText
        default: return nil
        }
    }
}
