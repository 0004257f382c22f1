import Foundation
import RoomTapSync
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A tiny HTTP CONNECT proxy on 127.0.0.1 for tests (RFC 9110 section 9.3.6): it records each
/// CONNECT target, connects to it (loopback ports only: `127.0.0.1:<port>` or
/// `localhost:<port>`), answers `200 Connection established` and relays bytes both ways.
/// Other requests get `405`. Threads: one accept thread, two relay threads per tunnel; the
/// members may be called from any thread.
public final class ConnectProxyTestServer: Sendable {
    /// The port the proxy listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`, for `WebSocketConfiguration.proxy` or `https_proxy`.
    public var url: String { "http://127.0.0.1:\(port)" }

    private let listener: Int32
    private let requests = Locked<[String]>([])
    private let stopped = Locked(false)

    /// Starts listening on 127.0.0.1:`port`.
    public init(port: UInt16 = 0) throws {
        listener = try TestTCP.listen(port: port)
        self.port = TestTCP.boundPort(listener)
        let listener = listener
        TestTCP.thread("proxy-test.accept") { [self] in
            while true {
                let fd = TestTCP.accept(listener)
                if fd < 0 || stopped.withLock({ $0 }) {
                    if fd >= 0 { close(fd) }
                    break
                }
                TestTCP.thread("proxy-test.conn") { [self] in serve(fd) }
            }
            close(listener)
        }
    }

    /// The request lines received (`CONNECT 127.0.0.1:28010 HTTP/1.1`), in order.
    public var requestLines: [String] { requests.snapshot(\.self) }

    /// The targets of the CONNECT requests received (`127.0.0.1:28010`), in order.
    public var connectTargets: [String] {
        requestLines.compactMap { line in
            let parts = line.split(separator: " ")
            return parts.count >= 2 && parts[0] == "CONNECT" ? String(parts[1]) : nil
        }
    }

    /// Stops accepting (tunnels already open keep relaying until either side ends). Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))  // wakes accept; the accept thread closes it (no reuse race)
    }

    private func serve(_ client: Int32) {
        guard let (head, early) = TestTCP.readHead(client, limit: 16 << 10) else { return }
        let requestLine = head.split(separator: "\r\n").first.map(String.init) ?? ""
        requests.withLock { $0.append(requestLine) }
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[0] == "CONNECT", let colon = parts[1].lastIndex(of: ":"),
            ["127.0.0.1", "localhost"].contains(parts[1][..<colon]), let port = UInt16(parts[1][colon...].dropFirst())
        else {
            TestTCP.sendAll(client, Array("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n".utf8))
            close(client)
            return
        }
        let upstream = TestTCP.connect(port: port)
        guard upstream >= 0 else {
            TestTCP.sendAll(client, Array("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n".utf8))
            close(client)
            return
        }
        TestTCP.sendAll(client, Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
        if !early.isEmpty { TestTCP.sendAll(upstream, early) }
        let done = DispatchSemaphore(value: 0)
        TestTCP.thread("proxy-test.up") {
            Self.relay(from: client, to: upstream)
            done.signal()
        }
        Self.relay(from: upstream, to: client)
        done.wait()
        close(client)
        close(upstream)
    }

    /// Copies until `source` ends, then ends `destination`'s write side.
    private static func relay(from source: Int32, to destination: Int32) {
        while true {
            let chunk = TestTCP.receive(source)
            if chunk.isEmpty || !TestTCP.sendAll(destination, chunk) { break }
        }
        shutdown(destination, Int32(SHUT_WR))
        shutdown(source, Int32(SHUT_RD))
    }
}
