import Glibc

/// Creating an output file the way every roomtap writer does: never through a symbolic link
/// (O_NOFOLLOW), an existing file refused (O_EXCL) unless `overwrite`, a FIFO or device refused.
enum OutputFile {
    /// Opens `path` for writing and returns the descriptor. Throws the same one-line
    /// ``WAVError``s as ``WAVWriter`` (`.alreadyExists` leaves the file untouched).
    static func create(path: String, overwrite: Bool) throws(WAVError) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | (overwrite ? O_TRUNC : O_EXCL)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw WAVWriter.openError(path: path, code: errno) }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            _ = Glibc.close(fd)
            throw WAVError(
                path: path, message: "is not a regular file; choose a file path for --out", kind: .cannotOpen)
        }
        return fd
    }

    /// write(2) of all of `count` bytes; 0 or the errno.
    static func writeAll(fd: Int32, _ bytes: UnsafeRawPointer, count: Int) -> Int32 {
        var done = 0
        while done < count {
            let n = Glibc.write(fd, bytes + done, count - done)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += n
        }
        return 0
    }

    /// The failure of `doing` on `path` as one line with what to do.
    static func failure(_ code: Int32, path: String, doing what: String) -> WAVError {
        let hint = code == ENOSPC || code == EDQUOT ? "free disk space" : "check the disk"
        return WAVError(
            path: path, message: "\(what) failed: \(PosixFile.describe(code)); \(hint)", kind: .writeFailed,
            errno: code)
    }
}
