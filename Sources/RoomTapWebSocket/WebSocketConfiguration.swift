// RoomTapWebSocket: an RFC 6455 WebSocket client (https://www.rfc-editor.org/rfc/rfc6455) on
// libcurl (CONNECT_ONLY: TCP, TLS, proxies) and libwslay (framing). See docs/ARCHITECTURE.md.

/// One extra header of the opening handshake, such as `Authorization: Bearer ...`.
///
/// Header values never appear in error messages.
public struct WebSocketHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// What a `WebSocketClient` connects to and how.
public struct WebSocketConfiguration: Sendable {
    /// `ws://host[:port]/path?query` or `wss://...`.
    public var url: String
    /// Extra headers of the opening handshake (`Authorization`, `OpenAI-Beta`, ...). Names must not
    /// repeat the handshake's own headers (Host, Upgrade, Connection, Sec-WebSocket-Key/Version).
    public var headers: [WebSocketHeader]
    /// A PEM file of CA certificates to verify the server with (libcurl's `CURLOPT_CAINFO`; it
    /// replaces the default CA bundle file). `nil`: the system's CAs.
    public var caFile: String?
    /// Verify the server's certificate and host name (`wss://`). Turn off only for tests.
    public var verifyPeer: Bool
    /// The proxy: `nil` takes it from the environment like curl (`https_proxy` for `wss://`,
    /// `http_proxy` for `ws://`, `no_proxy`); `""` connects directly; a URL
    /// (`http://host:port`) uses that proxy for this connection (no_proxy ignored). The proxy is
    /// always asked to tunnel (HTTP CONNECT).
    public var proxy: String?
    /// The limit for TCP, proxy, TLS and the HTTP upgrade together.
    public var connectTimeout: Duration
    /// Send a ping when nothing arrived for this long (> 0); `nil`: never.
    public var pingInterval: Duration?
    /// Close with 1006 when nothing (pong or anything else) arrived this long after an idle ping.
    public var pongTimeout: Duration
    /// How long `close` waits for the peer's close frame before dropping the connection.
    public var closeTimeout: Duration
    /// The largest message accepted, in bytes; a larger one closes the connection with 1009.
    public var maxMessageBytes: Int
    /// Bytes of messages waiting to be sent at most (default 16 MiB); `send` returns false beyond
    /// it. About 1 MiB more sits in the framing layer and the kernel's socket buffer.
    public var outboxLimitBytes: Int

    public init(
        url: String, headers: [WebSocketHeader] = [], caFile: String? = nil, verifyPeer: Bool = true,
        proxy: String? = nil, connectTimeout: Duration = .seconds(10), pingInterval: Duration? = .seconds(20),
        pongTimeout: Duration = .seconds(10), closeTimeout: Duration = .seconds(5), maxMessageBytes: Int = 16 << 20,
        outboxLimitBytes: Int = 16 << 20
    ) {
        self.url = url
        self.headers = headers
        self.caFile = caFile
        self.verifyPeer = verifyPeer
        self.proxy = proxy
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.pongTimeout = pongTimeout
        self.closeTimeout = closeTimeout
        self.maxMessageBytes = maxMessageBytes
        self.outboxLimitBytes = outboxLimitBytes
    }
}
