#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the Ogg reader gets its bytes: a file, or memory (tests, the fuzzer).
///
/// Thread: confined to the reader that owns it.
package protocol ByteSource: AnyObject {
    /// Copies up to `buffer.count` bytes into `buffer`. Returns the count, 0 at the end, or -1 on a
    /// read error (the reader then treats the data as ending there). Does not allocate.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
}

/// A file read sequentially with POSIX `read(2)`, no buffering of its own (the Ogg sync layer
/// buffers). Closes the file on deinit.
package final class FileByteSource: ByteSource {
    private let fd: CInt
    private let ownsDescriptor: Bool
    /// The `errno` of the last failed read, or 0.
    package private(set) var lastError: CInt = 0

    /// Opens `path` for reading. Throws ``IngestError`` with `.fileNotFound` or `.unreadable`
    /// (a directory, no permission, any other `open(2)` failure).
    package init(path: String) throws(IngestError) {
        var st = stat()
        if stat(path, &st) != 0 {
            let e = errno
            if e == ENOENT || e == ENOTDIR {
                throw IngestError(.fileNotFound, path: path, message: "no such file; check the path")
            }
            throw IngestError(.unreadable, path: path, message: "cannot be read (\(Self.describe(e))); check the path")
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw IngestError(.unreadable, path: path, message: "is a directory; give an Ogg Opus file (.opus)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            throw IngestError(
                .unreadable, path: path, message: "cannot be read (\(Self.describe(e))); check its permissions")
        }
        self.fd = fd
        ownsDescriptor = true
    }

    /// Reads an open descriptor (standard input, a pipe), which stays open after this source.
    package init(descriptor: CInt) {
        fd = descriptor
        ownsDescriptor = false
    }

    deinit { if ownsDescriptor { close(fd) } }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = posixRead(fd, base, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            lastError = errno
            return -1
        }
    }

    /// `strerror` text for an errno value.
    package static func describe(_ code: CInt) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}

/// Bytes in memory, read front to back. The memory must outlive the source (it is not copied).
package final class MemoryByteSource: ByteSource {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    /// Reads from `bytes`, which the caller keeps alive and unchanged while this source is used.
    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, bytes.count - position)
        guard n > 0, let src = bytes.baseAddress, let dst = buffer.baseAddress else { return 0 }
        dst.copyMemory(from: src + position, byteCount: n)
        position += n
        return n
    }
}

@inline(__always)
private func posixRead(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
    #else
        Darwin.read(fd, buffer, count)
    #endif
}
