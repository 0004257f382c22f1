import Foundation
import Glibc
import RoomTapSync
import Synchronization

/// roomtap's one HTTP/1.1 server: the worker's and the recorder's `/metrics` (``MetricsServer``)
/// and the recorder's live page (`record --http`): plain requests answered at once, and event
/// streams (server-sent events, `text/event-stream`) that stay open and get every
/// ``publish(_:)``ed chunk and a ticker's chunk a few times a second.
///
/// One thread (`roomtap.http`) serves every client with `poll()` and nonblocking sockets, so no
/// client (a slow one, one that never sends its request, one that never reads its stream) can
/// hold up another, the recorder or the room clock. Bounds: ``maxClients`` at once (one more gets
/// 503), a request head of ``HTTPRequestHead/maxBytes``, a body of ``maxBodyBytes`` (413), a
/// request that takes longer than ``requestTimeout`` to arrive is answered 408 and closed; a
/// stream whose client does not read loses chunks past ``streamLimitBytes`` (counted), never
/// blocks. One request per connection (`Connection: close`). The handler runs on the server's
/// thread and must return promptly (it reads counters and atomics; it never waits on the room).
///
/// Thread: every public method from any thread.
public final class HTTPServer: Sendable {
    /// One request: its head, its body (`Content-Length` bytes) and the peer's IPv4 address.
    public struct Request: Sendable {
        public let head: HTTPRequestHead
        public let body: [UInt8]
        /// The peer's address, dotted IPv4.
        public let peer: String

        public init(head: HTTPRequestHead, body: [UInt8] = [], peer: String = "127.0.0.1") {
            self.head = head
            self.body = body
            self.peer = peer
        }
    }

    /// What a request gets. A stream keeps the connection open after `body`: every chunk given to
    /// ``HTTPServer/publish(_:)`` and every tick follows, until either side closes.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [Header]
        public var body: [UInt8]
        public var isStream: Bool

        /// One header field of a response (name and value as sent; no CR or LF in either).
        public struct Header: Sendable, Equatable {
            public var name: String
            public var value: String
            public init(_ name: String, _ value: String) {
                self.name = name
                self.value = value
            }
        }

        /// A whole response: status, `Content-Type`, body, more header fields.
        public init(status: Int, type: String, body: String, headers: [Header] = []) {
            self.status = status
            self.headers = [Header("Content-Type", type)] + headers
            self.body = Array(body.utf8)
            self.isStream = false
        }

        /// A stream of server-sent events starting with `first` (the events' text, or empty).
        public static func eventStream(first: String, headers: [Header] = []) -> Response {
            var response = Response(
                status: 200, type: "text/event-stream; charset=utf-8", body: first, headers: headers)
            response.isStream = true
            return response
        }
    }

    public typealias Handler = @Sendable (Request) -> Response

    /// Counters, readable from any thread.
    public final class Statistics: Sendable {
        let acceptedCount = Atomic<Int>(0)
        let rejectedCount = Atomic<Int>(0)
        let requestCount = Atomic<Int>(0)
        let badRequestCount = Atomic<Int>(0)
        let timedOutCount = Atomic<Int>(0)
        let streamCount = Atomic<Int>(0)
        let droppedChunkCount = Atomic<Int>(0)
        let connectedCount = Atomic<Int>(0)

        /// Connections accepted, and refused because ``HTTPServer/maxClients`` were connected.
        public var accepted: Int { acceptedCount.load(ordering: .relaxed) }
        public var rejected: Int { rejectedCount.load(ordering: .relaxed) }
        /// Requests handled (any status), requests refused as malformed (400, 413, 431),
        /// requests that did not arrive in time (408).
        public var requests: Int { requestCount.load(ordering: .relaxed) }
        public var badRequests: Int { badRequestCount.load(ordering: .relaxed) }
        public var timedOut: Int { timedOutCount.load(ordering: .relaxed) }
        /// Clients connected now, and event streams open now.
        public var connected: Int { connectedCount.load(ordering: .relaxed) }
        public var streams: Int { streamCount.load(ordering: .relaxed) }
        /// Stream chunks not sent to a client that did not read (per client).
        public var droppedChunks: Int { droppedChunkCount.load(ordering: .relaxed) }
    }

    /// Clients at once at most.
    public static let maxClients = 64
    /// The largest request body, bytes (a control request is at most 64 KiB, as on the socket).
    public static let maxBodyBytes = 65_536
    /// Time from accept to a whole request, seconds.
    public static let requestTimeout: Double = 10
    /// A stream's chunks are dropped for a client with this much output waiting.
    public static let streamLimitBytes = 256 * 1024

    /// The bound address (port 0 becomes the kernel's choice).
    public let host: String
    public let port: UInt16
    public let statistics = Statistics()
    private let shared: HTTPServerShared

    /// Binds `HOST:PORT` (numeric IPv4, `localhost`, or empty for 0.0.0.0) and listens; `option`
    /// names the command-line option in messages (`--metrics`, `--http`). Throws one line.
    public init(address: String, option: String, handler: @escaping Handler) throws {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw FleetError("\(option) '\(address)' must be HOST:PORT (e.g. 127.0.0.1:9464, :9464, 0.0.0.0:0)")
        }
        let host = Self.numericHost(String(address[..<colon]))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else {
            throw FleetError("\(option) '\(address)': '\(host)' is not a numeric IPv4 address")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FleetError("cannot open a socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw FleetError("cannot listen on \(address) for \(option): \(reason)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw FleetError("cannot make a pipe for \(option): \(reason)")
        }
        for end in pipeFDs {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        self.host = host
        self.port = UInt16(bigEndian: actual.sin_port)
        shared = HTTPServerShared(
            listener: fd, wakeRead: pipeFDs[0], wakeWrite: pipeFDs[1], handler: handler, statistics: statistics)
    }

    /// `HOST:PORT` as bound.
    public var address: String { "\(host):\(port)" }

    /// `127.0.0.1` for `localhost`, `0.0.0.0` for an empty host; anything else as given.
    public static func numericHost(_ host: String) -> String {
        host.isEmpty ? "0.0.0.0" : host == "localhost" ? "127.0.0.1" : host
    }

    /// Starts serving on its own thread (`roomtap.http`). Call once.
    public func start() {
        let shared = self.shared
        shared.running.enter()
        RoomThread.start("roomtap.http") { HTTPServerLoop(shared: shared).run() }
    }

    /// Stops serving: chunks published before still go out as far as the sockets take them
    /// without waiting, then every connection and the listener close. Returns once the thread
    /// has ended (at once on the server's own thread, or when it never started). Idempotent.
    public func stop() {
        guard !shared.stopping.exchange(true, ordering: .acquiringAndReleasing) else {
            if !shared.isServerThread { shared.running.wait() }
            return
        }
        shared.wake()
        if !shared.isServerThread { shared.running.wait() }
    }

    /// True while an event stream is open (so a caller can skip making a chunk nobody gets).
    public var hasStreams: Bool { statistics.streamCount.load(ordering: .relaxed) > 0 }

    /// Appends `chunk` (whole server-sent events: `data: ...\n\n`) to every open stream. Any
    /// thread; never blocks (chunks beyond a full queue are dropped and counted).
    public func publish(_ chunk: String) {
        guard hasStreams, !shared.stopping.load(ordering: .relaxed) else { return }
        let bytes = Array(chunk.utf8)
        let wasEmpty: Bool? = shared.pending.withLock { queue in
            guard queue.count < 4096 else { return nil }
            queue.append(bytes)
            return queue.count == 1
        }
        switch wasEmpty {
        case nil: statistics.droppedChunkCount.add(1, ordering: .relaxed)
        case true?: shared.wake()
        case false?: break
        }
    }

    /// Calls `body` on the server's thread every `interval` while a stream is open and sends
    /// what it returns (nil: nothing this time) to every stream. Replaces an earlier ticker.
    public func setTicker(interval: Duration, _ body: @escaping @Sendable () -> String?) {
        let (seconds, attoseconds) = interval.components
        let nanos = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        shared.ticker.withLock { $0 = (max(nanos, 1_000_000), body) }
        shared.wake()
    }

    /// The reason phrase of `status` (RFC 9110 §15).
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }

    /// The bytes of `response`'s head (and body unless `headOnly`).
    static func serialize(_ response: Response, headOnly: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status) \(reason(response.status))\r\n"
        for header in response.headers { text += "\(header.name): \(header.value)\r\n" }
        if !response.isStream { text += "Content-Length: \(response.body.count)\r\n" }
        text += "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
        return Array(text.utf8) + (headOnly ? [] : response.body)
    }
}

/// What the public face (any thread) and the server thread share.
final class HTTPServerShared: Sendable {
    let listener: Int32
    let wakeRead: Int32
    let wakeWrite: Int32
    let handler: HTTPServer.Handler
    let statistics: HTTPServer.Statistics
    let stopping = Atomic<Bool>(false)
    let running = DispatchGroup()
    let serverThread = Atomic<UInt>(0)
    let pending = Locked<[[UInt8]]>([])
    let ticker = Locked<(intervalNanos: UInt64, body: @Sendable () -> String?)?>(nil)
    /// Set once the server thread has closed the listener (else `deinit` closes it).
    let listenerClosed = Atomic<Bool>(false)

    init(
        listener: Int32, wakeRead: Int32, wakeWrite: Int32, handler: @escaping HTTPServer.Handler,
        statistics: HTTPServer.Statistics
    ) {
        self.listener = listener
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
        self.handler = handler
        self.statistics = statistics
    }

    deinit {
        if !listenerClosed.load(ordering: .acquiring) { close(listener) }
        close(wakeRead)
        close(wakeWrite)
    }

    var isServerThread: Bool { serverThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }
}

/// The server thread's loop and its clients. Confined to that thread.
private final class HTTPServerLoop {
    private let shared: HTTPServerShared
    private var clients: [HTTPClient] = []
    private var pollFDs: [pollfd] = []
    private var nextTick: UInt64?
    private var acceptPausedUntil: UInt64 = 0
    private var scratch = [UInt8](repeating: 0, count: 16_384)
    /// Time a plain response may take to be read after the request deadline, ns.
    static let sendNanos: UInt64 = 20_000_000_000

    init(shared: HTTPServerShared) { self.shared = shared }

    func run() {
        shared.serverThread.store(UInt(pthread_self()), ordering: .relaxed)
        while !shared.stopping.load(ordering: .acquiring) { turn() }
        deliverPending()
        for client in clients where !client.failed { client.flush() }
        for client in clients { remove(client) }
        clients.removeAll()
        close(shared.listener)
        shared.listenerClosed.store(true, ordering: .releasing)
        shared.running.leave()
    }

    private func turn() {
        pollFDs.removeAll(keepingCapacity: true)
        pollFDs.append(pollfd(fd: shared.wakeRead, events: Int16(POLLIN), revents: 0))
        let now = MonotonicClock.now.nanoseconds
        let acceptPaused = acceptPausedUntil > now
        pollFDs.append(pollfd(fd: shared.listener, events: acceptPaused ? 0 : Int16(POLLIN), revents: 0))
        var timeout: Int32 = 1000  // request deadlines are checked at least once a second
        for client in clients {
            // A stream's client closing is seen as a readable end (once: then only POLLHUP/POLLERR).
            var events: Int32 = client.inputClosed ? 0 : Int32(POLLIN)
            if client.output.count > 0 { events |= Int32(POLLOUT) }
            pollFDs.append(pollfd(fd: client.fd, events: Int16(events), revents: 0))
        }
        let ticker = shared.ticker.withLock { $0 }
        if let ticker, shared.statistics.streamCount.load(ordering: .relaxed) > 0 {
            let due = nextTick ?? now + ticker.intervalNanos
            nextTick = due
            timeout = min(timeout, due <= now ? 0 : Int32((due - now + 999_999) / 1_000_000))
        } else {
            nextTick = nil
        }
        if acceptPaused { timeout = min(timeout, 100) }
        let ready = poll(&pollFDs, nfds_t(pollFDs.count), timeout)
        if ready < 0 && errno != EINTR { return }
        if pollFDs[0].revents != 0 { while read(shared.wakeRead, &scratch, scratch.count) > 0 {} }
        deliverPending()
        if let ticker { tickIfDue(ticker.intervalNanos, ticker.body) }
        let count = clients.count
        for index in 0..<count {
            let revents = Int32(pollFDs[index + 2].revents)
            let client = clients[index]
            if revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 { receive(client) }
            if revents & Int32(POLLHUP | POLLERR) != 0 && client.inputClosed { client.failed = true }
            let now = MonotonicClock.now.nanoseconds
            if !client.answered && !client.failed && now > client.deadline {
                shared.statistics.timedOutCount.add(1, ordering: .relaxed)
                answer(client, HTTPServer.Response(status: 408, type: "text/plain", body: "request timeout\n"))
            } else if !client.isStream && now > client.deadline + HTTPServerLoop.sendNanos {
                client.failed = true  // a plain response its client never read
            }
        }
        if pollFDs[1].revents != 0 { acceptClients() }
        for client in clients where client.output.count > 0 && !client.failed { client.flush() }
        if clients.contains(where: \.isFinished) {
            for client in clients where client.isFinished { remove(client) }
            clients.removeAll { $0.isFinished }
        }
    }

    private func acceptClients() {
        for _ in 0..<16 {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(shared.listener, $0, &length) }
            }
            guard fd >= 0 else {
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    acceptPausedUntil = MonotonicClock.now.nanoseconds + 100_000_000
                }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let deadline = MonotonicClock.now.nanoseconds + UInt64(HTTPServer.requestTimeout * 1e9)
            let client = HTTPClient(fd: fd, peer: Self.dotted(peer.sin_addr), deadline: deadline)
            guard clients.count < HTTPServer.maxClients else {
                shared.statistics.rejectedCount.add(1, ordering: .relaxed)
                let response = HTTPServer.Response(
                    status: 503, type: "text/plain", body: "too many clients (\(HTTPServer.maxClients)); try again\n")
                client.output.append(HTTPServer.serialize(response, headOnly: false))
                client.flush()
                close(fd)
                continue
            }
            shared.statistics.acceptedCount.add(1, ordering: .relaxed)
            shared.statistics.connectedCount.add(1, ordering: .relaxed)
            clients.append(client)
        }
    }

    /// Reads what the client sent; once a whole request is in, answers it.
    private func receive(_ client: HTTPClient) {
        let n = recv(client.fd, &scratch, scratch.count, 0)
        if n == 0 {
            // The client closed: a stream or a half-read request is done; an answer in flight is
            // still sent (a client may shut down its sending side after the request).
            if client.isStream || !client.answered { client.failed = true }
            client.inputClosed = true
            return
        }
        guard n > 0 else {
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { client.failed = true }
            return
        }
        guard !client.answered else { return }  // bytes after the request are ignored
        client.input.append(contentsOf: scratch[0..<n])
        guard let headLength = HTTPRequestHead.headLength(client.input) else {
            if client.input.count > HTTPRequestHead.maxBytes {
                refuse(client, 431, "request head larger than \(HTTPRequestHead.maxBytes) bytes\n")
            }
            return
        }
        guard headLength <= HTTPRequestHead.maxBytes else {
            return refuse(client, 431, "request head larger than \(HTTPRequestHead.maxBytes) bytes\n")
        }
        guard let head = HTTPRequestHead(client.input) else { return refuse(client, 400, "bad request\n") }
        guard head.contentLength <= HTTPServer.maxBodyBytes else {
            return refuse(client, 413, "request body larger than \(HTTPServer.maxBodyBytes) bytes\n")
        }
        guard client.input.count - headLength >= head.contentLength else { return }  // more body to come
        let body = Array(client.input[headLength..<(headLength + head.contentLength)])
        client.input = []
        shared.statistics.requestCount.add(1, ordering: .relaxed)
        let response = shared.handler(HTTPServer.Request(head: head, body: body, peer: client.peer))
        answer(client, response, headOnly: head.method == "HEAD")
    }

    private func refuse(_ client: HTTPClient, _ status: Int, _ message: String) {
        shared.statistics.badRequestCount.add(1, ordering: .relaxed)
        answer(client, HTTPServer.Response(status: status, type: "text/plain", body: message))
    }

    private func answer(_ client: HTTPClient, _ response: HTTPServer.Response, headOnly: Bool = false) {
        client.answered = true
        client.input = []
        client.output.append(HTTPServer.serialize(response, headOnly: headOnly))
        if response.isStream && !headOnly {
            client.isStream = true
            shared.statistics.streamCount.add(1, ordering: .relaxed)
        }
    }

    private func remove(_ client: HTTPClient) {
        if client.isStream {
            client.isStream = false
            shared.statistics.streamCount.subtract(1, ordering: .relaxed)
        }
        close(client.fd)
        shared.statistics.connectedCount.subtract(1, ordering: .relaxed)
    }

    private func deliverPending() {
        let chunks = shared.pending.withLock { queue -> [[UInt8]] in
            var taken: [[UInt8]] = []
            swap(&taken, &queue)
            return taken
        }
        for chunk in chunks { fanOut(chunk) }
    }

    private func fanOut(_ chunk: [UInt8]) {
        for client in clients where client.isStream && !client.failed {
            if client.output.count + chunk.count > HTTPServer.streamLimitBytes {
                shared.statistics.droppedChunkCount.add(1, ordering: .relaxed)
            } else {
                client.output.append(chunk)
            }
        }
    }

    private func tickIfDue(_ interval: UInt64, _ body: @Sendable () -> String?) {
        guard let due = nextTick else { return }
        let now = MonotonicClock.now.nanoseconds
        guard now >= due else { return }
        let next = due + interval
        nextTick = next > now ? next : now + interval
        if let chunk = body() { fanOut(Array(chunk.utf8)) }
    }

    static func dotted(_ address: in_addr) -> String {
        let value = UInt32(bigEndian: address.s_addr)
        return "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }
}

/// One connection. Confined to the server thread.
private final class HTTPClient {
    let fd: Int32
    let peer: String
    let deadline: UInt64
    var input: [UInt8] = []
    var output = HTTPOutput()
    /// The request has been answered (its response is queued or sent).
    var answered = false
    var isStream = false
    var inputClosed = false
    var failed = false

    init(fd: Int32, peer: String, deadline: UInt64) {
        self.fd = fd
        self.peer = peer
        self.deadline = deadline
    }

    /// Done with: failed, or a plain response sent whole.
    var isFinished: Bool { failed || (answered && !isStream && output.count == 0) }

    func flush() { if !output.send(to: fd) { failed = true } }
}

/// Bytes waiting for one client.
private struct HTTPOutput {
    private var bytes: [UInt8] = []
    private var head = 0

    var count: Int { bytes.count - head }

    mutating func append(_ chunk: [UInt8]) { bytes.append(contentsOf: chunk) }

    /// Sends what the socket takes without blocking; false when the connection failed.
    mutating func send(to fd: Int32) -> Bool {
        while head < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + head, $0.count - head, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                head += sent
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        if head == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 65_536)
            head = 0
        } else if head >= 65_536 {
            bytes.removeFirst(head)
            head = 0
        }
        return true
    }
}
