import Synchronization

/// The jitter buffer's packet store: a fixed ring of slots indexed by extended sequence number
/// (`extended % capacity`, like pion's samplebuilder), so 16-bit wraparound costs nothing and
/// nothing is allocated after init.
///
/// One producer (the receive thread) writes slots; one consumer (the room clock's thread) reads
/// them. A slot is handed over by its stamp: the producer copies the payload and metadata, then
/// publishes `extended + 1` with release ordering; the consumer loads the stamp with acquire
/// ordering and reads the slot only if it names the packet it wants. Only the producer writes a
/// slot, and only a slot whose packet the consumer has passed (the owner of the ring, the jitter
/// buffer, enforces that through its published read position), so the consumer never sees a slot
/// change under it.
///
/// Thread: `write` producer only; `packet(at:)` consumer only; `stamp(at:)` either side.
final class JitterPacketRing: @unchecked Sendable {
    /// Largest payload a slot holds, in bytes (an Ethernet MTU; Opus packets are far smaller).
    static let maxPayload = 1500

    /// Slots (a power of two).
    let capacity: Int
    private let mask: Int
    private let stamps: UnsafeMutablePointer<Atomic<Int64>>
    private let payloads: UnsafeMutableRawPointer
    private let lengths: UnsafeMutablePointer<Int>
    private let durations: UnsafeMutablePointer<Int>
    private let positions: UnsafeMutablePointer<Int64>
    private let fec: UnsafeMutablePointer<Bool>
    private let restarts: UnsafeMutablePointer<Bool>

    /// One stored packet, as the consumer sees it. `payload` points into the slot and stays valid
    /// until the consumer moves its read position past the packet.
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

    /// Allocates `capacity` (a power of two) slots of ``maxPayload`` bytes.
    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity is a power of two")
        self.capacity = capacity
        mask = capacity - 1
        stamps = .allocate(capacity: capacity)
        for i in 0..<capacity { (stamps + i).initialize(to: Atomic<Int64>(0)) }
        payloads = .allocate(byteCount: capacity * Self.maxPayload, alignment: 16)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0, count: capacity)
        durations = .allocate(capacity: capacity)
        durations.initialize(repeating: 0, count: capacity)
        positions = .allocate(capacity: capacity)
        positions.initialize(repeating: 0, count: capacity)
        fec = .allocate(capacity: capacity)
        fec.initialize(repeating: false, count: capacity)
        restarts = .allocate(capacity: capacity)
        restarts.initialize(repeating: false, count: capacity)
    }

    deinit {
        stamps.deinitialize(count: capacity)
        stamps.deallocate()
        payloads.deallocate()
        lengths.deallocate()
        durations.deallocate()
        positions.deallocate()
        fec.deallocate()
        restarts.deallocate()
    }

    /// The extended sequence number held by the slot for `extended`, or nil if it never held one.
    func stamp(at extended: Int64) -> Int64? {
        let s = stamps[Int(extended) & mask].load(ordering: .acquiring)
        return s == 0 ? nil : s - 1
    }

    /// Copies a packet into its slot and publishes it. Producer only; the caller has checked that
    /// the slot is free (its packet is behind the consumer) and `payload.count <= maxPayload`.
    func write(
        extended: Int64, payload: UnsafeRawBufferPointer, position: Int64, duration: Int, hasFEC: Bool,
        startsStream: Bool
    ) {
        let i = Int(extended) & mask
        let dst = payloads + i * Self.maxPayload
        if let src = payload.baseAddress { dst.copyMemory(from: src, byteCount: payload.count) }
        lengths[i] = payload.count
        durations[i] = duration
        positions[i] = position
        fec[i] = hasFEC
        restarts[i] = startsStream
        stamps[i].store(extended + 1, ordering: .releasing)
    }

    /// The packet `extended` if its slot holds it. Consumer only.
    func packet(at extended: Int64) -> Packet? {
        let i = Int(extended) & mask
        guard stamps[i].load(ordering: .acquiring) == extended + 1 else { return nil }
        return Packet(
            position: positions[i], duration: durations[i], hasFEC: fec[i], startsStream: restarts[i],
            payload: UnsafeRawBufferPointer(start: payloads + i * Self.maxPayload, count: lengths[i]))
    }
}
