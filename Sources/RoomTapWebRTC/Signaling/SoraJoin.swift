import Foundation
package import RoomTapJSON
import RoomTapRTP
import RoomTapSync
import RoomTapWebSocket

/// The Sora adapter (Sora's WebSocket signaling, https://sora-doc.shiguredo.jp/SIGNALING; the
/// facts and their sources in shared/sora-reference.md §1): roomtap joins a channel as one
/// `recvonly` connection. `connect` with a capability offer → the server's `offer` (its
/// `config.iceServers` give libnice its STUN and TURN servers, ``ICEServer``) → `answer`, then our candidates trickled as
/// `candidate` messages. Sora offers one `m=audio` per publisher connection, all in one BUNDLE;
/// a `re-offer` follows every join and leave (a leaver's section comes back with port 0) and is
/// answered with a `re-answer`. Each section's MediaStream id (`msid`) is the publisher's
/// `connection_id`; its SSRCs route its packets to its track. The track is named by the
/// publisher's notify `metadata[nameKey]`, else its `client_id`, else its `connection_id`; a
/// `client_id` that comes back on a new connection continues its track.
///
/// `ping` is answered at once on the WebSocket's thread (`pong`, with per-stream `stats` when
/// asked); `notify` and `push` are kept for room.json; `redirect` (before the offer) reconnects to
/// its `location` with `redirect: true`. A refusal before the offer (a `disconnect`, or a close
/// with a 4xxx code, Sora's own) is one line with Sora's reason; any other close before the offer
/// (a normal one of a node going away, a 1011) is tried again with backoff, at most
/// ``maxEarlyCloses`` times. Only events of the current WebSocket count: each is tagged with the
/// generation of the WebSocket it came from, so the old WebSocket's close after a `redirect`
/// is never read as the new one's refusal. A loss mid-room (WebSocket closed, ICE or DTLS
/// failed) reconnects with backoff; ``maxReconnects`` failures in a row end the join with one line.
///
/// Thread: see ``JoinAdapter``; `connect` and `supervise` never overlap (the supervisor starts
/// after `connect` returned), so the connection fields are theirs; what the WebSocket thread and
/// the ICE thread touch is locked.
package final class SoraJoin: JoinAdapter, @unchecked Sendable {
    let target: SoraTarget
    /// Failed reconnections in a row that end the join.
    static let maxReconnects = 6
    /// How long a new publisher's section waits for its notify (its name) before it is named by
    /// its connection id.
    static let nameGrace: Double = 1.5
    /// Closes before the offer that are not a refusal (no 4xxx code) tried again, in a row.
    static let maxEarlyCloses = 3

    // Control/supervisor thread:
    private var client: WebSocketClient?
    private var url: String
    private var redirected = false
    private var generation = 0
    private var connection: PeerConnection?
    // Shared:
    /// What the WebSockets handed over, each with the generation of the one it came from.
    private let inbox = Locked<[(generation: Int, item: Incoming)]>([])
    private let arrived = DispatchSemaphore(value: 0)
    private let current = Locked<(generation: Int, connection: PeerConnection?, client: WebSocketClient?)>(
        (0, nil, nil))
    private let routes = Locked<[UInt32: JoinedPublisher]>([:])
    /// Our own sendonly connections (`--agent-publish`).
    private let sending = Locked<[SoraPublish]>([])
    private let state = Locked(State())

    /// What the WebSocket thread hands over.
    private enum Incoming {
        case message(SoraMessage)
        case malformed(String)
        case closed(code: UInt16, reason: String)
    }

    struct Stream {
        var connectionID: String
        var ssrcs: [UInt32]
        var publisher: JoinedPublisher?
        var seenAt: MonotonicClock.Instant
    }

    /// What the join saw, for room.json.
    struct State {
        var streams: [String: Stream] = [:]
        var known: [String: SoraMessage.Connection] = [:]
        var byClient: [String: JoinedPublisher] = [:]
        var ownConnectionID: String?
        var ownClientID: String?
        var sessionID: String?
        var ownCreated = false
        var unknownTypes = 0
        var malformed = 0
        var pings = 0
        var pongs = 0
        var reOffers = 0
        var reconnects = 0
        var redirects: [String] = []
        /// The last offer's usable ICE servers, and whether it asked for relay only.
        var offeredServers: (servers: [ICEServer], relayOnly: Bool)?
        /// Their URLs (no credentials), for room.json.
        var iceServers: [String] = []
        /// `notify` and `push` messages, in order (at most ``maxEvents``).
        var events: [SoraReport.Event] = []
    }

    static let maxEvents = 1000

    init(_ target: SoraTarget) {
        self.target = target
        url = target.signalingURL
    }

    /// What room.json keeps of the join.
    var report: SoraReport {
        let s = state.withLock { $0 }
        return SoraReport(
            signalingURL: url, channelID: target.channelID, connectionID: s.ownConnectionID,
            clientID: s.ownClientID, sessionID: s.sessionID, redirects: s.redirects, reOffers: s.reOffers,
            pings: s.pings, pongs: s.pongs, unknownMessages: s.unknownTypes, malformedMessages: s.malformed,
            reconnects: s.reconnects, iceServers: s.iceServers, events: s.events)
    }

    // MARK: - JoinAdapter

    func connect(_ join: RoomJoin) throws(WebRTCError) {
        try establish(join, initial: true)
    }

    func supervise(_ join: RoomJoin) {
        var failures = 0
        while !join.isStopping {
            var lost: String?
            if let item = next(timeout: 0.25) {
                switch item {
                case .closed(let code, let reason):
                    lost = "Sora closed the signaling WebSocket (\(Self.describe(code: code, reason: reason)))"
                case .malformed(let line):
                    join.warn("roomtap: warning: \(line); ignored")
                case .message(let message):
                    do { try handle(message, join: join) } catch {
                        if case .disconnect(let reason) = message {
                            lost = "Sora disconnected roomtap (\(reason.isEmpty ? "no reason" : reason))"
                        } else {
                            join.warn("roomtap: warning: Sora: \(error.description); ignored")
                        }
                    }
                }
            }
            resolvePending(join)
            if lost == nil, let connection {
                switch connection.currentState {
                case .failed(let error): lost = "the connection to Sora failed: \(error.description)"
                case .closed: lost = "the connection to Sora closed"
                default: break
                }
            }
            guard let why = lost, !join.isStopping else { continue }
            // Lost mid-room: every track goes silent (its gap), then connect again with backoff.
            tearDown(join)
            while !join.isStopping {
                failures += 1
                if failures > Self.maxReconnects {
                    join.fail(
                        "\(why); reconnecting to \(target.description) failed \(Self.maxReconnects) times, the joined tracks stop here"
                    )
                    return
                }
                let delay = reconnectDelay(attempt: failures)
                join.warn("roomtap: warning: \(why); reconnecting in \(String(format: "%.1f", delay)) s")
                let until = MonotonicClock.now + .seconds(delay)
                while MonotonicClock.now < until, !join.isStopping { Thread.sleep(forTimeInterval: 0.05) }
                if join.isStopping { return }
                state.withLock { $0.reconnects += 1 }
                url = target.signalingURL
                redirected = false
                do {
                    try establish(join, initial: false)
                    failures = 0
                    break
                } catch {
                    tearDown(join)
                    join.warn("roomtap: warning: reconnecting to Sora failed: \(error.description)")
                }
            }
        }
    }

    /// `--agent-publish`: `connection` into the channel as a second, `sendonly` Sora connection
    /// (``SoraPublish``) named `display`; its own stream is never one of the recorder's tracks.
    /// Returns Opus's payload type in Sora's offer (what the packets must carry).
    func publish(_ connection: PeerConnection, ssrc: UInt32, display: String, join: RoomJoin) throws(WebRTCError)
        -> UInt8
    {
        let sender = SoraPublish(target)
        sending.withLock { $0.append(sender) }
        return try sender.connect(
            connection, ssrc: ssrc, display: display, fingerprint: join.certificate.fingerprint,
            timeout: join.options.connectTimeout)
    }

    func close(_ join: RoomJoin) {
        for sender in sending.withLock({ $0 }) { sender.close() }
        if let client, client.isOpen {
            client.send(text: SoraMessage.disconnect)
            client.close(code: 1000, reason: "NO-ERROR")
            _ = client.waitUntilClosed(timeout: .seconds(3))
        }
        connection?.close()
        connection = nil
        client = nil
    }

    // MARK: - Connecting

    /// Signaling up to the offer (following redirects), the answer, the connection up, our own
    /// `connection.created` (who was there before us), the publishers' tracks.
    private func establish(_ join: RoomJoin, initial: Bool) throws(WebRTCError) {
        var redirects = 0
        var closes = 0
        var offer: SoraMessage.Offer?
        var early: [SoraMessage] = []
        while offer == nil {
            try open(join)
            let deadline = MonotonicClock.now + .seconds(join.options.connectTimeout)
            waiting: while true {
                guard let item = next(timeout: deadline.secondsFromNow) else {
                    throw .signaling("Sora at \(url) sent no offer within \(Int(join.options.connectTimeout)) s")
                }
                switch item {
                case .closed(let code, let reason):
                    // Sora refuses with a 4xxx close; another close is a node's end, tried again.
                    let why = Self.describe(code: code, reason: reason)
                    guard !(4000..<5000).contains(code) else {
                        throw .signaling("Sora at \(url) refused to connect: \(why)")
                    }
                    closes += 1
                    guard closes <= Self.maxEarlyCloses else {
                        throw .signaling(
                            "Sora at \(url) closed the signaling WebSocket before its offer \(closes) times in a row "
                                + "(last: \(why)); check the URL and that Sora is up")
                    }
                    let delay = reconnectDelay(attempt: closes)
                    join.warn(
                        "roomtap: warning: Sora at \(url) closed the signaling WebSocket before its offer (\(why)); "
                            + "connecting again in \(String(format: "%.1f", delay)) s")
                    let until = MonotonicClock.now + .seconds(delay)
                    while MonotonicClock.now < until, !join.isStopping { Thread.sleep(forTimeInterval: 0.05) }
                    if join.isStopping { throw .signaling("the recording stopped before Sora's offer") }
                    break waiting
                case .malformed(let line):
                    join.warn("roomtap: warning: \(line); ignored")
                case .message(.offer(let received)):
                    offer = received
                    break waiting
                case .message(.redirect(let location)):
                    redirects += 1
                    guard redirects <= 3 else { throw .signaling("Sora redirected roomtap more than 3 times") }
                    state.withLock { $0.redirects.append(location) }
                    client?.close(code: 1000)
                    url = location
                    redirected = true
                    break waiting
                case .message(.disconnect(let reason)):
                    throw .signaling(
                        "Sora at \(url) refused to connect: \(reason.isEmpty ? "disconnect without a reason" : reason)")
                case .message(let other):
                    early.append(other)
                }
            }
        }
        guard let offer else { throw .signaling("no offer") }
        state.withLock {
            $0.ownConnectionID = offer.connectionID
            $0.ownClientID = offer.clientID
            $0.sessionID = offer.sessionID ?? $0.sessionID
            $0.ownCreated = false
        }
        let servers = iceServers(offer, join: join)
        let connection = PeerConnection(
            context: join.context, certificate: join.certificate, servers: servers, relayOnly: offer.relayOnly,
            hosts: join.options.iceHosts)
        wire(connection)
        self.connection = connection
        current.withLock { $0.connection = connection }
        try negotiate(offer.sdp, re: false, join: join)
        for candidate in connection.localCandidates { client?.send(text: SoraMessage.candidate(candidate)) }
        for message in early { try? handle(message, join: join) }
        try connection.waitUntilConnected(timeout: join.options.connectTimeout)
        // The SDKs count themselves connected once their own connection.created has come too: it
        // names who was there before us.
        let deadline = MonotonicClock.now + .seconds(min(5, join.options.connectTimeout))
        while !state.withLock({ $0.ownCreated }), MonotonicClock.now < deadline {
            guard let item = next(timeout: deadline.secondsFromNow) else { break }
            switch item {
            case .closed(let code, let reason):
                throw .signaling("Sora at \(url) closed the connection: \(Self.describe(code: code, reason: reason))")
            case .malformed(let line): join.warn("roomtap: warning: \(line); ignored")
            case .message(let message): try handle(message, join: join)
            }
        }
        resolvePending(join, force: true)
        _ = initial
    }

    /// A WebSocket to `url`, the `connect` message sent.
    private func open(_ join: RoomJoin) throws(WebRTCError) {
        generation += 1
        let mine = generation
        client?.close()
        let configuration = WebSocketConfiguration(
            url: url, connectTimeout: .milliseconds(Int64(join.options.connectTimeout * 1000)),
            maxMessageBytes: SoraMessage.maxBytes)
        let client = WebSocketClient(configuration: configuration) { [weak self] event in
            self?.received(event, generation: mine)
        }
        // The new generation first: a late event of the old WebSocket is dropped (``next``).
        current.withLock { $0 = (mine, $0.connection, client) }
        inbox.withLock { $0.removeAll() }
        do { try client.connect() } catch {
            throw .signaling("cannot reach Sora at \(url): \(error.message)")
        }
        self.client = client
        let capability = SDPWriter.offer(
            local: SDPWriter.Local(
                ufrag: Self.token(8), password: Self.token(24), fingerprint: join.certificate.fingerprint,
                candidates: [], setup: "actpass", direction: "recvonly"),
            sessionID: UInt64.random(in: 1...1 << 62))
        client.send(
            text: SoraMessage.connect(target: target, role: "recvonly", sdp: capability, redirect: redirected))
    }

    /// The offer's or re-offer's sections → the answer sent; streams that came and went.
    private func negotiate(_ sdp: String, re: Bool, join: RoomJoin) throws(WebRTCError) {
        guard let connection else { throw .signaling("a re-offer before the offer") }
        let answer = try connection.answerMultiStream(offer: sdp)
        client?.send(text: SoraMessage.answer(answer.sdp, re: re))
        let own = state.withLock { $0.ownConnectionID }
        let ours = Set(sending.withLock { $0.compactMap { $0.connectionID.withLock { $0 } } })
        var offered: [String: [UInt32]] = [:]
        for index in answer.taken {
            let section = answer.offer.media[index]
            guard section.peerSends, let id = section.streamID, id != own, !ours.contains(id) else { continue }
            offered[id, default: []] += section.ssrcs
        }
        let ended = state.withLock { s -> [Stream] in
            let gone = s.streams.values.filter { offered[$0.connectionID] == nil }
            for stream in gone { s.streams[stream.connectionID] = nil }
            for (id, ssrcs) in offered {
                if s.streams[id] == nil {
                    s.streams[id] = Stream(connectionID: id, ssrcs: ssrcs, publisher: nil, seenAt: MonotonicClock.now)
                } else {
                    s.streams[id]?.ssrcs = ssrcs
                }
            }
            if re { s.reOffers += 1 }
            return gone
        }
        routes.withLock { table in
            for stream in ended { for ssrc in stream.ssrcs { table[ssrc] = nil } }
            for (id, ssrcs) in offered {
                guard let publisher = state.withLock({ $0.streams[id]?.publisher }) else { continue }
                for ssrc in ssrcs { table[ssrc] = publisher }
            }
        }
        for stream in ended { stream.publisher?.left() }
    }

    /// Names and tracks for the streams that have waited for their notify (or `force`: now).
    private func resolvePending(_ join: RoomJoin, force: Bool = false) {
        let now = MonotonicClock.now
        let ready = state.withLock { s -> [(Stream, SoraMessage.Connection?)] in
            s.streams.values.filter { stream in
                stream.publisher == nil
                    && (force || s.known[stream.connectionID] != nil
                        || now - stream.seenAt >= .seconds(Self.nameGrace))
            }.map { ($0, s.known[$0.connectionID]) }
        }
        for (stream, known) in ready {
            let clientID = known?.clientID
            let name = Self.name(of: known, key: target.nameKey) ?? clientID ?? stream.connectionID
            let returning = clientID.flatMap { id in state.withLock { $0.byClient[id] } }.flatMap {
                $0.isPresent ? nil : $0
            }
            let publisher =
                returning ?? join.publisher(display: name, id: stream.connectionID, fallback: stream.connectionID)
            publisher.present(publisherID: stream.connectionID, clientID: clientID)
            state.withLock { s in
                s.streams[stream.connectionID]?.publisher = publisher
                if let clientID { s.byClient[clientID] = publisher }
            }
            routes.withLock { table in for ssrc in stream.ssrcs { table[ssrc] = publisher } }
        }
    }

    /// Every track silent, the connection and the WebSocket closed (a loss mid-room).
    private func tearDown(_ join: RoomJoin) {
        let streams = state.withLock { s -> [Stream] in
            defer { s.streams = [:] }
            return Array(s.streams.values)
        }
        routes.withLock { $0 = [:] }
        for stream in streams { stream.publisher?.left() }
        client?.close(code: 1001)
        connection?.close()
        connection = nil
        current.withLock { $0.connection = nil }
    }

    // MARK: - Messages

    private func handle(_ message: SoraMessage, join: RoomJoin) throws(WebRTCError) {
        switch message {
        case .reOffer(let sdp):
            try negotiate(sdp, re: true, join: join)
        case .notify(let notify):
            state.withLock { s in
                if s.events.count < Self.maxEvents { s.events.append(.init(notify: notify)) }
                var connections = notify.data
                if let connection = notify.connection { connections.append(connection) }
                for connection in connections where notify.eventType.hasPrefix("connection.") {
                    if notify.eventType == "connection.destroyed" {
                        s.known[connection.connectionID] = s.known[connection.connectionID] ?? connection
                    } else {
                        s.known[connection.connectionID] = connection
                    }
                }
                if notify.eventType == "connection.created", notify.connection?.connectionID == s.ownConnectionID {
                    s.ownCreated = true
                }
            }
        case .push(let data):
            state.withLock { if $0.events.count < Self.maxEvents { $0.events.append(.init(push: data)) } }
        case .other:
            state.withLock { $0.unknownTypes += 1 }
        case .disconnect(let reason):
            throw .signaling("Sora disconnected: \(reason)")
        case .redirect(let location):
            throw .signaling("Sora redirected to \(location) after the offer")
        case .offer:
            throw .signaling("a second offer on one connection")
        case .ping:
            break  // answered on the WebSocket's thread
        }
    }

    /// The WebSocket's thread: pings answered here (a slow join thread never misses one), the rest
    /// queued for the join's thread.
    private func received(_ event: WebSocketEvent, generation mine: Int) {
        let (live, connection, client) = current.withLock { ($0.generation == mine, $0.connection, $0.client) }
        guard live else { return }
        let item: Incoming
        switch event {
        case .text(let text):
            do {
                let message = try SoraMessage.parse(text)
                if case .ping(let wantsStats) = message {
                    state.withLock { $0.pings += 1 }
                    let stats = wantsStats ? Self.stats(connection) : nil
                    if client?.send(text: SoraMessage.pong(stats: stats)) == true { state.withLock { $0.pongs += 1 } }
                    return
                }
                item = .message(message)
            } catch {
                state.withLock { $0.malformed += 1 }
                item = .malformed(error.description)
            }
        case .binary:
            state.withLock { $0.malformed += 1 }
            item = .malformed("Sora sent a binary message")
        case .closed(let code, let reason):
            item = .closed(code: code, reason: reason)
        }
        inbox.withLock { $0.append((mine, item)) }
        arrived.signal()
    }

    /// The next event of the current WebSocket (those of an older one, which can be queued after
    /// ``open(_:)`` cleared the inbox, are dropped), or nil after `timeout` seconds.
    private func next(timeout: Double) -> Incoming? {
        let deadline = MonotonicClock.now + .seconds(max(0, timeout))
        let mine = generation
        func take() -> Incoming? {
            inbox.withLock { queue in
                while !queue.isEmpty {
                    let first = queue.removeFirst()
                    if first.generation == mine { return first.item }
                }
                return nil
            }
        }
        while true {
            if let item = take() { return item }
            if arrived.wait(timeout: deadline.dispatchTime) == .timedOut { return take() }
        }
    }

    /// Packets and sender reports by SSRC to their publisher's track; a BYE silences its stream.
    private func wire(_ connection: PeerConnection) {
        let routes = routes
        connection.onRTP = { packet, arrival in
            routes.withLock { $0[packet.ssrc] }?.deliverShared(packet, arrival: arrival)
        }
        connection.onSenderReport = { report, _ in
            routes.withLock { $0[report.ssrc] }?.stream?.noteSenderReport(report)
        }
        connection.onStreamBye = { ssrc in routes.withLock { $0[ssrc] }?.stream?.leave() }
    }

    // MARK: - Helpers

    /// `stats` of a pong: an RTCStats-shaped `inbound-rtp` entry per stream.
    package static func stats(_ connection: PeerConnection?) -> [JSONValue] {
        let now = Date().timeIntervalSince1970 * 1000
        return (connection?.receptionSnapshot() ?? []).map { stream in
            [
                "type": "inbound-rtp", "kind": "audio", "id": .string("RTCInboundRTPAudioStream_\(stream.ssrc)"),
                "ssrc": .number(Double(stream.ssrc)), "packetsReceived": .number(Double(stream.packetsReceived)),
                "packetsLost": .number(Double(stream.packetsLost)), "jitter": .number(stream.jitter),
                "timestamp": .number(now.rounded()),
            ]
        }
    }

    /// The publisher's name in its notify metadata, if it is a non-empty string.
    package static func name(of connection: SoraMessage.Connection?, key: String) -> String? {
        guard let value = connection?.metadata?[key]?.stringValue, !value.isEmpty else { return nil }
        return value
    }

    /// Every STUN/TURN server of the offer's `config.iceServers` libnice can use, and the URLs it
    /// cannot (never with credentials).
    package static func iceServers(_ offer: SoraMessage.Offer) -> (servers: [ICEServer], skipped: [String]) {
        ICEServer.servers(offer.iceServers.map { ($0.urls, $0.username, $0.credential) })
    }

    /// The servers of the last offer (and `relayOnly`), for ``SoraPublish``'s connection.
    var offeredServers: (servers: [ICEServer], relayOnly: Bool)? { state.withLock { $0.offeredServers } }

    /// `--stun`'s server then the offer's, resolved; what libnice cannot use is one warning per
    /// join (the same offer comes again at every reconnect).
    private func iceServers(_ offer: SoraMessage.Offer, join: RoomJoin) -> [ICEServer] {
        var (servers, skipped) = Self.iceServers(offer)
        var usable = join.configuredServers
        for server in servers {
            if let numeric = server.resolved() { usable.append(numeric) } else { skipped.append(server.description) }
        }
        let first = state.withLock { (s: inout State) -> Bool in
            defer {
                s.offeredServers = (usable, offer.relayOnly)
                s.iceServers = usable.map(\.description)
            }
            return s.offeredServers == nil
        }
        if first, !skipped.isEmpty {
            join.warn(
                "roomtap: warning: Sora's ICE servers \(skipped.joined(separator: ", ")) are not used "
                    + "(libnice takes stun:, turn: and turns: over UDP or TCP, with a username and credential, of a name that resolves)"
            )
        }
        return usable
    }

    package static func describe(code: UInt16, reason: String) -> String {
        reason.isEmpty ? "WebSocket close code \(code)" : "\(reason) (WebSocket close code \(code))"
    }

    /// `count` random letters and digits (ICE credentials of a capability offer).
    static func token(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<count).map { _ in alphabet.randomElement()! })
    }
}

/// What room.json keeps of a Sora join (never the metadata).
public struct SoraReport: Sendable, Codable {
    public var signalingURL: String
    public var channelID: String
    public var connectionID: String?
    public var clientID: String?
    public var sessionID: String?
    public var redirects: [String]
    public var reOffers: Int
    public var pings: Int
    public var pongs: Int
    public var unknownMessages: Int
    public var malformedMessages: Int
    public var reconnects: Int
    /// The STUN/TURN servers used, as URLs without credentials.
    public var iceServers: [String]
    public var events: [Event]

    /// A notify or push, as received (when: wall clock, Unix seconds).
    public struct Event: Sendable, Codable {
        public var at: Double
        public var type: String
        public var eventType: String?
        public var connectionID: String?
        public var clientID: String?
        /// A push's data, as JSON text.
        public var data: String?

        init(notify: SoraMessage.Notify) {
            at = Date().timeIntervalSince1970
            type = "notify"
            eventType = notify.eventType
            connectionID = notify.connection?.connectionID
            clientID = notify.connection?.clientID
        }

        init(push: JSONValue) {
            at = Date().timeIntervalSince1970
            type = "push"
            data = String(push.jsonText.prefix(4096))
        }
    }
}
