import Glibc
import RoomTapFiles

/// A file descriptor with the few system calls the WAV code needs (pread, pwrite, ftruncate,
/// fstat), each retried on `EINTR` and turned into a ``WAVError`` on failure.
///
/// Thread: confined to one thread at a time. Not closed automatically: call ``close()``.
struct PosixFile {
    let fd: Int32
    let path: String

    /// Opens an existing file for reading (`forUpdate` false) or reading and writing.
    static func open(path: String, forUpdate: Bool) throws(WAVError) -> PosixFile {
        // O_NONBLOCK: opening a FIFO must not hang; it is refused below. No effect on regular files.
        let fd = Glibc.open(path, (forUpdate ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            let hint = code == ENOENT ? "check the path" : "check the path and its permissions"
            throw WAVError(
                path: path, message: "cannot open: \(PosixFile.describe(code)); \(hint)", kind: .cannotOpen,
                errno: code)
        }
        let file = PosixFile(fd: fd, path: path)
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            file.close()
            throw WAVError(
                path: path, message: "is not a regular file; give the path of a .wav file", kind: .cannotOpen)
        }
        return file
    }

    /// The file's size in bytes.
    func size() throws(WAVError) -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot read the file size", kind: .readFailed) }
        return Int64(info.st_size)
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int64, count: Int) throws(WAVError) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        var failed: Int32 = 0
        bytes.withUnsafeMutableBytes { raw in
            while done < count {
                let n = pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = errno
                    return
                }
                if n == 0 { return }
                done += n
            }
        }
        if failed != 0 { throw failure("read failed", kind: .readFailed, code: failed) }
        if done < count { bytes.removeLast(count - done) }
        return bytes
    }

    /// Writes all of `bytes` at `offset` (pwrite; the file offset does not move).
    func write(_ bytes: [UInt8], at offset: Int64) throws(WAVError) {
        let code = bytes.withUnsafeBytes { PosixFile.pwriteAll(fd: fd, $0, at: offset) }
        if code != 0 { throw failure("write failed", kind: .writeFailed, code: code) }
    }

    /// Cuts (or extends) the file to `size` bytes.
    func truncate(to size: Int64) throws(WAVError) {
        while ftruncate(fd, off_t(size)) != 0 {
            if errno != EINTR { throw failure("cannot truncate", kind: .writeFailed) }
        }
    }

    func close() { _ = Glibc.close(fd) }

    /// pwrite(2) until every byte is written; returns 0 or the errno of the failure.
    static func pwriteAll(fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Int32 {
        bytes.count == 0 ? 0 : OutputFile.writeAll(fd: fd, bytes.baseAddress!, count: bytes.count, at: offset)
    }

    /// `strerror` for `code`.
    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    private func failure(_ what: String, kind: WAVError.Kind, code: Int32 = errno) -> WAVError {
        WAVError(path: path, message: "\(what): \(PosixFile.describe(code))", kind: kind, errno: code)
    }
}
