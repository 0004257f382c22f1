import RoomTapFiles

/// Why a WAV file could not be created, written, read or repaired.
///
/// `description` is one line, `<path>: <message>`, and the message says what to do about it, so a
/// command-line tool can print it as is. Newlines in the path or message are replaced by spaces.
public struct WAVError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, for callers that react differently (e.g. an exit status).
    public enum Kind: Sendable, Equatable {
        /// The file exists and overwriting was not asked for.
        case alreadyExists
        /// The file could not be created or opened (missing directory, permission, not a regular file).
        case cannotOpen
        /// A write (data or header) failed, e.g. the disk is full.
        case writeFailed
        /// A read failed.
        case readFailed
        /// The file is not a RIFF/RF64 WAVE file at all.
        case notAWAV
        /// The file is a WAV, but one this code does not read (e.g. not 16-bit PCM).
        case unsupportedFormat
        /// The header is damaged beyond repair (e.g. cut before the format chunk).
        case damaged
        /// The caller passed an invalid value (e.g. 3 channels).
        case invalidArgument
    }

    /// The file concerned.
    public let path: String
    /// One line: what happened and what to do.
    public let message: String
    /// The category.
    public let kind: Kind
    /// The `errno` of the failing system call, when there was one.
    public let errno: Int32?

    /// Creates an error; newlines in `message` become spaces.
    public init(path: String, message: String, kind: Kind, errno: Int32? = nil) {
        self.path = path
        self.message = WAVError.oneLine(message)
        self.kind = kind
        self.errno = errno
    }

    /// `<path>: <message>`, on one line.
    public var description: String { "\(WAVError.oneLine(path)): \(message)" }

    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    /// The same failure of an output file, for the WAV writer's callers (same path, message, errno).
    init(_ error: OutputFileError) {
        let kind: Kind =
            switch error.kind {
            case .alreadyExists: .alreadyExists
            case .cannotOpen: .cannotOpen
            case .writeFailed: .writeFailed
            case .invalidArgument: .invalidArgument
            }
        self.init(path: error.path, message: error.message, kind: kind, errno: error.errno)
    }
}
