import Foundation
package import RoomTapJSON
import RoomTapSync

/// The Janus VideoRoom adapter (https://janus.conf.meetecho.com/docs/videoroom.html, Janus 1.x):
/// one handle joins the room as a publisher that never publishes, only to hear of publishers
/// (`joined` lists those present; `publishers`, `unpublished` and `leaving` events follow); each
/// publisher with audio gets a subscriber handle of its own (`join` as `subscriber` with
/// `streams: [{feed}]`, Janus offers, we answer with `start`), so one publisher's trouble never
/// renegotiates another's. A publisher is named by its display name (its feed id when it has
/// none); one that leaves and comes back under the same name continues its track.
///
/// Thread: see ``JoinAdapter``; the subscriptions map is locked.
package final class JanusVideoRoomJoin: JoinAdapter, @unchecked Sendable {
    let target: JanusVideoRoomTarget
    private var session: JanusSession?
    private var watcher: UInt64 = 0
    private let subscriptions = Locked<[String: Subscription]>([:])

    private struct Subscription {
        var handle: UInt64?
        var publisher: JoinedPublisher
        var display: String
        var attempts = 0
        var retryAt: MonotonicClock.Instant?
    }

    init(_ target: JanusVideoRoomTarget) { self.target = target }

    private var roomValue: JSONValue {
        if let number = Int(target.room) { return .number(Double(number)) }
        return .string(target.room)
    }

    func connect(_ join: RoomJoin) throws(WebRTCError) {
        let session = try JanusSession(base: target.base)
        self.session = session
        do {
            watcher = try session.attach()
            var body: [String: JSONValue] = [
                "request": "join", "ptype": "publisher", "room": roomValue, "display": .string(target.display),
            ]
            if let pin = target.pin { body["pin"] = .string(pin) }
            let joined = try reply(
                to: .object(body), on: watcher, expecting: "joined", timeout: join.options.connectTimeout)
            for entry in joined["publishers"]?.arrayValue ?? [] {
                try subscribe(entry, join: join)
            }
        } catch {
            session.destroy()
            self.session = nil
            throw error
        }
    }

    func supervise(_ join: RoomJoin) {
        guard let session else { return }
        while !join.isStopping {
            let event: JanusSession.Event?
            do { event = try session.nextEvent(handle: watcher, timeout: 0.25) } catch {
                join.warn("roomtap: \(error.description); the joined tracks stop here")
                return
            }
            if let event { handle(event, join: join) }
            for (feed, subscription) in subscriptions.withLock({ $0 }) {
                if let handle = subscription.handle, let hangup = try? session.nextEvent(handle: handle, timeout: 0),
                    hangup.kind == "hangup" || hangup.kind == "detached"
                {
                    subscription.publisher.connection?.close()
                }
                checkConnection(feed: feed, join: join)
            }
        }
    }

    func close(_ join: RoomJoin) {
        guard let session else { return }
        for subscription in subscriptions.withLock({ $0.values }) {
            if let handle = subscription.handle { session.detach(handle: handle) }
        }
        _ = try? session.message(handle: watcher, ["request": "leave"])
        session.destroy()
    }

    /// Publishes `connection` (our offer, audio only) on the watcher handle as `display`; Janus
    /// answers in the `configured` event.
    func publish(_ connection: PeerConnection, ssrc: UInt32, display: String, timeout: Double) throws(WebRTCError) {
        guard let session else { throw .signaling("no Janus session") }
        let offer = try connection.makeOffer(sending: ssrc)
        try session.message(
            handle: watcher,
            ["request": "publish", "audio": true, "video": false, "data": false, "display": .string(display)],
            jsep: ("offer", offer))
        let deadline = MonotonicClock.now + .seconds(timeout)
        var answer: String?
        var others: [JanusSession.Event] = []
        defer { session.putBack(others, handle: watcher) }  // publishers who came meanwhile
        while answer == nil, deadline.secondsFromNow > 0 {
            guard let event = try session.nextEvent(handle: watcher, timeout: deadline.secondsFromNow) else {
                break
            }
            try JanusSession.checkPluginError(event.data, server: session.base)
            if let jsep = event.jsep, jsep.type == "answer" { answer = jsep.sdp } else { others.append(event) }
        }
        guard let answer else {
            throw .signaling("Janus at \(session.base) did not answer the publish request within \(Int(timeout)) s")
        }
        try connection.accept(answer: answer)
        try connection.waitUntilConnected(timeout: timeout)
    }

    // MARK: -

    private func handle(_ event: JanusSession.Event, join: RoomJoin) {
        let data = event.data
        for entry in data["publishers"]?.arrayValue ?? [] {
            do { try subscribe(entry, join: join) } catch {
                join.warn("roomtap: cannot subscribe to \(entry["display"]?.stringValue ?? "a publisher"): \(error)")
            }
        }
        for key in ["unpublished", "leaving", "kicked"] {
            guard let value = data[key], let feed = Self.feedID(value) else { continue }
            if let subscription = subscriptions.withLock({ $0.removeValue(forKey: feed) }) {
                if let handle = subscription.handle { session?.detach(handle: handle) }
                subscription.publisher.left()
            }
        }
    }

    /// A publisher entry of `joined` or `publishers`: subscribes when it has audio.
    private func subscribe(_ entry: JSONValue, join: RoomJoin) throws(WebRTCError) {
        guard let feed = entry["id"].flatMap(Self.feedID), subscriptions.withLock({ $0[feed] == nil }) else { return }
        let streams = entry["streams"]?.arrayValue ?? []
        let hasAudio =
            streams.contains { $0["type"]?.stringValue == "audio" && $0["disabled"]?.boolValue != true }
            || entry["audio_codec"] != nil
        guard hasAudio else { return }
        let display = entry["display"]?.stringValue ?? ""
        let publisher = join.publisher(display: display, id: feed, fallback: "feed-\(feed)")
        subscriptions.withLock { $0[feed] = Subscription(handle: nil, publisher: publisher, display: display) }
        try connectSubscriber(feed: feed, publisher: publisher, join: join)
    }

    /// A subscriber handle for `feed`, Janus's offer answered, DTLS up.
    private func connectSubscriber(feed: String, publisher: JoinedPublisher, join: RoomJoin) throws(WebRTCError) {
        guard let session else { return }
        let started = MonotonicClock.now
        let handle = try session.attach()
        subscriptions.withLock { $0[feed]?.handle = handle }
        do throws(WebRTCError) {
            var body: [String: JSONValue] = [
                "request": "join", "ptype": "subscriber", "room": roomValue,
                "streams": [["feed": Self.feedValue(feed)]],
            ]
            if let pin = target.pin { body["pin"] = .string(pin) }
            let (_, offer) = try replyWithJSEP(to: .object(body), on: handle, timeout: join.options.connectTimeout)
            let connection = join.makeConnection(for: publisher)
            do {
                let answer = try connection.answer(offer: offer)
                try session.message(handle: handle, ["request": "start"], jsep: ("answer", answer))
                try session.trickleCompleted(handle: handle)
                try connection.waitUntilConnected(timeout: join.options.connectTimeout)
            } catch {
                connection.close()
                throw error
            }
            publisher.use(connection, publisherID: feed, setUpSeconds: -started.secondsFromNow)
            subscriptions.withLock { $0[feed]?.attempts = 0 }
        } catch {
            session.detach(handle: handle)
            subscriptions.withLock { $0[feed]?.handle = nil }
            throw error
        }
    }

    /// A subscription whose connection failed while its publisher is still there: again, later.
    private func checkConnection(feed: String, join: RoomJoin) {
        guard let subscription = subscriptions.withLock({ $0[feed] }) else { return }
        let connection = subscription.publisher.connection
        let healthy: Bool
        switch connection?.currentState {
        case .connected?, .connecting?, .new?: healthy = true
        default: healthy = false
        }
        if healthy && subscription.handle != nil { return }
        let now = MonotonicClock.now
        if let retryAt = subscription.retryAt {
            guard now >= retryAt else { return }
        } else {
            let attempts = subscription.attempts + 1
            let delay = reconnectDelay(attempt: attempts)
            subscriptions.withLock {
                $0[feed]?.attempts = attempts
                $0[feed]?.retryAt = now + .seconds(delay)
            }
            join.warn(
                "roomtap: the connection to \(subscription.publisher.name) broke; subscribing again in \(String(format: "%.1f", delay)) s"
            )
            if let handle = subscription.handle { session?.detach(handle: handle) }
            subscriptions.withLock { $0[feed]?.handle = nil }
            return
        }
        subscriptions.withLock { $0[feed]?.retryAt = nil }
        do { try connectSubscriber(feed: feed, publisher: subscription.publisher, join: join) } catch {
            join.warn("roomtap: subscribing again to \(subscription.publisher.name) failed: \(error)")
        }
    }

    /// Sends `body` on `handle` and waits for the plugin event answering it whose `videoroom` is
    /// `expecting`; a plugin error is thrown.
    private func reply(
        to body: JSONValue, on handle: UInt64, expecting: String, timeout: Double
    ) throws(WebRTCError) -> JSONValue {
        guard let session else { throw .signaling("no Janus session") }
        if let sync = try session.message(handle: handle, body) {
            if sync["videoroom"]?.stringValue == expecting { return sync }
        }
        let deadline = MonotonicClock.now + .seconds(timeout)
        while deadline.secondsFromNow > 0 {
            guard let event = try session.nextEvent(handle: handle, timeout: deadline.secondsFromNow) else {
                break
            }
            try JanusSession.checkPluginError(event.data, server: session.base)
            if event.data["videoroom"]?.stringValue == expecting { return event.data }
        }
        throw .signaling(
            "Janus at \(session.base) did not answer the \(body["request"]?.stringValue ?? "") request within \(Int(timeout)) s"
        )
    }

    private func replyWithJSEP(
        to body: JSONValue, on handle: UInt64, timeout: Double
    ) throws(WebRTCError) -> (JSONValue, String) {
        guard let session else { throw .signaling("no Janus session") }
        try session.message(handle: handle, body)
        let deadline = MonotonicClock.now + .seconds(timeout)
        while deadline.secondsFromNow > 0 {
            guard let event = try session.nextEvent(handle: handle, timeout: deadline.secondsFromNow) else {
                break
            }
            try JanusSession.checkPluginError(event.data, server: session.base)
            if let jsep = event.jsep, jsep.type == "offer" { return (event.data, jsep.sdp) }
        }
        throw .signaling("Janus at \(session.base) sent no offer for the subscription within \(Int(timeout)) s")
    }

    /// Feed ids are numbers, or strings on a server with string ids.
    package static func feedID(_ value: JSONValue) -> String? {
        if let number = value.doubleValue {
            guard number >= 0, number < 0x1p64 else { return nil }
            return String(UInt64(number))
        }
        return value.stringValue
    }

    private static func feedValue(_ id: String) -> JSONValue {
        if let number = UInt64(id), number < 1 << 53 { return .number(Double(number)) }
        return .string(id)
    }
}
