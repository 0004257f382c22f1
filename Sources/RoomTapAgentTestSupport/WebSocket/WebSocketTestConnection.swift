import Foundation
import RoomTapSync
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One upgraded connection of a ``WebSocketTestServer``: what the client sent, and commands to
/// send to it. Any thread (sends are serialized; a send blocks until the kernel took the bytes).
public final class WebSocketTestConnection: Sendable {
    /// A message from the client with when it was complete and whether all its frames were masked.
    public struct Received: Sendable {
        public var message: WebSocketTestMessage
        public var time: ContinuousClock.Instant
        public var masked: Bool
        /// How many frames it came in.
        public var frames: Int
    }

    /// A control frame from the client (ping or pong) with its payload and arrival time.
    public struct Control: Sendable {
        public var payload: [UInt8]
        public var time: ContinuousClock.Instant
    }

    struct Record {
        var messages: [Received] = []
        var pings: [Control] = []
        var pongs: [Control] = []
        var closeFrame: (code: UInt16?, reason: String)?
        var unmaskedFrames = 0
        var protocolErrors: [String] = []
        var ended = false
        var sentClose = false
        var consumed = 0
    }

    /// The upgrade request (target, headers).
    public let request: WebSocketTestRequest
    private let fd: Int32
    private let writeLock = Locked(false)  // true once dropped
    private let record = Locked(Record())
    private unowned let server: WebSocketTestServer

    init(fd: Int32, request: WebSocketTestRequest, server: WebSocketTestServer) {
        self.fd = fd
        self.request = request
        self.server = server
    }

    // MARK: What the client sent

    /// Every message so far, in order.
    public var messages: [Received] { record.snapshot(\.messages) }
    /// Pings and pongs from the client so far.
    public var pings: [Control] { record.snapshot(\.pings) }
    public var pongs: [Control] { record.snapshot(\.pongs) }
    /// The client's close frame (code nil when it had none), once it came.
    public var closeFrame: (code: UInt16?, reason: String)? { record.withLock { $0.closeFrame } }
    /// Frames from the client without a mask (RFC 6455 section 5.1 forbids them).
    public var unmaskedFrames: Int { record.withLock { $0.unmaskedFrames } }
    /// Protocol violations seen (reserved bits, bad opcodes, unexpected continuation, ...).
    public var protocolErrors: [String] { record.snapshot(\.protocolErrors) }
    /// Whether the TCP connection has ended (either side).
    public var hasEnded: Bool { record.withLock { $0.ended } }

    /// The next message not yet returned by this method (each message once), waiting up to
    /// `timeout`.
    public func waitForMessage(timeout: Duration) -> Received? {
        var result: Received?
        _ = RoomTapTestSupport.waitUntil(timeout: timeout) {
            result = record.withLock { record in
                guard record.consumed < record.messages.count else { return nil }
                record.consumed += 1
                return record.messages[record.consumed - 1]
            }
            return result != nil
        }
        return result
    }

    /// Waits until `condition` holds for this connection's recorded state; whether it did.
    public func waitUntil(timeout: Duration, _ condition: (WebSocketTestConnection) -> Bool) -> Bool {
        RoomTapTestSupport.waitUntil(timeout: timeout) { condition(self) }
    }

    /// Waits for the client's close frame.
    public func waitForClose(timeout: Duration) -> (code: UInt16?, reason: String)? {
        var result: (code: UInt16?, reason: String)?
        _ = RoomTapTestSupport.waitUntil(timeout: timeout) {
            result = closeFrame
            return result != nil
        }
        return result
    }

    /// Waits until the TCP connection ended.
    public func waitUntilEnded(timeout: Duration) -> Bool {
        RoomTapTestSupport.waitUntil(timeout: timeout) { hasEnded }
    }

    // MARK: Commands

    /// Sends a text message in one frame.
    @discardableResult public func send(text: String) -> Bool { sendRaw(WebSocketFrame.encode(.text(text))) }

    /// Sends a binary message in one frame.
    @discardableResult public func send(binary: [UInt8]) -> Bool { sendRaw(WebSocketFrame.encode(.binary(binary))) }

    /// Sends `message` split into `pieces` frames (first with the opcode, then continuations),
    /// with a ping between the first two when `pingBetween` (control frames may interleave).
    @discardableResult
    public func sendFragmented(_ message: WebSocketTestMessage, pieces: Int, pingBetween: Bool = false) -> Bool {
        let (opcode, payload): (UInt8, [UInt8]) =
            switch message {
            case .text(let text): (1, Array(text.utf8))
            case .binary(let bytes): (2, bytes)
            }
        let size = max(1, (payload.count + pieces - 1) / max(1, pieces))
        var bytes: [UInt8] = []
        var start = 0
        var index = 0
        repeat {
            let end = min(payload.count, start + size)
            let last = end == payload.count
            bytes += WebSocketFrame(fin: last, opcode: index == 0 ? opcode : 0, payload: Array(payload[start..<end]))
                .encoded()
            if index == 0 && pingBetween && !last {
                bytes += WebSocketFrame(opcode: 9, payload: Array("mid".utf8)).encoded()
            }
            start = end
            index += 1
        } while start < payload.count
        return sendRaw(bytes)
    }

    /// Sends a ping with `payload` (at most 125 bytes).
    @discardableResult public func sendPing(_ payload: [UInt8] = []) -> Bool {
        sendRaw(WebSocketFrame(opcode: 9, payload: payload).encoded())
    }

    /// Sends a close frame (`code` nil: empty payload). The connection ends when the client answers.
    @discardableResult public func sendClose(code: UInt16?, reason: String = "") -> Bool {
        var payload: [UInt8] = []
        if let code { payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8) }
        record.withLock { $0.sentClose = true }
        return sendRaw(WebSocketFrame(opcode: 8, payload: payload).encoded())
    }

    /// Sends raw bytes (any frames, even broken ones) in one write.
    @discardableResult public func sendRaw(_ bytes: [UInt8]) -> Bool {
        writeLock.withLock { dropped in
            guard !dropped else { return false }
            return TestTCP.sendAll(fd, bytes)
        }
    }

    /// Ends the TCP connection at once, without a close frame. Idempotent.
    public func drop() {
        writeLock.withLock { dropped in
            guard !dropped else { return }
            dropped = true
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    // MARK: The reader thread

    func readLoop(leftover: [UInt8]) {
        var buffer = leftover
        var offset = 0
        var fragments: (opcode: UInt8, payload: [UInt8], masked: Bool, frames: Int)?
        reading: while true {
            while let (frame, length) = WebSocketFrame.parse(buffer, at: offset) {
                offset += length
                if !handle(frame, fragments: &fragments) { break reading }
            }
            if offset > 0 {
                buffer.removeFirst(offset)
                offset = 0
            }
            let chunk = TestTCP.receive(fd, max: 256 << 10)
            if chunk.isEmpty { break }
            buffer += chunk
        }
        drop()
        record.withLock { $0.ended = true }
        close(fd)
    }

    /// Records one frame; false when the connection should end.
    private func handle(
        _ frame: WebSocketFrame, fragments: inout (opcode: UInt8, payload: [UInt8], masked: Bool, frames: Int)?
    ) -> Bool {
        record.withLock { record in
            if !frame.masked { record.unmaskedFrames += 1 }
            if frame.reserved != 0 { record.protocolErrors.append("reserved bits \(frame.reserved)") }
        }
        switch frame.opcode {
        case 0, 1, 2:
            if frame.opcode == 0 {
                guard fragments != nil else {
                    record.withLock { $0.protocolErrors.append("continuation without a start") }
                    return true
                }
                fragments!.payload += frame.payload
                fragments!.masked = fragments!.masked && frame.masked
                fragments!.frames += 1
            } else {
                if fragments != nil {
                    record.withLock { $0.protocolErrors.append("new message inside a fragmented one") }
                }
                fragments = (frame.opcode, frame.payload, frame.masked, 1)
            }
            guard frame.fin, let complete = fragments else { return true }
            fragments = nil
            let message: WebSocketTestMessage =
                complete.opcode == 1
                ? .text(String(decoding: complete.payload, as: UTF8.self)) : .binary(complete.payload)
            let received = Received(message: message, time: .now, masked: complete.masked, frames: complete.frames)
            record.withLock { $0.messages.append(received) }
            if server.options.echo {
                switch message {
                case .text(let text): send(text: text)
                case .binary(let bytes): send(binary: bytes)
                }
            }
            server.onMessage?(self, message)
        case 8:
            let code = frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : nil
            let reason = frame.payload.count > 2 ? String(decoding: frame.payload[2...], as: UTF8.self) : ""
            let sentClose = record.withLock { record in
                record.closeFrame = (code, reason)
                return record.sentClose
            }
            if !sentClose && server.options.answerClose { sendClose(code: code, reason: "") }
            return !(sentClose || server.options.answerClose)
        case 9:
            record.withLock { $0.pings.append(Control(payload: frame.payload, time: .now)) }
            if server.options.answerPings { sendRaw(WebSocketFrame(opcode: 10, payload: frame.payload).encoded()) }
        case 10:
            record.withLock { $0.pongs.append(Control(payload: frame.payload, time: .now)) }
        default:
            record.withLock { $0.protocolErrors.append("unknown opcode \(frame.opcode)") }
        }
        return true
    }
}
