import CCurl  // <sys/random.h>

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bytes from the system CSPRNG (`getrandom(2)` on Linux, `arc4random_buf` elsewhere) for the
/// handshake key and the frame masks (RFC 6455 section 5.3 asks for unpredictable masks).
enum SecureRandom {
    /// Fills `buffer`; any thread.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        #if os(Linux)
            var filled = 0
            while filled < buffer.count {
                let n = getrandom(base + filled, buffer.count - filled, 0)
                if n > 0 { filled += n } else if errno != EINTR { fatalError("getrandom failed: errno \(errno)") }
            }
        #else
            arc4random_buf(base, buffer.count)
        #endif
    }

    static func fill(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { fill($0) }
    }
}
