import Glibc

/// Why an output file (a recording, a report, a journal, a download) could not be created,
/// written, synced, closed or put in place. Format-neutral: the FLAC, Ogg Opus and raw-WAV
/// encoders and every atomic write throw it; ``WAVError`` stays for what is about the WAV format.
///
/// `description` is one line, `<path>: <message>`, and the message says what to do (free disk
/// space, create the directory, pass --force), so a command-line tool can print it as is.
public struct OutputFileError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, for callers that react differently (e.g. an exit status).
    public enum Kind: Sendable, Equatable {
        /// The file exists and overwriting was not asked for.
        case alreadyExists
        /// The file could not be created or opened (missing directory, permission, not a regular file).
        case cannotOpen
        /// A write, fsync, close or rename failed, e.g. the disk is full.
        case writeFailed
        /// The caller passed a value the writer refuses (e.g. 3 channels), or an encoder library did.
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

    /// Creates an error; newlines in `path` and `message` become spaces.
    public init(path: String, message: String, kind: Kind, errno: Int32? = nil) {
        self.path = Self.oneLine(path)
        self.message = Self.oneLine(message)
        self.kind = kind
        self.errno = errno
    }

    /// The failure of the system call `doing` (e.g. "fsync", "writing the header") on `path`:
    /// `<doing> failed: <strerror>; free disk space` for ENOSPC/EDQUOT, `; check the disk` otherwise.
    public static func failed(_ code: Int32, path: String, doing what: String) -> OutputFileError {
        OutputFileError(
            path: path, message: "\(what) failed: \(describe(code)); \(hint(code))", kind: .writeFailed, errno: code)
    }

    /// What to do about `code`: "free disk space" for a full disk or quota, "check the disk" otherwise.
    public static func hint(_ code: Int32) -> String {
        code == ENOSPC || code == EDQUOT ? "free disk space" : "check the disk"
    }

    /// strerror(3) of `code` ("No space left on device").
    public static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// `<path>: <message>`, on one line.
    public var description: String { "\(path): \(message)" }

    static func oneLine(_ text: String) -> String { String(text.map { $0.isNewline ? " " : $0 }) }
}
