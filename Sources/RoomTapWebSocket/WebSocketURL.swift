/// A `ws://` or `wss://` URL split into what the transport and the handshake need
/// (RFC 6455 section 3).
struct WebSocketURL: Equatable {
    /// True for `wss://`.
    var secure: Bool
    /// `host[:port]` as written (IPv6 in brackets), for the Host header.
    var hostHeader: String
    /// The request target: path and query, "/" when empty.
    var target: String

    /// The URL libcurl connects to: the same authority with the `http`/`https` scheme.
    var curlURL: String { (secure ? "https://" : "http://") + hostHeader + "/" }

    /// The scheme and authority, for messages (the path and query may carry secrets).
    var display: String { (secure ? "wss://" : "ws://") + hostHeader }

    /// Parses `text`; nil unless it is ws:// or wss:// with a host (no user info, no fragment).
    init?(_ text: String) {
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("ws://") {
            secure = false
            rest = text.dropFirst(5)
        } else if lower.hasPrefix("wss://") {
            secure = true
            rest = text.dropFirst(6)
        } else {
            return nil
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.isEmpty, !authority.contains("@"), !authority.hasPrefix(":"),
            !authority.contains(where: { $0 == " " || $0.isNewline })
        else { return nil }
        var remainder = rest[authorityEnd...]
        if remainder.contains("#") { return nil }
        if remainder.hasPrefix("?") { remainder = "/" + remainder }
        guard !remainder.contains(where: { $0 == " " || $0.isNewline }) else { return nil }
        hostHeader = String(authority)
        target = remainder.isEmpty ? "/" : String(remainder)
    }
}
