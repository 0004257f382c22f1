/// Why `WebSocketClient.connect` failed. `message` is one line and never contains header values.
public struct WebSocketError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The URL is not `ws://` or `wss://` with a host.
        case badURL
        /// TCP failed: refused, unreachable, host not found.
        case connect
        /// TLS failed: certificate not trusted, host name mismatch, handshake error.
        case tls
        /// The proxy failed or refused the tunnel.
        case proxy
        /// The server answered the upgrade with this HTTP status instead of 101.
        case httpStatus(Int)
        /// The opening handshake failed: the server's 101 response broke RFC 6455 (missing or wrong
        /// Sec-WebSocket-Accept, ...), or a configured header is not valid HTTP.
        case handshake
        /// `connectTimeout` passed.
        case timeout
        /// `connect` was called twice, or after `close`.
        case state
    }

    public var kind: Kind
    public var message: String
    /// For `.httpStatus`: the start of the response body (at most 200 bytes, one line), else "".
    public var bodyExcerpt: String

    public init(_ kind: Kind, _ message: String, bodyExcerpt: String = "") {
        self.kind = kind
        self.message = message
        self.bodyExcerpt = bodyExcerpt
    }

    public var description: String { message }
}
