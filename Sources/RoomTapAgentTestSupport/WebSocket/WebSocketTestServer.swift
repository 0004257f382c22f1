import Foundation
import RoomTapSync
import RoomTapTestSupport
import RoomTapWebSocket

#if canImport(Glibc)
    import Glibc
#endif

/// A real RFC 6455 WebSocket server on 127.0.0.1 for tests (POSIX sockets, its own framing, so it
/// checks the client independently of libwslay).
///
/// It accepts any number of connections, validates each upgrade request (GET, `Upgrade:
/// websocket`, `Connection: Upgrade`, `Sec-WebSocket-Version: 13`, a 16-byte key) and answers
/// `101` with the right `Sec-WebSocket-Accept`, or what ``Options`` say (another status with a
/// body, a wrong accept value, messages in the same TCP write as the 101). Then a test drives each
/// ``WebSocketTestConnection``: it records what the client sends, and sends, fragments, pings,
/// closes or drops on command.
///
/// ```swift
/// let server = try WebSocketTestServer()
/// defer { server.stop() }
/// let client = WebSocketClient(configuration: .init(url: server.url)) { _ in }
/// try client.connect()
/// let connection = try #require(server.waitForConnection(timeout: .seconds(5)))
/// client.send(text: "hi")
/// #expect(connection.waitForMessage(timeout: .seconds(5))?.message == .text("hi"))
/// ```
///
/// Threads: one accept thread and one reader thread per connection; `onConnection` and
/// `onMessage` run on the connection's reader thread (a handler may send on the connection).
/// Everything else may be called from any thread.
public final class WebSocketTestServer: Sendable {
    /// How the server answers upgrades.
    public struct Options: Sendable {
        /// The status of the answer; anything but 101 refuses the upgrade with `body`.
        public var status: Int = 101
        public var body: String = ""
        /// Decides per request: a status and body to refuse it with (such as 401 for a missing
        /// `Authorization`), or nil to go on (with `status`). Runs on the connection's thread.
        public var refuse: (@Sendable (WebSocketTestRequest) -> (status: Int, body: String)?)?
        /// Send this `Sec-WebSocket-Accept` instead of the right one.
        public var acceptOverride: String?
        /// Wait this long before answering an upgrade request (to test the client's timeout).
        public var responseDelay: Duration = .zero
        /// Messages sent in the same TCP write as the 101 response.
        public var messagesWithUpgrade: [WebSocketTestMessage] = []
        /// Echo every message back to the client.
        public var echo = false
        /// Answer pings with pongs (RFC 6455 requires it).
        public var answerPings = true
        /// Answer a close frame from the client with the same code and end the connection.
        public var answerClose = true

        public init() {}
    }

    /// The port the server listens on.
    public let port: UInt16
    /// `ws://127.0.0.1:<port>/`.
    public var url: String { "ws://127.0.0.1:\(port)/" }

    let options: Options
    private let listener: Int32
    private let connectionList = Locked<[WebSocketTestConnection]>([])
    private let upgradeRequestList = Locked<[String]>([])
    private let stopped = Locked(false)
    let onConnection: (@Sendable (WebSocketTestConnection) -> Void)?
    let onMessage: (@Sendable (WebSocketTestConnection, WebSocketTestMessage) -> Void)?

    /// Starts listening on 127.0.0.1:`port` (by default a free port the kernel picks: read it back
    /// from ``port`` or ``url``).
    ///
    /// - Parameters:
    ///   - onConnection: called on the reader thread after the 101 went out, before any frame.
    ///   - onMessage: called on the reader thread for every complete message (after recording it).
    public init(
        port: UInt16 = 0, options: Options = Options(),
        onConnection: (@Sendable (WebSocketTestConnection) -> Void)? = nil,
        onMessage: (@Sendable (WebSocketTestConnection, WebSocketTestMessage) -> Void)? = nil
    ) throws {
        self.options = options
        self.onConnection = onConnection
        self.onMessage = onMessage
        listener = try TestTCP.listen(port: port)
        self.port = port == 0 ? TestTCP.boundPort(listener) : port
        let listener = listener
        TestTCP.thread("ws-test.accept") { [self] in
            while true {
                let fd = TestTCP.accept(listener)
                if fd < 0 { break }
                if stopped.withLock({ $0 }) {
                    close(fd)
                    break
                }
                TestTCP.thread("ws-test.conn") { [self] in serve(fd) }
            }
            close(listener)
        }
    }

    /// Stops accepting and drops every connection (without close frames). Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))  // wakes accept; the accept thread closes it (no reuse race)
        for connection in connections { connection.drop() }
    }

    /// The connections that completed the upgrade, in order.
    public var connections: [WebSocketTestConnection] { connectionList.snapshot(\.self) }

    /// Every upgrade request head received (including refused ones), in order.
    public var upgradeRequests: [String] { upgradeRequestList.snapshot(\.self) }

    /// Waits for the `index`-th upgraded connection (0 = the first).
    public func waitForConnection(index: Int = 0, timeout: Duration) -> WebSocketTestConnection? {
        var found: WebSocketTestConnection?
        _ = waitUntil(timeout: timeout) {
            found = connectionList.withLock { $0.count > index ? $0[index] : nil }
            return found != nil
        }
        return found
    }

    private func serve(_ fd: Int32) {
        guard let (head, leftover) = TestTCP.readHead(fd, limit: 64 << 10) else { return }
        upgradeRequestList.withLock { $0.append(head) }
        let request = WebSocketTestRequest(head: head)
        guard let key = request.validKey else {
            TestTCP.sendAll(
                fd, Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            close(fd)
            return
        }
        if options.responseDelay > .zero {
            _ = waitUntil(timeout: options.responseDelay) { stopped.withLock { $0 } }
        }
        let refusal = options.refuse?(request) ?? (options.status == 101 ? nil : (options.status, options.body))
        if let (status, text) = refusal {
            let body = Array(text.utf8)
            let response =
                "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\nContent-Type: text/plain\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            TestTCP.sendAll(fd, Array(response.utf8) + body)
            shutdown(fd, Int32(SHUT_WR))
            _ = TestTCP.receive(fd)
            close(fd)
            return
        }
        let accept = options.acceptOverride ?? WebSocketHandshake.acceptValue(forKey: key)
        var response = Array(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
                .utf8)
        for message in options.messagesWithUpgrade { response += WebSocketFrame.encode(message) }
        let connection = WebSocketTestConnection(fd: fd, request: request, server: self)
        connectionList.withLock { $0.append(connection) }
        guard TestTCP.sendAll(fd, response) else {
            connection.drop()
            connection.readLoop(leftover: [])
            return
        }
        onConnection?(connection)
        connection.readLoop(leftover: leftover)
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}

/// A complete WebSocket data message.
public enum WebSocketTestMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// The upgrade request of a connection.
public struct WebSocketTestRequest: Sendable {
    /// The request head (request line and headers, without the blank line).
    public let head: String
    /// The request target (path and query), e.g. "/v1/realtime?model=x".
    public let target: String
    /// The headers in order (names as sent).
    public let headers: [(name: String, value: String)]

    init(head: String) {
        self.head = head
        var lines = head.split(separator: "\r\n").map(String.init)
        let requestLine = lines.isEmpty ? [] : lines.removeFirst().split(separator: " ")
        target = requestLine.count >= 2 && requestLine[0] == "GET" ? String(requestLine[1]) : ""
        headers = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                String(line[..<colon]),
                String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            )
        }
    }

    /// The value of the first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The Sec-WebSocket-Key when the request is a valid RFC 6455 upgrade (section 4.2.1).
    var validKey: String? {
        guard !target.isEmpty, header("Upgrade")?.lowercased() == "websocket",
            header("Connection")?.lowercased().split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == "upgrade"
            }) == true,
            header("Sec-WebSocket-Version") == "13", header("Host") != nil,
            let key = header("Sec-WebSocket-Key"), Data(base64Encoded: key)?.count == 16
        else { return nil }
        return key
    }
}
