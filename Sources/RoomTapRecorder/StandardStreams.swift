import Foundation

/// Writes to stdout and stderr that never stop the process. `main.swift` ignores SIGPIPE, so when
/// the reader of a stream goes away (a closed terminal, `roomtap record ... 2>&1 | tee log` with
/// `tee` killed) a write fails with EPIPE instead of killing a recorder mid-meeting; a failed write
/// is dropped here (Foundation's `FileHandle.write(_: Data)` would trap on it). Thread: any; a
/// text goes out in as few write(2) calls as the kernel takes, retried on EINTR and short writes.
enum StandardStreams {
    /// Writes all of `text` to `descriptor`; false when a write fails (the text is then dropped).
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            bytes = bytes.dropFirst(n)
        }
        return true
    }

    /// `text` to stdout; a failed write (a full disk, a closed pipe) throws, so the command exits 1.
    static func output(_ text: String) throws {
        guard write(text, to: STDOUT_FILENO) else {
            throw RuntimeError(description: "cannot write to standard output: \(String(cString: strerror(errno)))")
        }
    }

    /// `text` to stderr, dropped if stderr is gone.
    static func error(_ text: String) { write(text, to: STDERR_FILENO) }
}
