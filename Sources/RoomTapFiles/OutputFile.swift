import Glibc

/// The one owner of how roomtap creates and writes its output files: never through a symbolic
/// link (O_NOFOLLOW), an existing file refused (O_EXCL) unless overwriting, a FIFO or device
/// refused, every write complete (EINTR and short writes retried), fsync and close checked, and
/// files that must never be seen half-written put in place atomically
/// (``writeAtomically(path:bytes:overwrite:)``, or streaming, ``Replacement``). Every failure is a
/// one-line ``OutputFileError``.
///
/// Thread: any; a descriptor is used by one thread at a time. One writer per path at a time.
package enum OutputFile {
    /// Opens `path` for writing (mode 0644) and returns the descriptor, positioned at 0. Without
    /// `overwrite` an existing file (or link) is refused with `.alreadyExists` and left untouched;
    /// with it a regular file is truncated, but a symbolic link is still refused, never followed.
    package static func create(path: String, overwrite: Bool) throws(OutputFileError) -> Int32 {
        // O_NONBLOCK only keeps an existing FIFO from hanging the open (it is refused below).
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | (overwrite ? O_TRUNC : O_EXCL)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw openError(path: path, code: errno) }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            _ = Glibc.close(fd)
            throw OutputFileError(
                path: path, message: "is not a regular file; choose a file path for --out", kind: .cannotOpen)
        }
        return fd
    }

    /// write(2) of all `count` bytes at the current offset, retried on EINTR and short writes;
    /// returns 0 or the errno (ENOSPC when the disk takes no byte at all).
    package static func writeAll(fd: Int32, _ bytes: UnsafeRawPointer, count: Int) -> Int32 {
        var done = 0
        while done < count {
            let n = Glibc.write(fd, bytes + done, count - done)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return ENOSPC }
            done += n
        }
        return 0
    }

    /// pwrite(2) of all `count` bytes at `offset`, as ``writeAll(fd:_:count:)``.
    package static func writeAll(fd: Int32, _ bytes: UnsafeRawPointer, count: Int, at offset: Int64) -> Int32 {
        var done = 0
        while done < count {
            let n = pwrite(fd, bytes + done, count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return ENOSPC }
            done += n
        }
        return 0
    }

    /// fsync(2); 0 or the errno. EINVAL (a file system that cannot sync, e.g. some FUSE) counts as done.
    package static func sync(fd: Int32) -> Int32 {
        fsync(fd) == 0 || errno == EINVAL ? 0 : errno
    }

    /// close(2); 0 or the errno. EINTR counts as closed (Linux releases the descriptor anyway).
    package static func close(fd: Int32) -> Int32 {
        Glibc.close(fd) == 0 || errno == EINTR ? 0 : errno
    }

    /// Writes `bytes` to `path` so that a reader, or a crash, sees either the old file or all of
    /// the new one (a ``Replacement``: temporary file beside it, fsync, rename, fsync of the
    /// directory). Without `overwrite` an existing `path` is `.alreadyExists`. On failure `path`
    /// is untouched and no temporary file stays behind.
    package static func writeAtomically(path: String, bytes: [UInt8], overwrite: Bool = true) throws(OutputFileError) {
        let replacement = try Replacement.begin(path: path, overwrite: overwrite)
        let code = bytes.withUnsafeBytes { raw in
            raw.count == 0 ? 0 : writeAll(fd: replacement.fd, raw.baseAddress!, count: raw.count)
        }
        if code != 0 {
            replacement.abandon()
            throw .failed(code, path: path, doing: "writing")
        }
        try replacement.commit()
    }

    /// fsync(2) of `directory`, so that a rename in it survives a power cut. Best effort: a
    /// directory that cannot be opened or synced leaves the (already renamed) file as it is.
    package static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        _ = Glibc.close(fd)
    }

    /// The one-line error of a failed open(2) of `path` for writing, with what to do.
    package static func openError(path: String, code: Int32) -> OutputFileError {
        let reason = OutputFileError.describe(code)
        switch code {
        case EEXIST:
            return OutputFileError(
                path: path, message: "already exists; pass --force to overwrite it, or choose another --out",
                kind: .alreadyExists, errno: code)
        case ENOENT, ENOTDIR:
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
            return OutputFileError(
                path: path,
                message: "cannot create: \(reason); create the directory \(directory) first, or choose another --out",
                kind: .cannotOpen, errno: code)
        case EACCES, EPERM, EROFS:
            return OutputFileError(
                path: path, message: "cannot create: \(reason); choose a writable directory with --out",
                kind: .cannotOpen, errno: code)
        case EISDIR:
            return OutputFileError(
                path: path, message: "cannot create: \(reason); give a file name, not a directory, to --out",
                kind: .cannotOpen, errno: code)
        default:
            return OutputFileError(path: path, message: "cannot create: \(reason)", kind: .cannotOpen, errno: code)
        }
    }
}
