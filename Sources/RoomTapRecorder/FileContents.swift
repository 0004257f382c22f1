import Foundation

/// The bytes of a file the user named (or a recording's own file), with a one-line error that
/// says what is at the path instead: a directory, a file that cannot be read (and why), never
/// Foundation's text or an errno the path does not explain.
///
/// Thread: any; reads only.
enum FileContents {
    /// Reads the whole regular file at `path`; `what` names it in errors ("a room.json", "a
    /// transcript"). Nothing at `path` is `nil`: the caller says what that means.
    static func readIfPresent(_ path: String, what: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw RuntimeError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw RuntimeError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw RuntimeError(description: "\(path) is a directory, not \(what)")
        default: throw RuntimeError(description: "\(path) is not a regular file, so it cannot be \(what)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: 65536)) }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw RuntimeError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return bytes
    }
}
