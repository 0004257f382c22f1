/// Why a ``ControlServer`` could not listen. Each description is one line saying what to do.
public enum ControlSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path does not fit a Unix socket address (``ControlSocketPath/maxPathBytes``).
    case pathTooLong(path: String)
    /// The socket's directory is missing and cannot be created, is not a directory, or (the
    /// per-user default directory) is not private to this user.
    case directory(path: String, reason: String)
    /// Something other than a socket is at the path; it is left alone.
    case notASocket(path: String)
    /// A live server already answers at the path.
    case inUse(path: String)
    /// A system call failed.
    case system(path: String, call: String, reason: String)

    public var description: String {
        switch self {
        case .pathTooLong(let path):
            return "control socket path is \(path.utf8.count) bytes, more than the \(ControlSocketPath.maxPathBytes) "
                + "a Unix socket allows: \(path) (choose a shorter --control path)"
        case .directory(let path, let reason):
            return "cannot use \(path) for the control socket: \(reason)"
        case .notASocket(let path):
            return "\(path) exists and is not a socket; it was left alone (remove it or choose another --control path)"
        case .inUse(let path):
            return "another recorder is running at \(path) (stop it or choose another --control path)"
        case .system(let path, let call, let reason):
            return "cannot listen on the control socket \(path): \(call): \(reason)"
        }
    }
}

/// Why a ``ControlClient`` call failed. Each description is one line for the user.
public enum ControlClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens at the path (no socket there, or a stale one).
    case noRecorder(path: String)
    /// Connecting failed otherwise (permission, path too long, ...).
    case cannotConnect(path: String, reason: String)
    /// The recorder answered `ok: false`.
    case failure(code: ControlErrorCode, message: String)
    /// No reply within the timeout.
    case timeout(command: String)
    /// The recorder closed the connection (it stopped).
    case disconnected(path: String)
    /// The recorder sent something that is not a reply.
    case badReply(String)

    public var description: String {
        switch self {
        case .noRecorder(let path): return "no recorder at \(path); start one with roomtap record"
        case .cannotConnect(let path, let reason): return "cannot connect to the recorder at \(path): \(reason)"
        case .failure(_, let message): return message
        case .timeout(let command): return "the recorder did not answer \"\(command)\" in time; is it stuck?"
        case .disconnected(let path): return "the recorder at \(path) closed the connection (did it stop?)"
        case .badReply(let why): return "the recorder sent a reply this roomtap cannot read: \(why)"
        }
    }
}
