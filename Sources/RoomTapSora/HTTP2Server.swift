import CLinuxNet
import Foundation
import Glibc
import RoomTapCore
package import RoomTapRTP
import RoomTapSync

/// A small HTTP/2 server over cleartext TCP with prior knowledge (h2c, RFC 9113 §3.3,
/// https://www.rfc-editor.org/rfc/rfc9113#section-3.3): what Sora's audio streaming connects to
/// when `audio_streaming_url` is an `http://` URL. libnghttp2 does the protocol
/// (``HTTP2Connection``); this type binds, accepts and runs one poll loop.
///
/// One thread (`roomtap.h2`) serves every connection: it polls the listening socket, the
/// connections and an eventfd (``stop()``, ``wake()``), with a timeout at the earliest time a handler asked to
/// be served again, so handlers that pace their work (``HTTP2ServiceResult/wakeAt``) need no
/// thread of their own. At most ``maxConnections`` clients at once; more are closed on accept.
///
/// Thread: `init`, ``start()`` and ``stop()`` from any thread (stop waits for the loop to end);
/// the delegate and every handler on the server's thread.
package final class HTTP2Server: @unchecked Sendable {
    /// Clients served at once.
    package static let maxConnections = 256

    /// Why the server cannot listen.
    package struct BindError: Error, CustomStringConvertible {
        package let description: String
    }

    /// The bound address (port 0 becomes the kernel's choice).
    package let address: ListenAddress
    private let listenFD: Int32
    private let wakeFD: Int32
    private unowned let delegate: any HTTP2ServerDelegate
    private let stopping = Locked(false)
    private let started = Locked(false)
    /// The thread, once started; joined when it is stopped.
    private let serverThread = Locked<RoomThread?>(nil)
    private let tls: TLSServerContext?
    private var connections: [HTTP2Connection] = []

    /// Binds and listens on `address` (numeric IPv4 or IPv6); with `tls`, every connection is
    /// HTTP/2 over TLS (``TLSServerContext``). Throws a one-line reason.
    package init(address: ListenAddress, delegate: any HTTP2ServerDelegate, tls: TLSServerContext? = nil)
        throws(BindError)
    {
        self.delegate = delegate
        self.tls = tls
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BindError(description: "cannot open a TCP socket: \(Self.reason())") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = sockaddr_storage()
        var length: socklen_t
        if address.isIPv6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = address.port.bigEndian
            _ = inet_pton(AF_INET6, address.host, &a.sin6_addr)
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = address.port.bigEndian
            _ = inet_pton(AF_INET, address.host, &a.sin_addr)
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        // Non-blocking: the loop accepts every waiting client, then goes back to poll.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard bound == 0, listen(fd, 64) == 0 else {
            let reason = Self.reason()
            Glibc.close(fd)
            throw BindError(description: "cannot listen on \(address): \(reason)")
        }
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = withUnsafeBytes(of: storage) { raw -> UInt16 in
            // sin_port and sin6_port sit at the same offset, in network order.
            UInt16(raw[2]) << 8 | UInt16(raw[3])
        }
        let wake = roomtap_eventfd_create()
        guard wake >= 0 else {
            Glibc.close(fd)
            throw BindError(description: "cannot create an eventfd: \(Self.reason())")
        }
        listenFD = fd
        wakeFD = wake
        self.address = ListenAddress(host: address.host, port: port)
    }

    deinit {
        Glibc.close(listenFD)
        Glibc.close(wakeFD)
    }

    /// Starts the server's thread. Idempotent.
    package func start() {
        guard
            !started.withLock({ s in
                defer { s = true }
                return s
            })
        else { return }
        serverThread.withLock { thread in
            thread = RoomThread.start("roomtap.h2") { [self] in
                serve()
            }
        }
    }

    /// Closes every connection (their open requests are cancelled) and ends the thread; returns
    /// when it has ended. Idempotent.
    package func stop() {
        guard
            !stopping.withLock({ s in
                defer { s = true }
                return s
            })
        else { return }
        _ = roomtap_eventfd_signal(wakeFD)
        if started.withLock({ $0 }) { serverThread.withLock { $0 }?.join() }
    }

    /// Serves every handler at once (something a handler waits for has come from another
    /// thread). Any thread; never blocks.
    package func wake() { _ = roomtap_eventfd_signal(wakeFD) }

    // MARK: - The loop (server thread)

    private func serve() {
        var fds: [pollfd] = []
        while !stopping.withLock({ $0 }) {
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0))
            for c in connections {
                fds.append(pollfd(fd: c.fd, events: Int16(POLLIN) | (c.wantsWrite ? Int16(POLLOUT) : 0), revents: 0))
            }
            let now = MonotonicClock.now.nanoseconds
            let wake = connections.compactMap(\.nextWake).min()
            let timeout: Int32 =
                wake.map { $0 <= now ? 0 : Int32(min(1_000, ($0 - now + 999_999) / 1_000_000)) } ?? 1_000
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno != EINTR { break }
            if fds[0].revents != 0 {
                // stop() (the loop condition ends it) or wake() (serve the handlers now).
                var count: UInt64 = 0
                _ = read(wakeFD, &count, MemoryLayout<UInt64>.size)
                if stopping.withLock({ $0 }) { continue }
            }
            if fds[1].revents & Int16(POLLIN) != 0 { acceptClients() }
            for (i, c) in connections.enumerated() where i + 2 < fds.count && fds[i + 2].revents != 0 {
                if fds[i + 2].revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 { c.readAvailable() }
                if fds[i + 2].revents & Int16(POLLOUT) != 0 { c.flush() }
            }
            let served = MonotonicClock.now.nanoseconds
            for c in connections { c.service(now: served) }
            connections.removeAll { $0.isClosed }
        }
        for c in connections { c.close(serverStopping: true) }
        connections.removeAll()
    }

    private func acceptClients() {
        while true {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listenFD, $0, &length)
                }
            }
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            guard connections.count < Self.maxConnections else {
                Glibc.close(fd)
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let session = tls?.makeSession()
            guard tls == nil || session != nil,
                let connection = HTTP2Connection(fd: fd, peer: Self.describe(peer), delegate: delegate, tls: session)
            else {
                Glibc.close(fd)
                continue
            }
            connections.append(connection)
            // Our SETTINGS go once the client preface is in (HTTP2Connection.flush).
        }
    }

    private static func describe(_ storage: sockaddr_storage) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var s = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &s) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
                    var addr = a.pointee.sin_addr
                    inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
                    return "\(Self.string(text)):\(UInt16(bigEndian: a.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &s) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                    var addr = a.pointee.sin6_addr
                    inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
                    return "[\(Self.string(text))]:\(UInt16(bigEndian: a.pointee.sin6_port))"
                }
            }
        default: return "?"
        }
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
