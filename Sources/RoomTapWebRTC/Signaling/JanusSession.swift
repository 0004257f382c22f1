import Foundation
public import RoomTapJSON
import RoomTapStorage
import RoomTapSync
import Synchronization

/// A Janus session over Janus's HTTP API (https://janus.conf.meetecho.com/docs/rest.html): create,
/// attach handles, send plugin messages and trickle, and a long poll (`GET /janus/<session>`) on a
/// thread of its own (`roomtap.janus.poll`) that files every event it receives in a mailbox per
/// handle, where ``nextEvent(handle:timeout:)`` takes them in order. A keepalive goes every 25 s
/// (Janus drops a session silent for 60 s).
///
/// Every reply is checked: a transport failure, a non-2xx status, an answer that is not JSON or a
/// `"janus": "error"` becomes a ``WebRTCError/signaling(_:)`` line naming the server and Janus's own
/// reason.
///
/// Thread: any thread (the mailbox is locked); the poll thread runs from `init` to ``destroy()``.
package final class JanusSession: @unchecked Sendable {
    /// An event Janus sent on a handle.
    public struct Event: Sendable {
        /// `event`, `webrtcup`, `hangup`, `media`, `slowlink`, `detached`, ...
        public var kind: String
        /// The transaction it answers, if any.
        public var transaction: String?
        /// `plugindata.data` (plugin events), else the whole message.
        public var data: JSONValue
        /// `jsep.type` and `jsep.sdp`, if the event carries one.
        public var jsep: (type: String, sdp: String)?
    }

    /// The server's base URL (`http://host:port/janus`).
    public let base: String
    /// The session id.
    public let id: UInt64
    private let mailbox = Locked<[UInt64: [Event]]>([:])
    private let arrived = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    private let lastKeepalive = Locked(MonotonicClock.now)
    private let pollFailure = Locked<String?>(nil)
    private let transactionCounter = Atomic<Int>(0)

    /// Creates a session on the server at `base` and starts the long poll.
    public init(base: String) throws(WebRTCError) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        let reply = try Self.post(self.base, ["janus": "create", "transaction": "create"], server: self.base)
        guard let id = reply["data"]?["id"].flatMap(Self.id) else {
            throw .signaling("\(self.base) did not answer like a Janus server (no session id in its reply)")
        }
        self.id = id
        RoomThread.start("roomtap.janus.poll") { [self] in pollLoop() }
    }

    /// Attaches a handle to `plugin`; its id.
    public func attach(plugin: String = "janus.plugin.videoroom") throws(WebRTCError) -> UInt64 {
        let reply = try post(["janus": "attach", "plugin": .string(plugin)])
        guard let handle = reply["data"]?["id"].flatMap(Self.id) else {
            throw .signaling("Janus at \(base) gave no handle id when attaching \(plugin)")
        }
        return handle
    }

    /// Sends a plugin message (and a JSEP) on `handle`. Janus acks asynchronous requests (the answer
    /// comes as an event) and answers synchronous ones at once: the synchronous answer's
    /// `plugindata.data`, or nil after an ack. Throws Janus's error.
    @discardableResult
    public func message(
        handle: UInt64, _ body: JSONValue, jsep: (type: String, sdp: String)? = nil
    ) throws(WebRTCError) -> JSONValue? {
        var request: [String: JSONValue] = ["janus": "message", "body": body]
        if let jsep { request["jsep"] = ["type": .string(jsep.type), "sdp": .string(jsep.sdp)] }
        let reply = try post(.object(request), handle: handle)
        if reply["janus"]?.stringValue == "ack" { return nil }
        let data = reply["plugindata"]?["data"] ?? .null
        try Self.checkPluginError(data, server: base)
        return data
    }

    /// Tells Janus that our candidates are complete (they are all in the SDP).
    public func trickleCompleted(handle: UInt64) throws(WebRTCError) {
        try post(["janus": "trickle", "candidate": ["completed": true]], handle: handle)
    }

    /// Detaches `handle` (a gone handle is not an error).
    public func detach(handle: UInt64) {
        _ = try? post(["janus": "detach"], handle: handle)
    }

    /// The next event on `handle`, waiting at most `timeout` seconds (nil: none came). Throws when
    /// the long poll failed (the server went away or dropped the session).
    public func nextEvent(handle: UInt64, timeout: Double) throws(WebRTCError) -> Event? {
        let deadline = MonotonicClock.now + .seconds(timeout)
        while true {
            if let event = mailbox.withLock({ box -> Event? in
                guard var queue = box[handle], !queue.isEmpty else { return nil }
                let first = queue.removeFirst()
                box[handle] = queue
                return first
            }) {
                return event
            }
            if let failure = pollFailure.withLock({ $0 }) { throw .signaling(failure) }
            let left = deadline.secondsFromNow
            if left <= 0 { return nil }
            _ = arrived.wait(timeout: .now() + min(left, 0.5))
        }
    }

    /// Puts `events` taken by ``nextEvent(handle:timeout:)`` back at the head of `handle`'s queue,
    /// in order (events a caller waiting for one answer was not looking for).
    func putBack(_ events: [Event], handle: UInt64) {
        guard !events.isEmpty else { return }
        mailbox.withLock { $0[handle] = events + ($0[handle] ?? []) }
        arrived.signal()
    }

    /// A plugin reply's error (`error_code`, `error`) as a line.
    package static func checkPluginError(_ data: JSONValue, server: String) throws(WebRTCError) {
        if let code = data["error_code"]?.intValue {
            let reason = data["error"]?.stringValue ?? "no reason given"
            throw .signaling("Janus at \(server) refused: \(reason) (error \(code))")
        }
    }

    /// Destroys the session on the server and ends the long poll. Idempotent. Does not wait for
    /// the poll's pending GET (Janus holds it up to 30 s): that thread ends when it returns.
    public func destroy() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = try? post(["janus": "destroy"])
    }

    // MARK: - HTTP

    @discardableResult
    private func post(_ body: JSONValue, handle: UInt64? = nil) throws(WebRTCError) -> JSONValue {
        var request = body.objectValue ?? [:]
        request["transaction"] = .string("t\(transactionCounter.add(1, ordering: .relaxed).newValue)")
        let url = base + "/\(id)" + (handle.map { "/\($0)" } ?? "")
        lastKeepalive.withLock { $0 = MonotonicClock.now }
        return try Self.post(url, .object(request), server: base)
    }

    private static func post(_ url: String, _ body: JSONValue, server: String) throws(WebRTCError) -> JSONValue {
        let transfer = HTTPTransfer(
            method: "POST", url: url, headers: [("Content-Type", "application/json")],
            body: .bytes(Array(body.jsonText.utf8)), timeoutSeconds: 15)
        return try decode(transfer, server: server)
    }

    private static func decode(_ transfer: HTTPTransfer, server: String) throws(WebRTCError) -> JSONValue {
        let response: HTTPTransfer.Response
        do { response = try transfer.perform() } catch {
            throw .signaling("cannot reach the Janus server at \(server): \(error.message)")
        }
        guard (200..<300).contains(response.status) else {
            throw .signaling(
                "the Janus server at \(server) answered HTTP \(response.status) (is the URL its /janus API?)")
        }
        let reply: JSONValue
        do {
            reply = try response.body.withUnsafeBytes { (bytes) throws(JSONParseError) in try JSONValue(parsing: bytes)
            }
        } catch {
            throw .signaling("the Janus server at \(server) answered something that is not JSON (\(error))")
        }
        if reply["janus"]?.stringValue == "error" {
            let reason = reply["error"]?["reason"]?.stringValue ?? "no reason given"
            let code = reply["error"]?["code"]?.intValue ?? 0
            throw .signaling("Janus at \(server) refused: \(reason) (error \(code))")
        }
        return reply
    }

    // MARK: - The long poll

    private func pollLoop() {
        var failures = 0
        while !stopped.load(ordering: .acquiring) {
            if lastKeepalive.withLock({ MonotonicClock.now - $0 > .seconds(25) }) {
                _ = try? post(["janus": "keepalive"])
            }
            let transfer = HTTPTransfer(
                method: "GET", url: base + "/\(id)?maxev=10&rid=\(UInt64(Date().timeIntervalSince1970 * 1000))",
                timeoutSeconds: 40)
            let reply: JSONValue
            do { reply = try Self.decode(transfer, server: base) } catch {
                if stopped.load(ordering: .acquiring) { return }
                failures += 1
                if failures >= 3 {
                    pollFailure.withLock { $0 = "lost the Janus session at \(base): \(error.description)" }
                    arrived.signal()
                    return
                }
                continue
            }
            failures = 0
            let events = reply.arrayValue ?? [reply]
            for message in events { file(message) }
        }
    }

    /// A Janus id (session, handle): a whole number 0 ..< 2^53 (JSON's safe integers); nil otherwise.
    static func id(_ value: JSONValue) -> UInt64? {
        guard let number = value.doubleValue, number >= 0, number < 0x1p53, number.rounded() == number else {
            return nil
        }
        return UInt64(number)
    }

    /// One message of the long poll as the event of a handle: nil for keepalives and messages
    /// without a kind or a sender (ignored). Pure.
    package static func event(from message: JSONValue) -> (sender: UInt64, event: Event)? {
        guard let kind = message["janus"]?.stringValue, kind != "keepalive",
            let sender = message["sender"].flatMap(Self.id)
        else { return nil }
        var jsep: (type: String, sdp: String)?
        if let type = message["jsep"]?["type"]?.stringValue, let sdp = message["jsep"]?["sdp"]?.stringValue {
            jsep = (type, sdp)
        }
        let event = Event(
            kind: kind, transaction: message["transaction"]?.stringValue,
            data: message["plugindata"]?["data"] ?? message, jsep: jsep)
        return (sender, event)
    }

    private func file(_ message: JSONValue) {
        guard let (sender, event) = Self.event(from: message) else { return }
        mailbox.withLock { box in
            var queue = box[sender] ?? []
            if queue.count < 256 { queue.append(event) }
            box[sender] = queue
        }
        arrived.signal()
    }
}
