import Foundation
import RoomTapSync
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on 127.0.0.1 (a port the kernel picks) in front of a server on loopback (the S3
/// test server), that a test tells to misbehave while a client uses it:
///
/// - ``Mode/pass``: bytes flow both ways.
/// - ``Mode/refuse``: a new connection is accepted and reset at once (no byte of it reaches the
///   server: the client sees the connection dropped before any answer).
/// - ``Mode/stall(afterBytes:)``: every connection, new or open, forwards at most `afterBytes`
///   more bytes of the client's request, then nothing moves on it until the mode changes; the
///   bytes wait (a store that hangs mid-transfer; 0: at once). Back to `pass`, the transfers go on.
/// - ``Mode/cut(afterBytes:)``: every connection forwards at most `afterBytes` more bytes of the
///   client's request, then both sides are reset (a transfer cut mid-body).
///
/// The counters say what was done (connections accepted, refused, cut; connections that found
/// the proxy stalled), so a test waits for a fault to have happened, never for a time.
/// Each connection has a thread of its own (poll over both sockets, 20 ms at most between looks
/// at the mode). Thread: any; `stop()` (and deinit) close the listener and every connection.
public final class FaultProxy: Sendable {
    public enum Mode: Sendable, Equatable {
        case pass
        case refuse
        case stall(afterBytes: Int)
        case cut(afterBytes: Int)
        /// Every new connection gets this HTTP status (an S3 error document with `code`) to its
        /// request instead of the server's answer (a store that fails: 500 InternalError, 503
        /// SlowDown). Its request's head is read first; a body is not.
        case answer(status: Int, code: String)
    }

    /// What the proxy did so far.
    public struct Counts: Sendable, Equatable {
        public var accepted = 0
        public var refused = 0
        public var cut = 0
        /// Connections held by a stall (each counted once per stall).
        public var stalled = 0
        /// Bytes forwarded client → server.
        public var bytesUp = 0
        /// Requests given the ``Mode/answer(status:code:)`` answer.
        public var answered = 0
    }

    public let port: UInt16
    /// `http://127.0.0.1:PORT`.
    public var endpoint: String { "http://127.0.0.1:\(port)" }
    private let listener: Int32
    private let upstream: UInt16
    private let state = Locked<(mode: Mode, counts: Counts, open: Set<Int32>, stopped: Bool)>(
        (.pass, Counts(), [], false))

    /// A proxy to 127.0.0.1:`upstreamPort`.
    public init(upstreamPort: UInt16) throws {
        do { listener = try TestTCP.listen(port: 0) } catch { throw error }
        port = TestTCP.boundPort(listener)
        upstream = upstreamPort
        let listener = self.listener
        TestTCP.thread("fault-proxy") { [self] in
            while true {
                let client = TestTCP.accept(listener)
                guard client >= 0 else { return }
                let (mode, stopped) = state.withLock { s -> (Mode, Bool) in
                    s.counts.accepted += 1
                    if s.mode == .refuse { s.counts.refused += 1 }
                    return (s.mode, s.stopped)
                }
                if stopped || mode == .refuse {
                    Self.reset(client)
                    continue
                }
                if case .answer(let status, let code) = mode {
                    TestTCP.thread("fault-proxy-answer") { [self] in
                        // readHead closes `client` itself when the peer ends first.
                        guard TestTCP.readHead(client, limit: 64 << 10) != nil else { return }
                        do {
                            let body =
                                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code>"
                                + "<Message>the fault proxy answers \(status)</Message></Error>"
                            let head =
                                "HTTP/1.1 \(status) Fault\r\nContent-Type: application/xml\r\n"
                                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                            state.withLock { $0.counts.answered += 1 }  // before the client can see it
                            _ = TestTCP.sendAll(client, Array((head + body).utf8))
                        }
                        close(client)
                    }
                    continue
                }
                TestTCP.thread("fault-proxy-conn") { [self] in serve(client) }
            }
        }
    }

    /// A proxy in front of `server`'s S3 port.
    public convenience init(inFrontOf server: S3TestServer) throws {
        guard let port = server.endpoint.split(separator: ":").last.flatMap({ UInt16($0) }) else {
            throw TestTCP.Failure(description: "no port in \(server.endpoint)")
        }
        try self.init(upstreamPort: port)
    }

    deinit { stop() }

    /// What the proxy does from now on (open connections included).
    public func set(_ mode: Mode) { state.withLock { $0.mode = mode } }

    public var mode: Mode { state.withLock { $0.mode } }

    public var counts: Counts { state.withLock { $0.counts } }

    /// Closes the listener and resets every open connection. Idempotent.
    public func stop() {
        let open = state.withLock { s -> Set<Int32> in
            guard !s.stopped else { return [] }
            s.stopped = true
            return s.open
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Closes `fd` with a reset (SO_LINGER 0), as a crashed or refusing server does.
    private static func reset(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(fd)
    }

    /// Moves bytes between `client` and a new connection to the server until either side ends
    /// or the mode cuts it.
    private func serve(_ client: Int32) {
        let server = TestTCP.connect(port: upstream)
        guard server >= 0 else {
            Self.reset(client)
            return
        }
        state.withLock {
            $0.open.insert(client)
            $0.open.insert(server)
        }
        defer {
            state.withLock {
                $0.open.remove(client)
                $0.open.remove(server)
            }
        }
        var budget: Int?  // bytes up left before a cut, once a cut mode applies
        var stallBudget: Int?  // bytes up left before a stall holds, once a stall mode applies
        var countedStall = false
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let (mode, stopped) = state.withLock { ($0.mode, $0.stopped) }
            if stopped { break }
            if case .cut(let after) = mode, budget == nil { budget = after }
            if case .stall(let after) = mode {
                if stallBudget == nil { stallBudget = after }
            } else {
                stallBudget = nil
                countedStall = false
            }
            if let left = stallBudget, left <= 0 {
                if !countedStall {
                    countedStall = true
                    state.withLock { $0.counts.stalled += 1 }
                }
                // The bytes wait in the kernel's buffers; look at the mode again in 20 ms.
                var none = [pollfd(fd: client, events: 0, revents: 0)]
                _ = poll(&none, 1, 20)
                continue
            }
            var fds = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, 20)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var ended = false
            for (index, (from, to)) in [(client, server), (server, client)].enumerated()
            where fds[index].revents != 0 {
                var want = buffer.count
                if index == 0, let left = budget { want = min(want, max(left, 0)) }
                if index == 0, let left = stallBudget { want = min(want, left) }
                if want == 0 {
                    state.withLock { $0.counts.cut += 1 }
                    Self.reset(client)
                    Self.reset(server)
                    return
                }
                let n = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, want, 0) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    ended = true
                    break
                }
                if index == 0 {
                    budget = budget.map { $0 - n }
                    stallBudget = stallBudget.map { $0 - n }
                    state.withLock { $0.counts.bytesUp += n }
                }
                guard TestTCP.sendAll(to, Array(buffer[0..<n])) else {
                    ended = true
                    break
                }
            }
            if ended { break }
        }
        close(client)
        close(server)
    }
}
