import Foundation

/// A bound UDP socket for receiving RTP/RTCP (one per listen address).
///
/// Thread: `receive` from one receive thread; `close` from any thread makes `receive` return nil
/// (at once where the kernel wakes the poll on shutdown, else within its timeout). The descriptor
/// itself is closed when the socket object goes, so a receive racing with `close` never touches a
/// reused descriptor. No allocation per datagram: `receive` writes into the caller's buffer.
public final class UDPSocket: @unchecked Sendable {
    /// The address the socket is bound to.
    public let address: ListenAddress
    private let fd: Int32
    private let closeLock = NSLock()
    private var closed = false

    /// A bind failure, as one line that says what to do.
    public struct BindError: Error, CustomStringConvertible, Sendable {
        public let address: ListenAddress
        public let reason: String
        public var description: String { "cannot listen on \(address): \(reason)" }
    }

    /// Creates and binds a UDP socket with a large receive buffer (4 MiB requested).
    public init(address: ListenAddress) throws(BindError) {
        self.address = address
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw BindError(address: address, reason: String(cString: strerror(errno))) }
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        if address.isIPv6 {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = address.port.bigEndian
            guard inet_pton(AF_INET6, address.host, &sa.sin6_addr) == 1 else {
                Foundation.close(fd)
                throw BindError(address: address, reason: "not a numeric IPv6 address")
            }
            result = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = address.port.bigEndian
            guard inet_pton(AF_INET, address.host, &sa.sin_addr) == 1 else {
                Foundation.close(fd)
                throw BindError(address: address, reason: "not a numeric IPv4 address")
            }
            result = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            Foundation.close(fd)
            let reason =
                code == EADDRINUSE
                ? "the port is already in use (another recorder or program holds it); choose another --listen port"
                : String(cString: strerror(code))
            throw BindError(address: address, reason: reason)
        }
        self.fd = fd
    }

    deinit {
        close()
        Foundation.close(fd)
    }

    /// Waits up to `timeoutMilliseconds` for a datagram and copies it into `buffer`. Returns its
    /// length (datagrams longer than the buffer are truncated to it), 0 on timeout, nil once closed.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> Int? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, timeoutMilliseconds)
        if isClosed { return nil }
        guard ready > 0 else { return ready == 0 || errno == EINTR ? 0 : nil }
        let n = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
        if n < 0 { return isClosed ? nil : 0 }
        return n
    }

    /// True after `close`.
    public var isClosed: Bool {
        closeLock.lock()
        defer { closeLock.unlock() }
        return closed
    }

    /// Stops receiving: marks the socket closed and shuts it down (waking a receiver). Idempotent.
    public func close() {
        closeLock.lock()
        defer { closeLock.unlock() }
        guard !closed else { return }
        closed = true
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
