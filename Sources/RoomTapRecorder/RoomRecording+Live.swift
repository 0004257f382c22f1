import Foundation
import RoomTapAll
import RoomTapSync

/// `record --http HOST:PORT`: the live page, its JSON API and /metrics (``LivePage``) on the
/// recorder's HTTP server (``HTTPServer``, the same server `--metrics` uses), on its own thread
/// (`roomtap.http`). Requests go to the control socket's handler; its events go to the page's
/// streams as well as to the socket's watchers. Nothing here runs on, or waits for, the clock.
extension RoomRecording {
    /// Binds `address` and serves until the server is stopped; prints `roomtap: live page on
    /// http://ADDR/`. Requests go to the control socket's `handler`; its events to the page's
    /// streams and to `control`'s watchers. Throws one line (address taken, no token for an
    /// address other than loopback).
    func startLivePage(
        address: String, handler: RoomControlHandler, control: ControlServer?, room: Room, clock: RealTimeClock?,
        started: Date
    ) throws -> HTTPServer {
        let token = try LivePage.token(for: address, environment: plan.context.environment)
        let page = Locked<LivePage?>(nil)
        let server = try HTTPServer(address: address, option: "--http") { request in
            page.withLock { $0 }?.respond(request)
                ?? HTTPServer.Response(status: 503, type: "text/plain", body: "starting\n")
        }
        let title = URL(fileURLWithPath: plan.outDirectory).standardizedFileURL.lastPathComponent
        page.withLock {
            $0 = LivePage(
                handler: handler, access: HTTPAccess(token: token, host: server.host, port: server.port), title: title,
                metrics: { [self] in metricsText(room: room, clock: clock, started: started) })
        }
        server.setTicker(interval: LivePage.levelsInterval) { LivePage.chunk(handler.levelsEvent()) }
        handler.setPublisher { [weak control, weak server] event in
            control?.publish(event)
            if let server, server.hasStreams { server.publish(LivePage.chunk(event)) }
        }
        server.start()
        let note = token == nil ? "" : " (token required: open /?token=...)"
        plan.context.console.error("roomtap: live page on http://\(server.address)/\(note)\n")
        return server
    }

    /// Stops the page's server after the last events (`stopped`) went out as far as the sockets
    /// take them. Idempotent; any thread.
    func stopLivePage() { assembled.current?.liveServer?.stop() }
}
