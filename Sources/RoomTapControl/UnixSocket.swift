#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Small helpers over the socket calls both ends use. Internal.
enum UnixSocket {
    /// `sockaddr_un` for `path`, or nil when the path does not fit.
    static func address(_ path: String) -> sockaddr_un? {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= ControlSocketPath.maxPathBytes, !bytes.contains(0) else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A new stream socket, close-on-exec; nonblocking when asked. -1 and errno on failure.
    static func makeSocket(nonblocking: Bool) -> Int32 {
        #if os(Linux)
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return -1 }
        configure(fd, nonblocking: nonblocking)
        return fd
    }

    /// Close-on-exec, optionally nonblocking, and no SIGPIPE where the platform has a socket option.
    static func configure(_ fd: Int32, nonblocking: Bool) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if nonblocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// `connect` to `address`; 0 or -1 and errno.
    static func connect(_ fd: Int32, _ address: sockaddr_un) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// `bind` to `address`; 0 or -1 and errno.
    static func bind(_ fd: Int32, _ address: sockaddr_un) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemBind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// `listen`; 0 or -1 and errno.
    static func listen(_ fd: Int32, backlog: Int32) -> Int32 { systemListen(fd, backlog) }

    /// `send` that never raises SIGPIPE (MSG_NOSIGNAL on Linux, SO_NOSIGPIPE elsewhere).
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if os(Linux)
            return systemSend(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        #else
            return systemSend(fd, bytes.baseAddress, bytes.count, 0)
        #endif
    }

    /// The text of errno `code`.
    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}

private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

private func systemBind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(fd, address, length)
}

private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}

private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    listen(fd, backlog)
}
