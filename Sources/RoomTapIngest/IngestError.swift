/// Why an Ogg Opus file cannot be used, with a one-line message for the user.
///
/// Thrown before any output is created: by ``OggOpusFileInfo/inspect(path:)`` and
/// ``OggOpusFileSource/init(path:channels:offset:)``. Damage *inside* the audio (bad CRC pages, holes,
/// undecodable packets) is not an error: it is concealed and counted while decoding.
///
/// `description` is `"<path>: <message>"`, where the message says what was wrong and what to do,
/// e.g. `bob.opus: not an Ogg file (no OggS capture pattern at the start); give an Ogg Opus file (.opus)`.
public struct IngestError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The kind of problem, for programs that decide policy (exit codes, skipping a file).
    public enum Reason: Sendable, Equatable {
        /// No file at the path.
        case fileNotFound
        /// The path is a directory, or the file cannot be opened or read (permissions, I/O error).
        case unreadable
        /// The file does not start with an Ogg page (or is empty).
        case notOgg
        /// An Ogg file, but no logical stream in it starts with an `OpusHead` packet.
        case notOpus
        /// An `OpusHead`/`OpusTags` is present but invalid, or the header pages are damaged.
        case badHeader
        /// The file ends inside the headers or right after them, before any audio.
        case truncated
        /// A valid Ogg Opus file that roomtap cannot decode (more than two channels, surround mappings).
        case unsupported
    }

    /// The kind of problem.
    public let reason: Reason
    /// The path as given by the caller.
    public let path: String
    /// One line, without the path: what was wrong and what to do.
    public let message: String

    /// Creates an error.
    public init(_ reason: Reason, path: String, message: String) {
        self.reason = reason
        self.path = path
        self.message = message
    }

    /// `"<path>: <message>"`.
    public var description: String { "\(path): \(message)" }
}
