import Foundation
import RoomTapJSON
import RoomTapSync
import RoomTapWebSocket

/// `--agent-publish` into a Sora channel: the agent's voice as a second Sora connection, role
/// `sendonly` in the same channel (Sora carries one sent stream per connection;
/// shared/sora-reference.md §1), named by `signaling_notify_metadata` (`{KEY: "agent"}`, `KEY`
/// the join's `--join-name-key`) so every participant, roomtap's own recorder included, knows it.
///
/// The signaling is the recorder's (`connect` → the server's `offer` → `answer`, our candidates
/// trickled, `redirect` followed with `redirect: true`), with our answer `sendonly` and its SSRC.
/// `ping` is answered on the WebSocket's thread; `re-offer`, `notify` and `push` need nothing from
/// a sender and are dropped. The connection ends with the room (``close()``); a connection lost
/// mid-room (DTLS closed, ICE consent expired) is said once (``RoomJoin/publish(display:)``'s
/// warning) and is not made again (the agent goes unheard in the channel; the recording goes on).
///
/// Thread: ``connect(_:ssrc:display:timeout:)`` and ``close()`` from the join's control thread;
/// the WebSocket's events on its own thread.
final class SoraPublish: @unchecked Sendable {
    private let target: SoraTarget
    /// The current WebSocket, its generation (one per `open`) and its events not yet taken: one
    /// lock, so an event of a WebSocket left behind (after a redirect) is never queued.
    private let socket = Locked<(client: WebSocketClient?, generation: Int, events: [WebSocketEvent])>((nil, 0, []))
    private let arrived = DispatchSemaphore(value: 0)
    /// Sora's `connection_id` of the sending connection, once its offer came. Any thread.
    let connectionID = Locked<String?>(nil)

    init(_ target: SoraTarget) { self.target = target }

    /// Connects `connection` as a `sendonly` Sora connection sending `ssrc`, `display` in its
    /// notify metadata; returns when DTLS is up. Throws one line (Sora's reason when it refused).
    /// `fingerprint`: the DTLS certificate's, for the capability offer. Returns Opus's payload
    /// type in Sora's offer (the packets must carry it).
    func connect(_ connection: PeerConnection, ssrc: UInt32, display: String, fingerprint: String, timeout: Double)
        throws(WebRTCError) -> UInt8
    {
        var url = target.signalingURL
        var redirected = false
        let deadline = MonotonicClock.now + .seconds(timeout)
        var offer: SoraMessage.Offer?
        for _ in 0...3 where offer == nil {
            try open(
                url: url, redirected: redirected, ssrc: ssrc, display: display, fingerprint: fingerprint,
                timeout: timeout)
            waiting: while true {
                guard let event = next(until: deadline) else {
                    throw .signaling(
                        "Sora at \(url) sent the agent's sendonly connection no offer within \(Int(timeout)) s")
                }
                switch event {
                case .closed(let code, let reason):
                    throw .signaling(
                        "Sora at \(url) refused the agent's sendonly connection: \(SoraJoin.describe(code: code, reason: reason))"
                    )
                case .binary: continue
                case .text(let text):
                    switch try? SoraMessage.parse(text) {
                    case .offer(let received):
                        offer = received
                        break waiting
                    case .redirect(let location):
                        url = location
                        redirected = true
                        break waiting
                    case .disconnect(let reason):
                        throw .signaling(
                            "Sora at \(url) refused the agent's sendonly connection: \(reason.isEmpty ? "disconnect without a reason" : reason)"
                        )
                    default: continue
                    }
                }
            }
        }
        guard let offer else { throw .signaling("Sora redirected the agent's sendonly connection more than 3 times") }
        connectionID.withLock { $0 = offer.connectionID }
        let answer = try connection.answer(offer: offer.sdp, sending: ssrc, trickle: true)
        let client = socket.withLock { $0.client }
        client?.send(text: SoraMessage.answer(answer, re: false))
        for candidate in connection.localCandidates { client?.send(text: SoraMessage.candidate(candidate)) }
        try connection.waitUntilConnected(timeout: max(1, (deadline - MonotonicClock.now) / .seconds(1)))
        return (try? WebRTCSessionDescription.parse(offer.sdp).audioSection().1.opusPayloadType) ?? 111
    }

    /// Hangs up (`disconnect`, then a normal close). Idempotent.
    func close() {
        guard
            let client = socket.withLock({ s in
                defer { s.client = nil }
                return s.client
            })
        else { return }
        if client.isOpen {
            client.send(text: SoraMessage.disconnect)
            client.close(code: 1000, reason: "NO-ERROR")
            _ = client.waitUntilClosed(timeout: .seconds(3))
        }
    }

    /// A WebSocket to `url`, the `connect` (role `sendonly`) sent.
    private func open(
        url: String, redirected: Bool, ssrc: UInt32, display: String, fingerprint: String, timeout: Double
    ) throws(WebRTCError) {
        let configuration = WebSocketConfiguration(
            url: url, connectTimeout: .milliseconds(Int64(timeout * 1000)), maxMessageBytes: SoraMessage.maxBytes)
        let (old, mine) = socket.withLock { s in
            s.generation += 1
            s.events.removeAll()
            return (s.client, s.generation)
        }
        old?.close(code: 1000)
        let client = WebSocketClient(configuration: configuration) { [weak self] event in
            self?.received(event, generation: mine)
        }
        socket.withLock { $0.client = client }
        do { try client.connect() } catch {
            throw .signaling("cannot reach Sora at \(url) for the agent's sendonly connection: \(error.message)")
        }
        // The capability offer the SDKs send (sendonly, our SSRC); the server offers, we answer.
        let capability = SDPWriter.offer(
            local: SDPWriter.Local(
                ufrag: SoraJoin.token(8), password: SoraJoin.token(24), fingerprint: fingerprint,
                candidates: [], setup: "actpass", direction: "sendonly", ssrc: ssrc),
            sessionID: UInt64.random(in: 1...1 << 62))
        client.send(
            text: SoraMessage.connect(
                target: target, role: "sendonly", sdp: capability, redirect: redirected,
                notifyMetadata: .object([target.nameKey: .string(display)])))
    }

    /// The WebSocket's thread: `ping` answered here, the rest queued for ``connect`` (only events
    /// of the current WebSocket).
    private func received(_ event: WebSocketEvent, generation mine: Int) {
        let client = socket.withLock { $0.generation == mine ? $0.client : nil }
        if case .text(let text) = event, case .ping = try? SoraMessage.parse(text) {
            client?.send(text: SoraMessage.pong(stats: nil))
            return
        }
        let queued = socket.withLock { s in
            guard s.generation == mine else { return false }
            s.events.append(event)
            return true
        }
        if queued { arrived.signal() }
    }

    private func next(until deadline: MonotonicClock.Instant) -> WebSocketEvent? {
        while true {
            if let event = socket.withLock({ $0.events.isEmpty ? nil : $0.events.removeFirst() }) { return event }
            if arrived.wait(timeout: deadline.dispatchTime) == .timedOut {
                return socket.withLock { $0.events.isEmpty ? nil : $0.events.removeFirst() }
            }
        }
    }
}
