import Glibc

extension OutputFile {
    /// An atomic replace in progress, streaming form: the new contents go to ``fd``, a temporary
    /// file beside ``path`` (same directory, so the rename cannot cross file systems); ``commit()``
    /// fsyncs and closes it, renames it over ``path`` (replacing a link at `path`, never writing
    /// through it) and fsyncs the directory; ``abandon()`` removes it. Until the commit, `path`
    /// keeps its old contents (or stays absent).
    ///
    /// Thread: one thread at a time; one replacement per path at a time. Exactly one of
    /// ``commit()`` or ``abandon()`` is called (a failed commit has already abandoned).
    package struct Replacement: Sendable {
        /// The file being replaced.
        package let path: String
        /// The temporary file: `<directory>/.<name>.tmp-<pid>`.
        package let temporary: String
        /// Write-only descriptor of ``temporary``, at offset 0.
        package let fd: Int32

        /// Creates the temporary file (O_EXCL|O_NOFOLLOW, mode 0644; a leftover of a killed run
        /// with the same pid is removed first). Without `overwrite` an existing `path` is
        /// `.alreadyExists` (checked now; a file appearing before the commit is replaced).
        package static func begin(path: String, overwrite: Bool) throws(OutputFileError) -> Replacement {
            var info = stat()
            if !overwrite && lstat(path, &info) == 0 { throw openError(path: path, code: EEXIST) }
            let slash = path.lastIndex(of: "/")
            let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
            let temporary = (slash.map { String(path[...$0]) } ?? "") + ".\(name).tmp-\(getpid())"
            _ = unlink(temporary)  // a link is removed, not followed
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw openError(path: path, code: errno) }
            return Replacement(path: path, temporary: temporary, fd: fd)
        }

        /// fsync, close, rename over ``path``, fsync of the directory. On failure the temporary
        /// file is removed and `path` is as it was.
        package func commit() throws(OutputFileError) {
            let synced = OutputFile.sync(fd: fd)
            if synced != 0 {
                abandon()
                throw .failed(synced, path: path, doing: "fsync")
            }
            let closed = OutputFile.close(fd: fd)
            if closed != 0 {
                _ = unlink(temporary)
                throw .failed(closed, path: path, doing: "closing")
            }
            guard rename(temporary, path) == 0 else {
                let code = errno
                _ = unlink(temporary)
                throw .failed(code, path: path, doing: "renaming the new file into place")
            }
            let slash = path.lastIndex(of: "/")
            OutputFile.syncDirectory(slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? ".")
        }

        /// Closes and removes the temporary file; ``path`` is untouched. Idempotent.
        package func abandon() {
            _ = Glibc.close(fd)
            _ = unlink(temporary)
        }
    }
}
