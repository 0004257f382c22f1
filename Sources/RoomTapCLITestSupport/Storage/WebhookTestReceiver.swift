import Foundation
import RoomTapSync
import RoomTapTestSupport

/// A tiny HTTP/1.1 server on 127.0.0.1 (a port the kernel picks) that takes webhook POSTs and
/// keeps each request's event header, signature header and raw body. The first `failFirst`
/// requests get `503`, the rest `200`, so a test can watch the sender retry. One connection at a
/// time on its own thread; `Connection: close` after each answer. Thread: any.
public final class WebhookTestReceiver: Sendable {
    /// One request as it arrived.
    public struct Request: Sendable {
        public let method: String
        public let path: String
        /// Header names in lower case.
        public let headers: [String: String]
        public let body: [UInt8]
    }

    public let port: UInt16
    private let listener: Int32
    private let state = Locked<(requests: [Request], toFail: Int, answered: Int)>(([], 0, 0))

    public init(failFirst: Int = 0) throws {
        do { listener = try TestTCP.listen(port: 0) } catch { throw error }
        port = TestTCP.boundPort(listener)
        state.withLock { $0.toFail = failFirst }
        let listener = self.listener
        let state = self.state
        TestTCP.thread("webhook-test") {
            while true {
                let fd = TestTCP.accept(listener)
                guard fd >= 0 else { return }
                Self.serve(fd, state: state)
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// `http://127.0.0.1:PORT/hook`.
    public var url: String { "http://127.0.0.1:\(port)/hook" }

    /// The requests answered 200 so far, in order.
    public var delivered: [Request] { state.withLock { s in Array(s.requests) } }

    /// Requests of any answer so far.
    public var answered: Int { state.withLock { $0.answered } }

    private static func serve(_ fd: Int32, state: Locked<(requests: [Request], toFail: Int, answered: Int)>) {
        defer { close(fd) }
        guard let (method, path, headers, body) = TestTCP.readRequest(fd) else { return }
        let fail = state.withLock { s -> Bool in
            s.answered += 1
            if s.toFail > 0 {
                s.toFail -= 1
                return true
            }
            s.requests.append(Request(method: method, path: path, headers: headers, body: body))
            return false
        }
        let status = fail ? "503 Service Unavailable" : "200 OK"
        TestTCP.sendAll(fd, Array("HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
    }
}
