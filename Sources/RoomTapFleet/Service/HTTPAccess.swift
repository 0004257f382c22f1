/// Who may use an HTTP endpoint that acts on a room (`record --http`): the rules every request
/// passes before it is routed.
///
/// - **A token** (`ROOMTAP_HTTP_TOKEN`), when set, is required on every request (but
///   ``openPaths``): `Authorization: Bearer TOKEN`, the cookie ``cookieName`` (set when a page is
///   opened with `?token=`), or the query `token=`. Compared in constant time. Missing or wrong:
///   401, and the body names nothing of the room. A server on another address than loopback
///   must have one (``requiresToken(host:)``; the recorder refuses to start without).
/// - **Without a token** (loopback only) the `Host` field must name the server as loopback
///   (`127.0.0.1:PORT`, `localhost:PORT`, the bound address): a page of another site that rebinds
///   its DNS name to 127.0.0.1 gets 403 (DNS rebinding).
/// - **A change** (any method but GET and HEAD) that a browser marks as coming from another site
///   (`Origin` not this server, `Sec-Fetch-Site: cross-site`) gets 403, so a page elsewhere cannot
///   post to the room (CSRF), with a token cookie or without a token.
///
/// Thread: a value; ``check(_:)`` is pure.
public struct HTTPAccess: Sendable, Equatable {
    /// A refused request: its status (401, 403) and a one-line reason.
    public struct Refusal: Sendable, Equatable, Error {
        public let status: Int
        public let message: String
    }

    /// The cookie that carries the token after `?token=`.
    public static let cookieName = "roomtap_token"
    /// The shortest token accepted, characters.
    public static let minimumTokenLength = 16
    /// Paths open to anyone who can reach the port: they tell nothing about the room.
    public static let openPaths: Set<String> = ["/healthz"]

    /// The token, or nil (loopback only).
    public let token: String?
    /// The bound host (numeric IPv4) and port.
    public let host: String
    public let port: UInt16

    public init(token: String?, host: String, port: UInt16) {
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.host = host
        self.port = port
    }

    /// True for the IPv4 loopback network (127.0.0.0/8) and `localhost`: only this machine
    /// reaches it.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost"
            || host.split(separator: ".", omittingEmptySubsequences: false).first == "127"
                && host.split(separator: ".", omittingEmptySubsequences: false).count == 4
    }

    /// True when a server on `host` must have a token: any address but loopback (`0.0.0.0`, an
    /// empty host, a LAN address).
    public static func requiresToken(host: String) -> Bool { !isLoopback(HTTPServer.numericHost(host)) }

    /// Why `token` cannot be a token (one line), or nil when it can: at least
    /// ``minimumTokenLength`` characters, visible ASCII other than `;` `,` `"` `\` (it travels in a
    /// header, a cookie and a query).
    public static func problem(with token: String) -> String? {
        guard token.utf8.count >= minimumTokenLength else {
            return "ROOMTAP_HTTP_TOKEN is too short (\(token.utf8.count) characters): use at least "
                + "\(minimumTokenLength), e.g. export ROOMTAP_HTTP_TOKEN=$(openssl rand -hex 16)"
        }
        guard token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !";,\"\\".utf8.contains($0) }) else {
            return "ROOMTAP_HTTP_TOKEN must be visible ASCII without ; , \" or \\ (e.g. openssl rand -hex 16)"
        }
        return nil
    }

    /// Nil when `head` may proceed; else the refusal.
    public func check(_ head: HTTPRequestHead) -> Refusal? {
        if Self.openPaths.contains(head.path) { return nil }
        if let token {
            guard let given = presentedToken(head), Self.equalInConstantTime(given, token) else {
                return Refusal(
                    status: 401,
                    message: "this page needs the recorder's token: open it as /?token=... "
                        + "(ROOMTAP_HTTP_TOKEN), or send Authorization: Bearer ...")
            }
        } else {
            guard let hostField = head.field("host"), isLoopbackName(hostField) else {
                return Refusal(
                    status: 403, message: "Host must name this server as 127.0.0.1:\(port) or localhost:\(port)")
            }
        }
        if head.method != "GET" && head.method != "HEAD" {
            if let site = head.field("sec-fetch-site"), site != "same-origin" && site != "none" {
                return Refusal(status: 403, message: "a change must come from this page, not another site")
            }
            if let origin = head.field("origin") {
                guard let hostField = head.field("host"), origin == "http://" + hostField else {
                    return Refusal(status: 403, message: "a change must come from this page, not \(origin.prefix(100))")
                }
            }
        }
        return nil
    }

    /// The token the request carries: Bearer, then the cookie, then the query.
    private func presentedToken(_ head: HTTPRequestHead) -> String? {
        if let authorization = head.field("authorization") {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
        }
        return head.cookie(Self.cookieName) ?? head.queryValue("token")
    }

    /// `Host` as loopback with this server's port.
    private func isLoopbackName(_ field: String) -> Bool {
        guard let colon = field.lastIndex(of: ":"), field[field.index(after: colon)...] == Substring(String(port))
        else {
            return false
        }
        let name = String(field[..<colon])
        return name == "localhost" || name == host
            || (Self.isLoopback(name) && name.allSatisfy { $0.isNumber || $0 == "." })
    }

    /// Compares every byte whatever the first difference (the time says nothing of the token).
    static func equalInConstantTime(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
        for i in 0..<max(x.count, y.count) {
            difference |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return difference == 0 && x.count == y.count
    }
}
