import RoomTapSync

/// Decides which track an incoming RTP stream belongs to: by the room description (SDP or JSON)
/// when there is one, else by discovery (an unknown SSRC becomes `ssrc-<hex>`), bounded by
/// `maxTracks` so that a flood of SSRCs cannot exhaust memory.
///
/// Rules, in order, for a packet on `port` from `ssrc` with `payloadType`:
/// 1. A described port accepts only its described payload types; an undescribed port (or no
///    description) accepts the dynamic range 96–127 (where Opus lives, RFC 7587 §7) and drops the
///    static types (PCMU, PCMA, ...).
/// 2. A stream already routed keeps its track.
/// 3. A described participant with that port and SSRC claims it.
/// 4. A described participant on that port without an SSRC claims the first SSRC seen there; a
///    later SSRC takes the same track over when the current one has been silent for
///    `takeoverAfter` (a sender that restarted with a new SSRC continues its track).
/// 5. Unless `discover` is set, a packet on a described port whose participants all have SSRCs
///    (and that is not in `discoveryPorts`) is dropped: a room described with SSRCs records those
///    SSRCs only.
/// 6. Otherwise, with a description listing ports, a packet on a port neither described nor in
///    `discoveryPorts` (e.g. an extra `--listen`) is dropped; else the stream becomes a new
///    discovered track while fewer than `maxTracks` exist.
///
/// Thread: any thread (the receive thread); a lock guards the table. Never used on the room clock.
public final class ParticipantDirectory: Sendable {
    /// Where a packet goes.
    public enum Route: Equatable, Sendable {
        /// To the existing track `slot`.
        case existing(slot: Int)
        /// To a new track `slot` named `name`: the caller creates the track, then routes there.
        case new(slot: Int, name: String)
        /// To the existing track `slot`, whose sender restarted with a new SSRC.
        case takeover(slot: Int)
        /// Nowhere.
        case drop(DropReason)
    }

    /// Why a packet was dropped.
    public enum DropReason: String, Sendable, CaseIterable {
        /// Its payload type is not the described Opus type (or a static type when undescribed).
        case unknownPayloadType
        /// `maxTracks` tracks exist already.
        case tooManyTracks
        /// The description lists ports and this is not one of them.
        case unlistedPort
        /// The port's participants are described with SSRCs and this is not one of them (and
        /// discovery was not asked for).
        case undescribedSSRC
    }

    /// One track's entry.
    public struct Slot: Sendable, Equatable {
        /// The track name (described, or `ssrc-<hex>`).
        public let name: String
        /// The description it came from, if any.
        public let participant: ParticipantDescription?
        /// The SSRC now feeding it.
        public var ssrc: UInt32?
        /// Arrival (CLOCK_MONOTONIC ns) of its last packet.
        public var lastArrival: UInt64
    }

    private let description: RoomDescription?
    private let takeoverAfter: UInt64
    private let discoveryPorts: Set<UInt16>
    private let discover: Bool
    /// The described participants of each port, built once so routing a packet allocates nothing.
    private let describedByPort: [UInt16: [ParticipantDescription]]
    private let hasDescribedPorts: Bool
    /// The tracks, the routes to them and the drop counts, under one lock.
    private let table: Locked<Table>

    private struct Key: Hashable {
        let port: UInt16
        let ssrc: UInt32
    }

    /// What the lock guards. Storage for every track and every drop reason is reserved up front, so
    /// a new stream allocates nothing.
    private struct Table {
        var slots: [Slot] = []
        var routes: [Key: Int] = [:]
        var drops: [DropReason: Int] = [:]
        let maxTracks: Int

        init(maxTracks: Int) {
            self.maxTracks = maxTracks
            slots.reserveCapacity(maxTracks)
            routes.reserveCapacity(2 * maxTracks)
            for reason in DropReason.allCases { drops[reason] = 0 }
        }

        mutating func claim(_ described: ParticipantDescription, _ key: Key, _ arrival: UInt64) -> Route {
            let name = described.name ?? SSRCTrackName.name(key.ssrc)
            return add(Slot(name: name, participant: described, ssrc: key.ssrc, lastArrival: arrival), key)
        }

        mutating func add(_ slot: Slot, _ key: Key) -> Route {
            guard slots.count < maxTracks else { return drop(.tooManyTracks) }
            slots.append(slot)
            routes[key] = slots.count - 1
            return .new(slot: slots.count - 1, name: slot.name)
        }

        mutating func drop(_ reason: DropReason) -> Route {
            drops[reason, default: 0] += 1
            return .drop(reason)
        }
    }

    /// `maxTracks` bounds discovered and described tracks together; `takeoverAfter` is in ns;
    /// `discoveryPorts` are ports listened on besides the description's, where any stream is welcome;
    /// `discover` lets SSRCs nobody described on a described port become tracks (rule 5).
    public init(
        description: RoomDescription?, maxTracks: Int = 64, takeoverAfter: UInt64 = 2_000_000_000,
        discoveryPorts: Set<UInt16> = [], discover: Bool = true
    ) {
        self.description = description
        self.discover = discover
        self.discoveryPorts = discoveryPorts
        describedByPort = Dictionary(grouping: description?.participants ?? [], by: \.port)
        hasDescribedPorts = !(description?.participants.isEmpty ?? true)
        self.takeoverAfter = takeoverAfter
        table = Locked(Table(maxTracks: max(1, maxTracks)))
    }

    /// Routes one packet (see the rules above) and records its arrival.
    public func route(port: UInt16, ssrc: UInt32, payloadType: UInt8, arrival: UInt64) -> Route {
        let onPort = describedByPort[port] ?? []
        return table.withLock { t -> Route in
            let accepted =
                onPort.isEmpty
                ? (96...127).contains(payloadType) : onPort.contains { $0.acceptsPayloadType(payloadType) }
            guard accepted else { return t.drop(.unknownPayloadType) }
            let key = Key(port: port, ssrc: ssrc)
            if let slot = t.routes[key] {
                t.slots[slot].lastArrival = arrival
                return .existing(slot: slot)
            }
            if let described = onPort.first(where: { $0.ssrc == ssrc }) { return t.claim(described, key, arrival) }
            for described in onPort where described.ssrc == nil {
                guard let slot = t.slots.firstIndex(where: { $0.participant == described }) else {
                    return t.claim(described, key, arrival)
                }
                if arrival &- t.slots[slot].lastArrival >= takeoverAfter {
                    if let old = t.slots[slot].ssrc { t.routes[Key(port: port, ssrc: old)] = nil }
                    t.slots[slot].ssrc = ssrc
                    t.slots[slot].lastArrival = arrival
                    t.routes[key] = slot
                    return .takeover(slot: slot)
                }
            }
            if !discover, !onPort.isEmpty, !discoveryPorts.contains(port), onPort.allSatisfy({ $0.ssrc != nil }) {
                return t.drop(.undescribedSSRC)
            }
            if hasDescribedPorts, onPort.isEmpty, !discoveryPorts.contains(port) {
                return t.drop(.unlistedPort)
            }
            return t.add(
                Slot(name: SSRCTrackName.name(ssrc), participant: nil, ssrc: ssrc, lastArrival: arrival), key)
        }
    }

    /// The tracks so far, by slot.
    public var allSlots: [Slot] { table.withLock { $0.slots } }

    /// Packets dropped for `reason`.
    public func dropped(_ reason: DropReason) -> Int { table.withLock { $0.drops[reason, default: 0] } }
}
