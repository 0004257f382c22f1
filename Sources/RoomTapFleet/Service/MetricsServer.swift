import RoomTapSync

/// The worker's and the recorder's metrics endpoint: `GET /metrics` (Prometheus text),
/// `/healthz`, `/readyz`, served by ``HTTPServer`` (roomtap's one HTTP server: its own thread,
/// every client nonblocking, so a stalled client delays no scrape and never the rooms). A
/// request that is not `GET` or `HEAD` gets 405.
///
/// Thread: ``start()`` and ``stop()`` from any thread; the handler runs on the server's thread.
public final class MetricsServer: Sendable {
    /// What a request gets: status, content type, body.
    public typealias Handler = @Sendable (HTTPRequestHead) -> (status: Int, type: String, body: String)

    private let server: HTTPServer

    /// Binds `HOST:PORT` (numeric IPv4, or `localhost`); throws a one-line reason.
    public init(address: String, handler: @escaping Handler) throws {
        server = try HTTPServer(address: address, option: "--metrics") { request in
            guard request.head.method == "GET" || request.head.method == "HEAD" else {
                return HTTPServer.Response(status: 405, type: "text/plain", body: "only GET\n")
            }
            let answer = handler(request.head)
            return HTTPServer.Response(status: answer.status, type: answer.type, body: answer.body)
        }
    }

    /// The bound address (port 0 becomes the kernel's choice).
    public var host: String { server.host }
    public var port: UInt16 { server.port }
    /// `HOST:PORT` as bound.
    public var address: String { server.address }

    /// Starts serving on its own thread (`roomtap.http`).
    public func start() { server.start() }

    /// Stops serving; returns once the server's thread has ended. Idempotent.
    public func stop() { server.stop() }
}
