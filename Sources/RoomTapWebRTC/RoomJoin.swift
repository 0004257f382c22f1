import Foundation
public import RoomTapCore
public import RoomTapRTP
import RoomTapSync
import Synchronization

/// roomtap as a WebRTC participant of a room: a signaling adapter (Janus VideoRoom, WHEP, Sora) over one
/// transport core (``PeerConnection``: libnice, OpenSSL DTLS-SRTP, libsrtp2). Every publisher's
/// audio becomes a ``JoinedStream`` of the ``LiveRoom``, so joined tracks take the same exact record
/// path as forwarded ones.
///
/// Life: ``connect()`` before the recorder touches its output directory (a room that does not
/// exist, a wrong pin, a server that is down, ICE or DTLS that fail are one line and no files);
/// ``attach(to:)`` once the live room exists (the publishers so far get their tracks; packets
/// before it are dropped) starts the supervisor thread (`roomtap.join`) that follows publishers
/// coming and going and reconnects broken ones with backoff; ``stop()`` hangs up.
///
/// Thread: `connect`, `attach`, `stop` on one control thread; ``publishers`` anywhere.
public final class RoomJoin: @unchecked Sendable {
    /// What to join.
    public enum Target: Sendable {
        /// A Janus VideoRoom over Janus's HTTP API.
        case janus(JanusVideoRoomTarget)
        /// WHEP endpoints, one track each.
        case whep([WHEPTarget], token: String?)
        /// A Sora channel over Sora's WebSocket signaling, one recvonly connection.
        case sora(SoraTarget)
    }

    /// Settings of the transport.
    public struct Options: Sendable {
        /// A STUN server for server-reflexive candidates (host candidates are enough on one host).
        public var stun: (host: String, port: UInt16)?
        /// The local addresses ICE may use (numeric); empty: every interface.
        public var iceHosts: [String] = []
        /// Seconds a publisher's connection may take to come up.
        public var connectTimeout: Double = 10
        public init() {}
    }

    public let target: Target
    public let options: Options
    let context = ICEContext()
    let certificate: DTLSCertificate
    private let adapter: any JoinAdapter
    private let state = Locked(State())
    /// Told ``RoomBus/Event/warningQueued`` when a warning or the failure is queued.
    private let warningBus = RoomBusLink()
    private let stopping = Atomic<Bool>(false)
    /// The thread, once started; joined when it is stopped.
    private let supervisorThread = Locked<RoomThread?>(nil)

    private struct State {
        var publishers: [JoinedPublisher] = []
        var live: LiveRoom?
        var supervising = false
        var warnings: [String] = []
        var published: [PeerConnection] = []
        var failure: String?
    }

    /// A join of `target` (nothing is contacted before ``connect()``).
    public init(target: Target, options: Options = Options()) throws(WebRTCError) {
        self.target = target
        self.options = options
        certificate = try DTLSCertificate()
        switch target {
        case .janus(let room): adapter = JanusVideoRoomJoin(room)
        case .whep(let endpoints, let token): adapter = WHEPJoin(endpoints, token: token)
        case .sora(let channel): adapter = SoraJoin(channel)
        }
    }

    /// Joins: signaling, then a connection to every publisher present, each up (DTLS) before this
    /// returns. Throws the first failure as one line.
    public func connect() throws(WebRTCError) {
        try adapter.connect(self)
    }

    /// The room's tracks from here on: every publisher so far gets its track; the supervisor starts.
    public func attach(to live: LiveRoom) {
        let present = state.withLock { s -> [JoinedPublisher] in
            s.live = live
            s.supervising = true
            return s.publishers
        }
        for publisher in present { makeTrack(for: publisher, in: live) }
        supervisorThread.withLock { thread in
            thread = RoomThread.start("roomtap.join") { [self] in
                adapter.supervise(self)
            }
        }
    }

    /// Hangs up every connection and leaves the room. Idempotent.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if state.withLock({ $0.supervising }) { supervisorThread.withLock { $0 }?.join() }
        adapter.close(self)
        for publisher in publishers { publisher.connection?.close() }
        for connection in state.withLock({ $0.published }) { connection.close() }
        context.stop()
    }

    /// Publishes into the room as `display` (Janus VideoRoom `publish`; in a Sora channel a second,
    /// `sendonly` connection, ``SoraJoin/publish(_:ssrc:display:join:)``): a connection whose
    /// ``PeerConnection/sendRTP(_:length:)`` reaches every participant, up before this returns.
    /// Throws for WHEP (egress only) and when the server refuses. Call after ``connect()``. Send
    /// with `ssrc` (the SDP announced it) and `payloadType` (Opus's, as negotiated: ours, 111, when
    /// we offered; the server's when it offered, as Sora does).
    public func publish(display: String) throws(WebRTCError) -> (
        connection: PeerConnection, ssrc: UInt32, payloadType: UInt8
    ) {
        let sora = adapter as? SoraJoin
        let servers = sora?.offeredServers ?? (configuredServers, false)
        let connection = PeerConnection(
            context: context, certificate: certificate, servers: servers.servers, relayOnly: servers.relayOnly,
            hosts: options.iceHosts)
        // Its loss mid-room is said once; it is not made again (the recording goes on).
        let what = sora != nil ? "sendonly Sora connection" : "publisher connection"
        connection.onEnded = { [weak self] reason in
            self?.warn(
                "roomtap: warning: the agent's \(what) was lost (\(reason)); the room no longer hears the agent "
                    + "(it is not connected again; the recording goes on)")
        }
        let ssrc = UInt32.random(in: 1...UInt32.max)
        var payloadType: UInt8 = 111
        if let sora {
            payloadType = try sora.publish(connection, ssrc: ssrc, display: display, join: self)
        } else if let janus = adapter as? JanusVideoRoomJoin {
            try janus.publish(connection, ssrc: ssrc, display: display, timeout: options.connectTimeout)
        } else {
            throw .signaling("publishing needs a room joined with --join (WHEP endpoints only play)")
        }
        state.withLock { $0.published.append(connection) }
        return (connection, ssrc, payloadType)
    }

    /// What we publish (``publish(display:)``), in order.
    public var published: [PeerConnection] { state.withLock { $0.published } }

    /// Every publisher so far, in the order they appeared.
    public var publishers: [JoinedPublisher] { state.withLock { $0.publishers } }

    /// What a Sora join saw (its connection, notify and push events, reconnects); nil for others.
    public var soraReport: SoraReport? { (adapter as? SoraJoin)?.report }

    /// The line that ended the join mid-room (a server that kept refusing to take it back), once
    /// it has; the room's joined tracks are silent from then on. Any thread.
    public var failure: String? { state.withLock { $0.failure } }

    /// Problems the join survived (a publisher that could not be reached, a reconnect), for the
    /// report; taken once each.
    public func takeWarnings() -> [String] {
        state.withLock { s in
            defer { s.warnings = [] }
            return s.warnings
        }
    }

    /// Posts ``RoomBus/Event/warningQueued`` to `bus` whenever a warning or the failure is
    /// queued, so that its drainer takes them (``takeWarnings()``, ``failure``) when they come
    /// rather than by polling. Any thread; the last bus given wins.
    public func postWarnings(to bus: RoomBus) { warningBus.connect(bus) }

    // MARK: - For the adapters

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func fail(_ line: String) {
        state.withLock { $0.failure = $0.failure ?? line }
        warningBus.post(.warningQueued)
    }

    func warn(_ line: String) {
        state.withLock { if $0.warnings.count < 100 { $0.warnings.append(line) } }
        warningBus.post(.warningQueued)
    }

    /// The publisher named `display` (a returning one: the same), or a new one.
    func publisher(display: String, id: String, fallback: String) -> JoinedPublisher {
        let sanitized = TrackNaming.sanitize(display, fallback: fallback)
        let (publisher, isNew, live) = state.withLock { s -> (JoinedPublisher, Bool, LiveRoom?) in
            if let existing = s.publishers.first(where: { $0.name == sanitized && !$0.isPresent })
                ?? s.publishers.first(where: { $0.publisherID == id })
            {
                return (existing, false, s.live)
            }
            let name = TrackNaming.unique(sanitized, taken: Set(s.publishers.map(\.name)))
            let publisher = JoinedPublisher(name: name, publisherID: id)
            s.publishers.append(publisher)
            return (publisher, true, s.live)
        }
        if isNew, let live { makeTrack(for: publisher, in: live) }
        return publisher
    }

    /// `--stun`'s server, resolved (none when its name does not resolve).
    var configuredServers: [ICEServer] {
        guard let stun = options.stun, let server = ICEServer(kind: .stun, host: stun.host, port: stun.port).resolved()
        else { return [] }
        return [server]
    }

    /// A connection for `publisher`, its packets routed to the publisher's track.
    func makeConnection(for publisher: JoinedPublisher) -> PeerConnection {
        let connection = PeerConnection(
            context: context, certificate: certificate, servers: configuredServers, hosts: options.iceHosts)
        publisher.route(connection)
        return connection
    }

    private func makeTrack(for publisher: JoinedPublisher, in live: LiveRoom) {
        guard publisher.stream == nil else { return }
        if let stream = live.addJoinedTrack(name: publisher.name) {
            publisher.attach(stream)
        } else {
            warn("roomtap: \(publisher.name) is not recorded: the room has --max-tracks tracks already")
        }
    }
}

/// One signaling protocol: how to reach the publishers of a room.
///
/// Thread: `connect` and `close` on the join's control thread, `supervise` on its supervisor thread.
protocol JoinAdapter: AnyObject, Sendable {
    /// Signaling and a connection to every publisher present.
    func connect(_ join: RoomJoin) throws(WebRTCError)
    /// Follows publishers until `join.isStopping` (checks it at least twice a second).
    func supervise(_ join: RoomJoin)
    /// Hangs up at the server.
    func close(_ join: RoomJoin)
}

/// Seconds to wait before the `attempt`-th reconnection (1, 2, 4, ... 30, with ±20 % jitter).
func reconnectDelay(attempt: Int) -> Double {
    let base = min(30, pow(2, Double(max(0, attempt - 1))))
    return base * Double.random(in: 0.8...1.2)
}
