import Foundation

/// MD5 and SHA-256 of a byte range of a file, read in 1 MiB pieces (bounded memory whatever the size).
struct FileDigests: Sendable, Equatable {
    let md5: [UInt8]
    let sha256: [UInt8]
    let length: Int64

    /// Content-MD5's form: base64 of the MD5.
    var md5Base64: String { Data(md5).base64EncodedString() }

    /// Reads `length` bytes of `fd` from `offset` (pread: the descriptor's position is untouched).
    static func of(fd: Int32, offset: Int64, length: Int64) throws(S3Error) -> FileDigests {
        let md5 = Digest(.md5)
        let sha = Digest(.sha256)
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < length {
            let want = Int(min(Int64(chunk), length - done))
            let n = pread(fd, buffer.baseAddress, want, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw S3Error(
                    .local, "cannot read the file: " + (n < 0 ? String(cString: strerror(errno)) : "it got shorter"))
            }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[..<n])
            md5.update(piece)
            sha.update(piece)
            done += Int64(n)
        }
        return FileDigests(md5: md5.finish(), sha256: sha.finish(), length: length)
    }

    /// The digests of the whole file at `path`.
    static func of(path: String) throws(S3Error) -> FileDigests {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw S3Error(.local, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw S3Error(.local, "cannot stat \(path)") }
        return try of(fd: fd, offset: 0, length: Int64(info.st_size))
    }
}
