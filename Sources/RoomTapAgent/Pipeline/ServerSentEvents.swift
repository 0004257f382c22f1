/// An incremental parser of a `text/event-stream` body (Server-Sent Events), the framing of a
/// streamed chat completion, per the WHATWG HTML standard, "Parsing an event stream":
/// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
///
/// ```
/// stream = [ bom ] *event
/// event  = *( comment / field ) end-of-line          ; a blank line dispatches
/// field  = name [ ":" [ " " ] value ] end-of-line    ; data, event, id, retry; others ignored
/// end-of-line = CRLF / LF / CR
/// ```
///
/// Bytes arrive in chunks of any size (a CRLF may be split between two); each completed event is
/// handed to the caller's closure. `data` lines join with `\n`; an event with no data is not
/// dispatched; an unfinished event at the end of the stream is dropped (as the standard says).
/// A line or event longer than ``maxEventBytes`` is hostile input: ``feed(_:_:)`` throws and the
/// stream should be abandoned.
///
/// Thread: a value, confined to the thread reading the stream.
package struct ServerSentEventParser {
    /// One dispatched event.
    ///
    /// Thread: a value.
    public struct Event: Sendable, Equatable {
        /// The `event:` field, or `message`.
        public var type: String
        /// The `data:` lines joined with `\n`.
        public var data: String
        /// The last `id:` seen (the stream's last event id).
        public var id: String

        public init(type: String = "message", data: String, id: String = "") {
            self.type = type
            self.data = data
            self.id = id
        }
    }

    /// A line or an event over ``maxEventBytes``.
    public struct Overflow: Error, CustomStringConvertible {
        public let limit: Int
        public var description: String { "a server-sent event is longer than \(limit) bytes" }
    }

    /// The most bytes one line or one event's data may hold.
    public let maxEventBytes: Int
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType = ""
    private var lastID = ""
    private var skipLineFeed = false
    private var firstLine = true

    /// A parser for one stream; `maxEventBytes` bounds its memory (default 1 MiB).
    public init(maxEventBytes: Int = 1 << 20) {
        self.maxEventBytes = max(16, maxEventBytes)
    }

    /// Feeds the next bytes of the stream; `emit` is called for every event they complete, in order.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (Event) -> Void) throws(Overflow) {
        for byte in bytes {
            if skipLineFeed {
                skipLineFeed = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D:
                skipLineFeed = true
                try endLine(emit)
            case 0x0A:
                try endLine(emit)
            default:
                guard line.count < maxEventBytes else { throw Overflow(limit: maxEventBytes) }
                line.append(byte)
            }
        }
    }

    /// Convenience for tests and the fuzz entry: feeds `bytes`.
    public mutating func feed(_ bytes: [UInt8], _ emit: (Event) -> Void) throws(Overflow) {
        var failure: Overflow?
        bytes.withUnsafeBytes { raw in
            do throws(Overflow) { try feed(raw, emit) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private mutating func endLine(_ emit: (Event) -> Void) throws(Overflow) {
        defer { line.removeAll(keepingCapacity: true) }
        if firstLine {
            firstLine = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        if line.isEmpty {
            dispatch(emit)
            return
        }
        if line[0] == 0x3A { return }  // ":" a comment (keep-alives)
        let colon = line.firstIndex(of: 0x3A) ?? line.count
        var valueStart = min(colon + 1, line.count)
        if valueStart < line.count && line[valueStart] == 0x20 { valueStart += 1 }
        let name = line[0..<colon]
        let value = line[valueStart...]
        switch String(decoding: name, as: UTF8.self) {
        case "data":
            guard data.count + value.count + 1 <= maxEventBytes else { throw Overflow(limit: maxEventBytes) }
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id":
            if !value.contains(0) { lastID = String(decoding: value, as: UTF8.self) }
        default:
            break  // retry (a reconnection delay: a chat stream is never resumed) and unknown fields
        }
    }

    private mutating func dispatch(_ emit: (Event) -> Void) {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = ""
        }
        guard hasData else { return }
        emit(
            Event(
                type: eventType.isEmpty ? "message" : eventType, data: String(decoding: data, as: UTF8.self),
                id: lastID))
    }
}
