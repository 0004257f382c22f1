import RoomTapSync

/// One stream slot of a live room, allocated when the room is made: the participant once its
/// track exists, and until then the stream's first packets, held in storage of the slot's own.
///
/// A new stream costs the receive thread no allocation and runs no handler there: it claims the
/// slot (``ParticipantDirectory``), holds the packets that come before the control thread has made
/// the track (``RoomBus/Event/streamAppeared(slot:port:)``), and hands them to the track's jitter
/// buffer, in arrival order and with their arrival times, at the first packet after.
///
/// Thread: ``hold(_:arrival:)``, ``takeHeld(into:)`` and ``claimPost()`` on the receive thread
/// (one for every socket, see ``RTPReceiver``); ``publish(_:)`` on the control thread;
/// ``participant`` anywhere.
final class StreamSlot: @unchecked Sendable {
    /// Packets held at most (at 20 ms a packet: 640 ms for the control thread to make the track).
    static let heldPackets = 32
    /// Bytes of a held packet's payload at most (an RTP datagram within an Ethernet MTU).
    static let maxPayloadBytes = 1_500

    private let current = Locked<LiveParticipant?>(nil)
    // Receive thread only.
    private let payloads: UnsafeMutableRawBufferPointer
    private var lengths: [Int]
    private var sequences: [UInt16]
    private var timestamps: [UInt32]
    private var ssrcs: [UInt32]
    private var arrivals: [UInt64]
    private var held = 0
    private var posted = false
    /// Packets that found the slot's storage full (not heard; counted).
    private(set) var overflowed = 0

    init() {
        payloads = .allocate(byteCount: Self.heldPackets * Self.maxPayloadBytes, alignment: 16)
        lengths = Array(repeating: 0, count: Self.heldPackets)
        sequences = Array(repeating: 0, count: Self.heldPackets)
        timestamps = Array(repeating: 0, count: Self.heldPackets)
        ssrcs = Array(repeating: 0, count: Self.heldPackets)
        arrivals = Array(repeating: 0, count: Self.heldPackets)
    }

    deinit { payloads.deallocate() }

    /// The slot's participant, nil until the control thread has made its track.
    var participant: LiveParticipant? { current.withLock { $0 } }

    /// Control thread: the participant made for the slot; the receive thread delivers to it from
    /// its next packet on.
    func publish(_ participant: LiveParticipant) { current.withLock { $0 = participant } }

    /// Receive thread: true the first time only (the stream is then posted to the bus once).
    func claimPost() -> Bool {
        defer { posted = true }
        return !posted
    }

    /// Receive thread: keeps a copy of `packet` until the track exists; false (counted) when the
    /// slot holds ``heldPackets`` already or the payload is larger than ``maxPayloadBytes``.
    @discardableResult
    func hold(_ packet: RTPPacket, arrival: UInt64) -> Bool {
        let payload = packet.payload
        guard held < Self.heldPackets, payload.count <= Self.maxPayloadBytes else {
            overflowed += 1
            return false
        }
        let at = payloads.baseAddress! + held * Self.maxPayloadBytes
        if let source = payload.baseAddress, !payload.isEmpty { at.copyMemory(from: source, byteCount: payload.count) }
        lengths[held] = payload.count
        sequences[held] = packet.sequenceNumber
        timestamps[held] = packet.timestamp
        ssrcs[held] = packet.ssrc
        arrivals[held] = arrival
        held += 1
        return true
    }

    /// Receive thread: hands every held packet to `participant` in arrival order and forgets
    /// them; true when there were any (the stream's first delivery).
    func takeHeld(into participant: LiveParticipant) -> Bool {
        guard held > 0 else { return false }
        for i in 0..<held {
            let payload = UnsafeRawBufferPointer(
                start: payloads.baseAddress! + i * Self.maxPayloadBytes, count: lengths[i])
            participant.deliver(
                ssrc: ssrcs[i], sequence: sequences[i], timestamp: timestamps[i], payload: payload,
                arrival: arrivals[i])
        }
        held = 0
        return true
    }
}
