import Foundation
import RoomTapAll

/// `record --http HOST:PORT`: what the recorder's HTTP server answers while the room runs.
///
/// | request | answer |
/// |---|---|
/// | `GET /` | the live page (Resources/live/, embedded: no network, no build step) |
/// | `GET /events` | server-sent events: `tracks` at once, `levels` every 200 ms, and every event a control watcher gets (`control_changed`, `track_added`, `track_removed`, `stopped`) |
/// | `POST /api` | one control request (docs/CONTROL-PROTOCOL.md) as the body, `Content-Type: application/json`; its reply, exactly as the socket's |
/// | `GET /api/tracks`, `/api/status`, `/api/hello` | the reply of that command |
/// | `GET /metrics`, `/healthz` | as `record --metrics` |
///
/// Every request first passes ``HTTPAccess`` (the token, the `Host` check, the cross-site
/// check). Requests go to the same ``RoomControlHandler`` as the control socket's, so a change
/// made on the page is the change `roomtap volume|mute|unmute|solo|unsolo` makes: the same reply,
/// the same `control_changed` event to watchers, the same entry in room.json's `controls`.
///
/// Thread: ``respond(_:)`` runs on the HTTP server's thread (`roomtap.http`); it reads what the
/// handler reads (atomics, counters, the room's published track list) and never waits on the room.
final class LivePage: Sendable {
    let handler: RoomControlHandler
    let access: HTTPAccess
    private let metrics: @Sendable () -> String
    private let html: String

    /// Seconds between two `levels` events on a stream.
    static let levelsInterval: Duration = .milliseconds(200)

    init(handler: RoomControlHandler, access: HTTPAccess, title: String, metrics: @escaping @Sendable () -> String) {
        self.handler = handler
        self.access = access
        self.metrics = metrics
        html = Self.page(title: title)
    }

    /// The page: the template with the style, the script and the (escaped) title filled in.
    static func page(title: String) -> String {
        let escaped = title.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        return template.replacingOccurrences(of: "{{STYLE}}", with: style)
            .replacingOccurrences(of: "{{SCRIPT}}", with: script)
            .replacingOccurrences(of: "{{TITLE}}", with: escaped)
    }

    // MARK: - Options

    /// `--http`'s value as the server binds it: `HOST:PORT`, or `PORT` / `:PORT` for loopback
    /// (127.0.0.1). Nil for nil.
    static func parseAddress(_ text: String?) throws(UsageError) -> String? {
        guard let text else { return nil }
        let bad = UsageError(
            description: "--http '\(text)' must be HOST:PORT or PORT (e.g. 8080 for 127.0.0.1:8080, 0.0.0.0:8080; "
                + "port 0: any)", command: "record")
        if let port = UInt16(text) { return "127.0.0.1:\(port)" }
        guard let colon = text.lastIndex(of: ":"), UInt16(text[text.index(after: colon)...]) != nil else { throw bad }
        let host = text[..<colon]
        if host.isEmpty { return "127.0.0.1" + text[colon...] }
        var address = in_addr()
        guard host == "localhost" || inet_pton(AF_INET, String(host), &address) == 1 else {
            throw UsageError(
                description: "--http '\(text)': '\(host)' is not a numeric IPv4 address (or localhost)",
                command: "record")
        }
        return text
    }

    /// The token the server at `address` requires: `ROOMTAP_HTTP_TOKEN` (nil when unset and the
    /// address is loopback). Throws one line when an address other than loopback has none, or the
    /// token is too weak to be one.
    static func token(for address: String, environment: [String: String]) throws(RuntimeError) -> String? {
        let host = String(address[..<(address.lastIndex(of: ":") ?? address.endIndex)])
        guard let token = environment["ROOMTAP_HTTP_TOKEN"], !token.isEmpty else {
            guard !HTTPAccess.requiresToken(host: host) else {
                throw RuntimeError(
                    description: "--http \(address) is reachable from other machines: export ROOMTAP_HTTP_TOKEN=SECRET "
                        + "(e.g. $(openssl rand -hex 16)) and open the page as http://\(address)/?token=SECRET, "
                        + "or serve on 127.0.0.1")
            }
            return nil
        }
        if let problem = HTTPAccess.problem(with: token) { throw RuntimeError(description: problem) }
        return token
    }

    // MARK: - Requests

    /// The answer to one request. Server thread.
    func respond(_ request: HTTPServer.Request) -> HTTPServer.Response {
        let head = request.head
        if let refusal = access.check(head) {
            var headers = Self.common
            if refusal.status == 401 { headers.append(.init("WWW-Authenticate", #"Bearer realm="roomtap""#)) }
            return .init(
                status: refusal.status, type: "text/plain; charset=utf-8", body: refusal.message + "\n",
                headers: headers)
        }
        let reading = head.method == "GET" || head.method == "HEAD"
        switch head.path {
        case "/", "/index.html":
            guard reading else { return Self.methodNotAllowed("GET") }
            var headers = Self.common + Self.pageHeaders
            if let token = access.token, head.queryValue("token") != nil {
                // The page's own requests (fetch, EventSource) then carry it; never to another site.
                headers.append(
                    .init("Set-Cookie", "\(HTTPAccess.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"))
            }
            return .init(status: 200, type: "text/html; charset=utf-8", body: html, headers: headers)
        case "/events":
            guard reading else { return Self.methodNotAllowed("GET") }
            return .eventStream(first: "retry: 2000\n\n" + Self.chunk(tracksEvent()), headers: Self.common)
        case "/api":
            guard head.method == "POST" else { return Self.methodNotAllowed("POST") }
            return api(request)
        case "/api/tracks", "/api/status", "/api/hello":
            guard reading else { return Self.methodNotAllowed("GET") }
            let command: ControlCommand =
                switch head.path {
                case "/api/tracks": .tracks
                case "/api/status": .status
                default: .hello
                }
            return Self.reply(handler.handle(command, by: nil), id: .null)
        case "/metrics":
            guard reading else { return Self.methodNotAllowed("GET") }
            return .init(status: 200, type: "text/plain; version=0.0.4", body: metrics(), headers: Self.common)
        case "/healthz":
            return .init(status: 200, type: "text/plain", body: "ok\n", headers: Self.common)
        default:
            return .init(status: 404, type: "text/plain", body: "not found\n", headers: Self.common)
        }
    }

    /// `POST /api`: the body is one control request; the reply is the control socket's.
    private func api(_ request: HTTPServer.Request) -> HTTPServer.Response {
        let type = request.head.field("content-type")?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            return .init(
                status: 415, type: "text/plain", body: "POST /api takes Content-Type: application/json\n",
                headers: Self.common)
        }
        var body = request.body[...]
        while let last = body.last, last == 0x0A || last == 0x0D { body = body.dropLast() }
        let parsed = body.withUnsafeBytes { ControlRequest.parse($0) }
        switch parsed {
        case .failure(let error):
            return Self.reply(.failure(error.failure), id: error.id)
        case .success(let control):
            let command: ControlCommand
            do throws(ControlFailure) { command = try ControlCommand(control) } catch {
                return Self.reply(.failure(error), id: control.id)
            }
            if case .watch = command {
                return Self.reply(
                    .failure(.badRequest, "over HTTP, watch with GET /events (server-sent events)"), id: control.id)
            }
            return Self.reply(handler.handle(command, by: nil), id: control.id)
        }
    }

    /// The `tracks` event a stream starts with: the `tracks` result as the room has them now (while
    /// the room is set up, the rest come as `track_added`).
    func tracksEvent() -> JSONValue {
        var object = handler.trackList().objectValue ?? [:]
        object["event"] = .string("tracks")
        return .object(object)
    }

    /// One server-sent event carrying `event` (compact JSON: one line).
    static func chunk(_ event: JSONValue) -> String { "data: \(event.jsonText)\n\n" }

    /// A control reply as an HTTP answer: the body is the socket's reply line; the status says
    /// the outcome (200; 400 for a bad request or value, 404 for an unknown track or command,
    /// 503 when the recorder cannot act now or is still starting, 500 for a fault).
    static func reply(_ response: ControlResponse, id: JSONValue) -> HTTPServer.Response {
        var status = 200
        if case .failure(let code, _) = response {
            switch code {
            case .unknownTrack, .unknownCommand: status = 404
            case .unavailable, .starting: status = 503
            case .internal: status = 500
            case .lineTooLong: status = 413
            case .badJSON, .badRequest, .outOfRange: status = 400
            }
        }
        return .init(status: status, type: "application/json", body: response.replyText(id: id), headers: common)
    }

    private static func methodNotAllowed(_ allowed: String) -> HTTPServer.Response {
        .init(status: 405, type: "text/plain", body: "use \(allowed)\n", headers: common + [.init("Allow", allowed)])
    }

    /// On every answer: no guessing of types, no referrer (a `?token=` never leaves in one).
    private static let common: [HTTPServer.Response.Header] = [
        .init("X-Content-Type-Options", "nosniff"), .init("Referrer-Policy", "no-referrer"),
    ]

    /// The page's: it loads nothing from anywhere (its style and script are in it), talks only to
    /// this server, and is never framed by another page (clickjacking).
    private static let pageHeaders: [HTTPServer.Response.Header] = [
        .init(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
                + "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        .init("X-Frame-Options", "DENY"),
    ]
}
