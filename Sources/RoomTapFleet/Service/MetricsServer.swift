import Foundation
import Glibc
import RoomTapSync

/// The worker's HTTP endpoint: `GET /metrics` (Prometheus text), `/healthz` (200 while the worker
/// runs), `/readyz` (200 while it takes work, 503 when full or draining). HTTP/1.1, one request per
/// connection, `Connection: close`.
///
/// One thread (`roomtap.http`) serves clients one at a time: each may take 2 s at most to send
/// its request head (8 KiB at most), so a stalled client delays a scrape by 2 s, never the rooms.
///
/// Thread: ``start()`` and ``stop()`` from any thread; the handler runs on the server's thread.
public final class MetricsServer: @unchecked Sendable {
    /// What a request gets: status, content type, body.
    public typealias Handler = @Sendable (HTTPRequestHead) -> (status: Int, type: String, body: String)

    /// The bound address (port 0 becomes the kernel's choice).
    public let host: String
    public let port: UInt16
    private let fd: Int32
    private let handler: Handler
    private let stopping = Locked(false)
    private var thread: Thread?

    /// Binds `HOST:PORT` (numeric IPv4, or `localhost`); throws a one-line reason.
    public init(address: String, handler: @escaping Handler) throws {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw FleetError("--metrics '\(address)' must be HOST:PORT (e.g. 127.0.0.1:9464, :9464, 0.0.0.0:0)")
        }
        var host = String(address[..<colon])
        if host.isEmpty { host = "0.0.0.0" }
        if host == "localhost" { host = "127.0.0.1" }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else {
            throw FleetError("--metrics '\(address)': '\(host)' is not a numeric IPv4 address")
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
            throw FleetError("cannot listen on \(address) for --metrics: \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.host = host
        self.port = UInt16(bigEndian: actual.sin_port)
        self.handler = handler
    }

    deinit { close(fd) }

    /// `HOST:PORT` as bound.
    public var address: String { "\(host):\(port)" }

    /// Starts serving on its own thread.
    public func start() {
        let thread = Thread { [self] in serve() }
        thread.name = "roomtap.http"
        self.thread = thread
        thread.start()
    }

    /// Stops serving (the thread ends within 200 ms). Idempotent.
    public func stop() { stopping.withLock { $0 = true } }

    private func serve() {
        while !stopping.withLock({ $0 }) {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 200) > 0 else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { continue }
            answer(client)
            close(client)
        }
    }

    private func answer(_ client: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        while !HTTPRequestHead.isComplete(head), head.count <= HTTPRequestHead.maxBytes {
            let n = recv(client, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            head += chunk[..<n]
        }
        let response: (status: Int, type: String, body: String)
        if let request = HTTPRequestHead(head) {
            response =
                request.method == "GET" || request.method == "HEAD"
                ? handler(request) : (405, "text/plain", "only GET\n")
        } else {
            response = (400, "text/plain", "bad request\n")
        }
        let reason =
            [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"][
                response.status] ?? "Status"
        let body = Array(response.body.utf8)
        let text =
            "HTTP/1.1 \(response.status) \(reason)\r\nContent-Type: \(response.type)\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\n\r\n"
        let bytes = Array(text.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            sent += n
        }
    }
}
