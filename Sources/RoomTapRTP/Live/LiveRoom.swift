import CLinuxNet
import Foundation
public import RoomTapCore
package import RoomTapSync
import Synchronization

/// A live room: UDP sockets, the receive thread, the routing of streams to tracks, and a jitter
/// buffer per track feeding a ``Room`` driven by a ``RealTimeClock``.
///
/// Described participants (SDP or JSON) get their tracks when the live room is created, so their
/// files exist even if they never send; any other stream gets a track when its first packet
/// arrives (`ssrc-<hex>`; at most `maxTracks` tracks in all). A participant silent for
/// `leaveAfter` seconds, or named in an RTCP BYE, is marked as left (its track renders silence,
/// the timeline goes on); one who comes back continues the same track. RTCP sender reports (on
/// the stream's RTP port) align streams by their senders' wall clock (``SenderClockSync``).
///
/// Thread: `init`, `start`, `stop` on a control thread; the delegate methods on the receive
/// thread; `participants` and the counters anywhere. The receive thread never makes a track nor
/// runs a handler: a new stream claims a ``StreamSlot`` (allocated at init; its first packets are
/// held there) and is posted to the live room's ``RoomBus``. The live room's control thread
/// (`roomtap.live`) drains the bus: it makes the stream's jitter buffer and track (so the room's
/// `onTrackAdded` handler runs there, where opening files is fine) and publishes it to the slot;
/// it also marks silent participants as left.
public final class LiveRoom: RTPReceiverDelegate, @unchecked Sendable {
    /// How the live room listens and decodes.
    public struct Options: Sendable {
        /// Addresses to listen on, besides the ports of the description.
        public var listen: [ListenAddress] = []
        /// Who is expected (SDP or JSON), if known.
        public var description: RoomDescription?
        /// Most tracks, described and discovered together.
        public var maxTracks = 64
        /// Jitter buffer playout delay, in milliseconds: the initial and smallest one.
        public var jitterMilliseconds = 60
        /// The largest playout delay adaptation may reach, in milliseconds.
        public var jitterMaxMilliseconds = 200
        /// Pins the playout delay at ``jitterMilliseconds`` (no adaptation).
        public var jitterFixed = false
        /// The record delay in milliseconds (see ``JitterBuffer``); nil: no separate record
        /// playout (the track renders the live playout).
        public var recordDelayMilliseconds: Int?
        /// With a record delay: whether the live playout runs too (something listens live).
        public var livePlayout = true
        /// Channels of every track.
        public var channels = 1
        /// Seconds without packets after which a participant is marked as left.
        public var leaveAfter: Double = 5
        /// The clock of the control thread's leave deadlines: the real one (``MonotonicClock``, the
        /// clock of packet arrivals), or a virtual one in tests, whose packets then arrive on it.
        package var deadlineClock: any DeadlineClock = SystemDeadlineClock()
        /// Who may send, besides the description's `allow` (either list lets a source in); both
        /// empty: anyone. Others are dropped and counted per socket before parsing.
        public var allow: [SourcePrefix] = []
        /// Whether SSRCs nobody described on a port described with SSRCs become tracks (false: those
        /// SSRCs only; see ``ParticipantDirectory``).
        public var discover = false
        /// Defaults.
        public init() {}
    }

    /// The ``RoomTiming`` a room needs for live streams recorded with these options: everything
    /// else in it reaches the record `recordDelay − jitter` later than it was heard (whole ticks),
    /// the same as a stream at the base live delay; a live playout only when something listens.
    /// The record is the live audio without a record delay. Pure.
    public static func roomTiming(for options: Options) -> RoomTiming {
        guard let record = options.recordDelayMilliseconds else { return RoomTiming() }
        return RoomTiming(
            recordDelayFrames: max(0, record - options.jitterMilliseconds) / 10, livePlayout: options.livePlayout)
    }

    /// The room the tracks live in.
    public let room: Room
    /// Its real-time clock (maps packet arrival to room time).
    public let clock: RealTimeClock
    /// The options given.
    public let options: Options
    /// The receive side (sockets, threads, counters).
    public private(set) var receiver: RTPReceiver!
    private let directory: ParticipantDirectory
    /// The NTP-to-room mapping of RTCP sender reports, shared by every track.
    private let senderClock = SenderClockSync()
    /// Every participant, and the described ones by their description.
    private let people = Locked(People())
    /// One per track the room may have (`maxTracks`), by the directory's slot index.
    private let slots: [StreamSlot]
    /// Streams appeared, posted by the receive thread, drained by the control thread.
    private let bus: RoomBus

    private struct People {
        var described: [(description: ParticipantDescription, participant: LiveParticipant)] = []
        var everyone: [LiveParticipant] = []
    }
    private let stopping = Atomic<Bool>(false)
    /// The thread, once started; joined when it is stopped.
    private let controlThread = Locked<RoomThread?>(nil)
    private let started = Atomic<Bool>(false)

    /// Binds every socket (``bind(_:)``) and adds the described participants' tracks to the room.
    public convenience init(room: Room, clock: RealTimeClock, options: Options) throws(UDPSocket.BindError) {
        try self.init(room: room, clock: clock, options: options, sockets: Self.bind(options))
    }

    /// Binds every socket of `options` (the description's ports, then `options.listen`, which wins
    /// for a port given twice); throws the first bind failure with nothing left open. A recorder
    /// binds them before it touches its output directory (a port in use must not cost the earlier
    /// recording that `--force` would replace), then gives them to
    /// ``init(room:clock:options:sockets:)``.
    public static func bind(_ options: Options) throws(UDPSocket.BindError) -> [UDPSocket] {
        var addresses: [ListenAddress] = []
        for participant in options.description?.participants ?? []
        where !addresses.contains(where: { $0.port == participant.port }) {
            addresses.append(ListenAddress(host: Self.bindHost(participant.address), port: participant.port))
        }
        for address in options.listen {
            addresses.removeAll { $0.port == address.port }
            addresses.append(address)
        }
        var sockets: [UDPSocket] = []
        for address in addresses {
            do {
                sockets.append(try UDPSocket(address: address))
            } catch {
                for socket in sockets { socket.close() }
                throw error
            }
        }
        return sockets
    }

    /// Takes `sockets` (from ``bind(_:)`` with the same options; closed on a failure) and adds the
    /// described participants' tracks to the room.
    public init(
        room: Room, clock: RealTimeClock, options: Options, sockets: [UDPSocket]
    ) throws(UDPSocket.BindError) {
        self.room = room
        self.clock = clock
        self.options = options
        directory = ParticipantDirectory(
            description: options.description, maxTracks: options.maxTracks,
            discoveryPorts: Set(options.listen.map(\.port)), discover: options.discover)
        slots = (0..<max(1, options.maxTracks)).map { _ in StreamSlot() }
        bus = RoomBus(capacity: slots.count + 1)
        let guards: [ReceiveGuard?]
        do {
            guards = try sockets.map { (socket) throws(SRTPContext.SetupError) in
                try Self.receiveGuard(for: socket, options)
            }
        } catch {
            for socket in sockets { socket.close() }
            throw UDPSocket.BindError(address: sockets[0].address, reason: error.description)
        }
        receiver = RTPReceiver(
            sockets: sockets, guards: guards, delegate: self, realtimePriority: room.realtimePriority)
        for participant in options.description?.participants ?? [] {
            let name = participant.trackName
            guard let live = makeParticipant(name: name, port: participant.port, description: participant) else {
                continue
            }
            people.withLock { $0.described.append((participant, live)) }
        }
    }

    /// Every participant so far, in the order their tracks were added, in storage of its own (so
    /// the next join never writes what a reader holds: see `Locked.snapshot`).
    public var participants: [LiveParticipant] { people.withLock { $0.everyone.map { $0 } } }

    /// Packets dropped by routing, by reason.
    public func dropped(_ reason: ParticipantDirectory.DropReason) -> Int { directory.dropped(reason) }

    /// Starts the receive thread (under SCHED_FIFO when the room has a real-time priority) and
    /// the control thread (`roomtap.live`). Idempotent.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        controlThread.withLock { thread in
            thread = RoomThread.start("roomtap.live") { [self] in
                controlLoop()
            }
        }
        receiver.start()
    }

    /// Stops receiving (closes the sockets, ends the threads). The room itself is the caller's to
    /// stop. Idempotent.
    public func stop() {
        receiver.stop()
        guard started.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopping.store(true, ordering: .releasing)
        bus.post(.wake)  // (room for it: one event per slot at most, plus this one; see init)
        controlThread.withLock { $0 }?.join()
    }

    // MARK: - RTPReceiverDelegate (the receive thread)

    public func receiver(
        _ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64
    ) {
        let route = directory.route(
            port: address.port, ssrc: packet.ssrc, payloadType: packet.payloadType, arrival: arrival)
        let slot: Int
        switch route {
        case .existing(let claimed), .takeover(let claimed), .new(let claimed, _): slot = claimed
        case .drop: return
        }
        let stream = slots[slot]
        let known: LiveParticipant? =
            if case .new = route { stream.participant ?? adoptDescribed(slot: slot) } else { stream.participant }
        guard let participant = known else {
            // No track yet: held in the slot until the control thread has made it.
            stream.hold(packet, arrival: arrival)
            if stream.claimPost() { bus.post(.streamAppeared(slot: slot, port: address.port)) }
            return
        }
        let firstDelivery = stream.takeHeld(into: participant)
        participant.deliver(packet, arrival: arrival)
        if case .existing = route, !firstDelivery { return }
        // A new stream (or a new SSRC taking a track over): its report may have come first.
        if let report = senderClock.takeEarlyReport(port: address.port, ssrc: packet.ssrc) {
            participant.buffer.noteSenderReport(ntp: report.ntp, rtpTimestamp: report.rtpTimestamp)
        }
    }

    public func receiver(
        _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64
    ) {
        // Only a stream's first report after its anchor is used (JitterBuffer.noteSenderReport);
        // this runs on the receive thread of the port, the same as the stream's packets.
        var matched = false
        for participant in participants where participant.port == address.port && participant.ssrc == report.ssrc {
            participant.buffer.noteSenderReport(ntp: report.ntpTimestamp, rtpTimestamp: report.rtpTimestamp)
            matched = true
        }
        if !matched {
            // Before the stream's first packet: held until it comes (SenderClockSync, bounded).
            senderClock.holdEarlyReport(
                port: address.port, ssrc: report.ssrc,
                .init(ntp: report.ntpTimestamp, rtpTimestamp: report.rtpTimestamp))
        }
    }

    public func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {
        for participant in participants where participant.port == address.port && participant.ssrc == ssrc {
            participant.leave()
        }
    }

    // MARK: - Tracks

    /// A track fed by a transport of its own (a joined WebRTC publisher, see ``JoinedStream``),
    /// named `name` (the caller makes it unique), counted against `maxTracks`. Nil when the room has
    /// `maxTracks` tracks already or the jitter buffer cannot be made. Thread: a control thread.
    public func addJoinedTrack(name: String) -> JoinedStream? {
        guard people.withLock({ $0.everyone.count }) < options.maxTracks,
            let participant = makeParticipant(name: name, port: 0, description: nil)
        else { return nil }
        return JoinedStream(participant: participant)
    }

    /// Receive thread: the described participant (its track made at init) a newly routed stream
    /// belongs to, published to its slot; nil for a stream nobody described.
    private func adoptDescribed(slot: Int) -> LiveParticipant? {
        guard let description = directory.allSlots[slot].participant,
            let participant = people.withLock({ $0.described.first { $0.description == description }?.participant })
        else { return nil }
        slots[slot].publish(participant)
        return participant
    }

    /// Control thread: the track of a stream the receive thread posted (described or not).
    private func makeTrack(slot: Int, port: UInt16) {
        let claimed = directory.allSlots[slot]
        let existing = claimed.participant.flatMap { description in
            people.withLock { $0.described.first { $0.description == description }?.participant }
        }
        guard
            let participant = existing
                ?? makeParticipant(name: claimed.name, port: port, description: claimed.participant)
        else { return }
        slots[slot].publish(participant)
    }

    private func makeParticipant(name: String, port: UInt16, description: ParticipantDescription?) -> LiveParticipant? {
        // Which records decode a frame ahead is the room's choice (by render thread: see
        // StaggeredSource), made when the track joins.
        guard
            let buffer = JitterBuffer(
                channels: options.channels, codec: description?.codec ?? .opus,
                targetDelayMilliseconds: options.jitterMilliseconds,
                maxDelayMilliseconds: options.jitterMaxMilliseconds, adaptive: !options.jitterFixed,
                recordDelayMilliseconds: options.recordDelayMilliseconds, livePlayout: options.livePlayout,
                senderClock: senderClock, arrivalToRoom: clock.roomTimeMapping)
        else { return nil }
        let track = room.addTrack(name: name, source: buffer, role: .speakerFromNetwork)
        let participant = LiveParticipant(track: track, buffer: buffer, port: port, description: description)
        people.withLock { $0.everyone.append(participant) }
        return participant
    }

    /// What a socket lets through: the allowed sources (the options' and the description's), and
    /// the SRTP keys of the participants on its port. Nil when it lets everything through.
    private static func receiveGuard(for socket: UDPSocket, _ options: Options) throws(SRTPContext.SetupError)
        -> ReceiveGuard?
    {
        let prefixes = options.allow + (options.description?.allow ?? [])
        let keyed = (options.description?.participants ?? []).filter {
            $0.port == socket.address.port && $0.srtp != nil
        }
        guard !prefixes.isEmpty || !keyed.isEmpty else { return nil }
        let srtp = try keyed.isEmpty ? nil : SRTPContext(streams: keyed.map { .init(ssrc: $0.ssrc, keying: $0.srtp!) })
        return ReceiveGuard(allow: prefixes.isEmpty ? nil : SourceFilter(prefixes), srtp: srtp)
    }

    private static func bindHost(_ address: String?) -> String {
        guard let address else { return "0.0.0.0" }
        let bracketed = address.contains(":") ? "[\(address)]:1" : "\(address):1"
        guard let parsed = ListenAddress(bracketed) else { return "0.0.0.0" }
        // Multicast groups are joined by nobody here: listen on every interface instead.
        if !parsed.isIPv6, let first = UInt8(parsed.host.split(separator: ".")[0]), (224...239).contains(first) {
            return "0.0.0.0"
        }
        return parsed.host
    }

    // MARK: - The control thread

    /// Drains the bus (making the tracks of new streams) and marks a participant as left once it
    /// has been silent for `leaveAfter` (its last packet's arrival plus `leaveAfter`, to the
    /// nanosecond, on ``Options/deadlineClock``), waking for each when its silence would reach that
    /// (no polling).
    private func controlLoop() {
        let clock = options.deadlineClock
        let leaveAfter = UInt64(options.leaveAfter * 1e9)
        // No polling: it sleeps on the bus until a stream appears, a stop wakes it, or the first
        // moment a present participant will have been silent for `leaveAfter` (checked again
        // then: packets may have come since), `leaveAfter` at most.
        while !stopping.load(ordering: .acquiring) {
            let now = clock.now.nanoseconds
            var due = now &+ leaveAfter
            for participant in participants where !participant.hasLeft {
                let last = participant.buffer.lastArrival
                guard last > 0 else { continue }
                if now >= last && now - last >= leaveAfter {
                    participant.leave()
                } else {
                    due = min(due, last &+ leaveAfter)
                }
            }
            let deadline = MonotonicClock.Instant(nanoseconds: due)
            if case .streamAppeared(let slot, let port) = bus.next(until: deadline, on: clock) {
                makeTrack(slot: slot, port: port)
            }
        }
    }
}
