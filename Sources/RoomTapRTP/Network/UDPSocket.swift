import Foundation
import RoomTapSync
import Synchronization

/// A bound UDP socket for receiving RTP/RTCP (one per listen address).
///
/// Thread: `receive` from one receive thread (``RTPReceiver`` reads the descriptor itself, with
/// `recvmmsg`, and does not call `receive`); `close` from any thread makes `receive` return nil
/// (at once where the kernel wakes the poll on shutdown, else within its timeout). The descriptor
/// itself is closed when the socket object goes, so a receive racing with `close` never touches a
/// reused descriptor. No allocation per datagram: `receive` writes into the caller's buffer.
public final class UDPSocket: @unchecked Sendable {
    /// The address the socket is bound to. Port 0 asks the kernel for a free port; this then holds
    /// the port it chose.
    public let address: ListenAddress
    /// The descriptor, open for the socket object's lifetime (`close` only shuts it down).
    let fd: Int32
    /// Set once by ``close()``.
    private let closed = Locked(false)
    private let receivedCount = Atomic<Int>(0)

    /// A bind failure, as one line that says what to do.
    public struct BindError: Error, CustomStringConvertible, Sendable {
        public let address: ListenAddress
        public let reason: String
        public var description: String { "cannot listen on \(address): \(reason)" }
    }

    /// Creates and binds a UDP socket with a large receive buffer (4 MiB requested).
    public init(address: ListenAddress) throws(BindError) {
        guard let socketAddress = SocketAddress(address) else {
            throw BindError(address: address, reason: "not a numeric IP address")
        }
        let fd = socket(socketAddress.family, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BindError(address: address, reason: String(cString: strerror(errno))) }
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let result = socketAddress.withSockaddr { bind(fd, $0, $1) }
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
        self.address = address.port == 0 ? ListenAddress(host: address.host, port: Self.boundPort(fd)) : address
    }

    /// The port `fd` is bound to (getsockname), 0 if unknown.
    private static func boundPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return 0 }
        return withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset (2), in network byte order.
            UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        }
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
        if n > 0 { noteReceived(1) }
        return n
    }

    /// Datagrams read from this socket so far (RTP, RTCP and invalid ones alike; empty ones not),
    /// by ``receive`` or by an ``RTPReceiver``. Any thread.
    public var datagramsReceived: Int { receivedCount.load(ordering: .relaxed) }

    /// Counts `count` datagrams read from the socket. The reading thread; no allocation.
    func noteReceived(_ count: Int) { receivedCount.add(count, ordering: .relaxed) }

    /// True after `close`.
    public var isClosed: Bool {
        closed.withLock { $0 }
    }

    /// Stops receiving: marks the socket closed and shuts it down (waking a receiver). Idempotent.
    public func close() {
        closed.withLock { closed in
            guard !closed else { return }
            closed = true
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }
}
