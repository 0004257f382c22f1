/// What a `WebSocketClient` delivers, on its loop thread, in the order it arrived.
public enum WebSocketEvent: Sendable, Equatable {
    /// A complete text message (fragments reassembled; UTF-8 checked).
    case text(String)
    /// A complete binary message (fragments reassembled).
    case binary([UInt8])
    /// The connection ended; always the last event, delivered exactly once after a successful
    /// `connect`. `code` is the peer's close code (RFC 6455 section 7.4), 1005 when its close frame
    /// had none, 1006 when the connection dropped without a close frame (TCP loss, ping timeout,
    /// close timeout), or the code of a protocol failure this side detected (1002, 1007, 1009).
    case closed(code: UInt16, reason: String)
}
