/// Why a Sora JSON (an archive's or the report) cannot be used: one line without the path, saying
/// what is wrong with it (`no connection_id`, `format 'ogg' is neither webm nor mp4`, ...).
///
/// Thread: a value type.
public struct SoraMetadataError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
