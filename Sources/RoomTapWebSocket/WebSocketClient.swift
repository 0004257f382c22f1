import Foundation
import RoomTapSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An RFC 6455 WebSocket client connection (https://www.rfc-editor.org/rfc/rfc6455).
///
/// ```swift
/// let client = WebSocketClient(configuration: .init(url: "wss://example.com/socket")) { event in
///     // runs on the connection's loop thread
/// }
/// try client.connect()
/// client.send(text: "hello")
/// client.close()
/// _ = client.waitUntilClosed(timeout: .seconds(5))
/// ```
///
/// Threads: `connect` blocks its caller; after it returns, one loop thread per connection
/// (`roomtap.ws`) does all I/O and calls `onEvent`, in arrival order, ending with exactly
/// one `.closed`. `send`, `close` and `waitUntilClosed` may be called from any thread, also from
/// `onEvent` (except `waitUntilClosed`, which would wait for itself). Keep `onEvent` short: it
/// holds up reading and writing.
///
/// Lifetime: an open connection keeps its client alive until it ends; dropping the last
/// reference does not close it, so call `close` (or let the peer close).
public final class WebSocketClient: Sendable {
    /// The lifecycle of a client.
    enum Phase {
        case idle, connecting, open, closed
    }

    /// A message waiting for the loop thread.
    struct Outgoing {
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// What the API threads and the loop thread share.
    struct State {
        var phase = Phase.idle
        var outbox: [Outgoing] = []
        var outboxBytes = 0
        var closeRequest: (code: UInt16, reason: String)?
        /// The eventfd that wakes the loop (valid while open).
        var wakeDescriptor: Int32 = -1
    }

    let configuration: WebSocketConfiguration
    let onEvent: @Sendable (WebSocketEvent) -> Void
    let state = Locked(State())
    /// Opened once the connection ended and `.closed` was delivered.
    private let closedLatch = Latch()

    /// Prepares a client; nothing happens on the network until `connect`.
    ///
    /// - Parameter onEvent: called on the loop thread for every message and, last, `.closed`.
    public init(configuration: WebSocketConfiguration, onEvent: @escaping @Sendable (WebSocketEvent) -> Void) {
        self.configuration = configuration
        self.onEvent = onEvent
    }

    /// Connects (TCP, proxy, TLS), performs the opening handshake and starts the loop thread.
    ///
    /// Blocks until the server accepted the upgrade (events then flow on the loop thread) or until
    /// it failed (no event is delivered then). Call once; a second call throws `.state`.
    public func connect() throws(WebSocketError) {
        let allowed = state.withLock { state in
            guard state.phase == .idle else { return false }
            state.phase = .connecting
            return true
        }
        guard allowed else { throw WebSocketError(.state, "this WebSocket client was already connected") }
        do throws(WebSocketError) {
            let loop = try WebSocketLoop.open(client: self)
            let wakeDescriptor = loop.wakeDescriptor
            let cancelled = state.withLock { state in
                state.wakeDescriptor = wakeDescriptor
                if state.closeRequest != nil { return true }
                state.phase = .open
                return false
            }
            if cancelled {
                loop.discard()
                finished()
                throw WebSocketError(.state, "the WebSocket client was closed while connecting")
            }
            RoomThread.start("roomtap.ws") {
                loop.run()
            }
        } catch {
            state.withLock { $0.phase = .closed }
            finished()
            throw error
        }
    }

    /// Queues a text message; false when the connection is not open, is closing, or the outbox
    /// (`outboxLimitBytes`) is full. Any thread; never blocks on the network.
    @discardableResult public func send(text: String) -> Bool {
        enqueue(Outgoing(opcode: 0x1, payload: Array(text.utf8)))
    }

    /// Queues a binary message; as `send(text:)`.
    @discardableResult public func send(binary: [UInt8]) -> Bool {
        enqueue(Outgoing(opcode: 0x2, payload: binary))
    }

    /// Starts the closing handshake (RFC 6455 section 7): messages queued before are sent first,
    /// then a close frame with `code` and `reason` (cut to 123 bytes); the connection ends when
    /// the peer answers or after `closeTimeout` (then `.closed(code: 1006, ...)`). Returns at once.
    /// Idempotent: later calls, and calls after the connection ended, do nothing. Closing before
    /// `connect` makes `connect` throw. Any thread.
    public func close(code: UInt16 = 1000, reason: String = "") {
        let closedBeforeConnect = state.withLock { state in
            guard state.phase != .closed, state.closeRequest == nil else { return false }
            state.closeRequest = (code, reason)
            if state.phase == .idle {
                state.phase = .closed
                return true
            }
            Self.wake(state.wakeDescriptor)
            return false
        }
        if closedBeforeConnect { finished() }
    }

    /// Waits until the connection ended and `.closed` was delivered (or `connect` failed, or the
    /// client was closed before connecting); false on timeout. Any thread except the loop thread.
    public func waitUntilClosed(timeout: Duration) -> Bool {
        closedLatch.wait(timeoutMilliseconds: Int(timeout.milliseconds))
    }

    /// Marks the client closed and wakes `waitUntilClosed`. Called once, last.
    func finished() {
        closedLatch.open()
    }

    /// Whether `send` can queue messages now: connected, not closing, not closed. Any thread.
    public var isOpen: Bool {
        state.withLock { $0.phase == .open && $0.closeRequest == nil }
    }

    /// Bytes of messages in the outbox, not yet handed to the framing layer (at most
    /// `outboxLimitBytes`); a sender may use it to pace itself. Any thread.
    public var outboxBytes: Int {
        state.withLock { $0.outboxBytes }
    }

    private func enqueue(_ message: Outgoing) -> Bool {
        state.withLock { state in
            guard state.phase == .open, state.closeRequest == nil,
                state.outboxBytes + message.payload.count <= configuration.outboxLimitBytes
            else { return false }
            state.outbox.append(message)
            state.outboxBytes += message.payload.count
            Self.wake(state.wakeDescriptor)
            return true
        }
    }

    /// Wakes the loop's poll through its eventfd. Call under the state lock (the loop closes the
    /// descriptor under it); a negative descriptor does nothing.
    static func wake(_ descriptor: Int32) {
        guard descriptor >= 0 else { return }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(descriptor, $0.baseAddress, 8) }
    }
}
