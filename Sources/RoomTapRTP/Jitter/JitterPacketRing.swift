import Synchronization

/// The jitter buffer's packet store: a fixed ring of slots indexed by extended sequence number
/// (`extended % capacity`, like pion's samplebuilder), so 16-bit wraparound costs nothing, with
/// the payload bytes in one circular byte arena sized for the bitrate rather than a worst-case
/// 1500-byte slot per packet. Nothing is allocated after init.
///
/// One producer (the receive thread) writes slots; the consumers (the playouts, on the room
/// clock's thread) read them. A slot is handed over by its stamp: the producer copies the payload
/// into the arena and the metadata into the slot, then publishes `extended + 1` with release
/// ordering; a consumer loads the stamp with acquire ordering and reads the slot only if it names
/// the packet it wants. Only the producer writes, and only slots and arena bytes of packets every
/// consumer has passed (the owner, the jitter buffer, passes the read position in), so a consumer
/// never sees a packet change under it.
///
/// Thread: `write` and `hasRoom` producer only; `packet(at:)` consumers only; `stamp(at:)` either.
final class JitterPacketRing: @unchecked Sendable {
    /// Largest payload a packet may have, in bytes (an Ethernet MTU; Opus packets are far smaller).
    static let maxPayload = 1500

    /// Slots (a power of two).
    let capacity: Int
    /// Bytes of the payload arena.
    let arenaBytes: Int
    private let mask: Int
    private let stamps: UnsafeMutablePointer<Atomic<Int64>>
    private let arena: UnsafeMutableRawPointer
    /// Per slot: where its payload starts, as a count of arena bytes ever written (mod `arenaBytes`
    /// is the offset).
    private let starts: UnsafeMutablePointer<Int>
    private let lengths: UnsafeMutablePointer<Int>
    private let durations: UnsafeMutablePointer<Int>
    private let positions: UnsafeMutablePointer<Int64>
    private let flags: UnsafeMutablePointer<UInt8>
    /// Arena bytes ever written (producer).
    private var written = 0

    /// One stored packet, as a consumer sees it. `payload` points into the arena and stays valid
    /// until every consumer has moved its read position past the packet.
    struct Packet {
        /// Room-timeline position of the packet's first sample before playout delay (samples).
        var position: Int64
        /// Samples per channel (48 kHz).
        var duration: Int
        /// The packet carries in-band FEC for the one before it.
        var hasFEC: Bool
        /// The first packet of a new sender (restart): the decoder is reset before it.
        var startsStream: Bool
        /// The Opus packet.
        var payload: UnsafeRawBufferPointer
    }

    /// Allocates `capacity` (a power of two) slots and an arena of `arenaBytes` (at least
    /// 2 × ``maxPayload``; default: a full slot per packet).
    init(capacity: Int, arenaBytes: Int? = nil) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity is a power of two")
        self.capacity = capacity
        self.arenaBytes = max(2 * Self.maxPayload, arenaBytes ?? capacity * Self.maxPayload)
        mask = capacity - 1
        stamps = .allocate(capacity: capacity)
        for i in 0..<capacity { (stamps + i).initialize(to: Atomic<Int64>(0)) }
        arena = .allocate(byteCount: self.arenaBytes, alignment: 16)
        starts = .allocate(capacity: capacity)
        starts.initialize(repeating: 0, count: capacity)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0, count: capacity)
        durations = .allocate(capacity: capacity)
        durations.initialize(repeating: 0, count: capacity)
        positions = .allocate(capacity: capacity)
        positions.initialize(repeating: 0, count: capacity)
        flags = .allocate(capacity: capacity)
        flags.initialize(repeating: 0, count: capacity)
    }

    deinit {
        stamps.deinitialize(count: capacity)
        stamps.deallocate()
        arena.deallocate()
        starts.deallocate()
        lengths.deallocate()
        durations.deallocate()
        positions.deallocate()
        flags.deallocate()
    }

    /// The extended sequence number held by the slot for `extended`, or nil if it never held one.
    func stamp(at extended: Int64) -> Int64? {
        let s = stamps[Int(extended) & mask].load(ordering: .acquiring)
        return s == 0 ? nil : s - 1
    }

    /// Where a payload of `count` bytes would start (arena bytes ever written), skipping the arena's
    /// tail when it would not fit there contiguously.
    private func placement(of count: Int) -> Int {
        let offset = written % arenaBytes
        return offset + count > arenaBytes ? written + (arenaBytes - offset) : written
    }

    /// True when a payload of `count` bytes fits without overwriting a packet at or after `read`
    /// up to `highest` that is still held (scans those slots: at most ``capacity``). Producer only.
    func hasRoom(for count: Int, read: Int64, highest: Int64) -> Bool {
        let end = placement(of: count) + count
        var oldest = Int.max
        var s = max(read, highest - Int64(capacity) + 1)
        while s <= highest {
            let i = Int(s) & mask
            if stamps[i].load(ordering: .relaxed) == s + 1 { oldest = min(oldest, starts[i]) }
            s += 1
        }
        return oldest == .max || end - oldest <= arenaBytes
    }

    /// Copies a packet into the arena and its slot and publishes it. Producer only; the caller has
    /// checked that the slot is free (its packet is behind every consumer), that
    /// `payload.count <= maxPayload` and ``hasRoom(for:read:highest:)``.
    func write(
        extended: Int64, payload: UnsafeRawBufferPointer, position: Int64, duration: Int, hasFEC: Bool,
        startsStream: Bool
    ) {
        let i = Int(extended) & mask
        let start = placement(of: payload.count)
        if let src = payload.baseAddress {
            (arena + start % arenaBytes).copyMemory(from: src, byteCount: payload.count)
        }
        written = start + payload.count
        starts[i] = start
        lengths[i] = payload.count
        durations[i] = duration
        positions[i] = position
        flags[i] = (hasFEC ? 1 : 0) | (startsStream ? 2 : 0)
        stamps[i].store(extended + 1, ordering: .releasing)
    }

    /// The packet `extended` if its slot holds it. Consumers only.
    func packet(at extended: Int64) -> Packet? {
        let i = Int(extended) & mask
        guard stamps[i].load(ordering: .acquiring) == extended + 1 else { return nil }
        return Packet(
            position: positions[i], duration: durations[i], hasFEC: flags[i] & 1 != 0,
            startsStream: flags[i] & 2 != 0,
            payload: UnsafeRawBufferPointer(start: arena + starts[i] % arenaBytes, count: lengths[i]))
    }
}
