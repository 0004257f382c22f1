public import RoomTapCore
import Synchronization

/// One live participant: a track of the room fed by an ``JitterBuffer``.
///
/// Thread: any thread. The jitter buffer's producer side is used by the receive thread, its
/// consumer side by the room clock; the state here is atomics.
public final class LiveParticipant: Sendable {
    /// The room's track.
    public let track: AudioTrack
    /// The track's source.
    public let buffer: JitterBuffer
    /// The UDP port its packets arrive on.
    public let port: UInt16
    /// The description it was named from, if any (SDP or JSON).
    public let description: ParticipantDescription?
    private let currentSSRC = Atomic<UInt32>(0)
    private let hasSSRC = Atomic<Bool>(false)
    private let leftFlag = Atomic<Bool>(false)
    private let leaveCount = Atomic<Int>(0)

    init(track: AudioTrack, buffer: JitterBuffer, port: UInt16, description: ParticipantDescription?) {
        self.track = track
        self.buffer = buffer
        self.port = port
        self.description = description
    }

    /// The SSRC feeding the track now (nil before the first packet).
    public var ssrc: UInt32? { hasSSRC.load(ordering: .acquiring) ? currentSSRC.load(ordering: .relaxed) : nil }
    /// True while the participant is gone (timeout or RTCP BYE); a returning sender clears it.
    public var hasLeft: Bool { leftFlag.load(ordering: .relaxed) }
    /// Times the participant was marked as left.
    public var leaves: Int { leaveCount.load(ordering: .relaxed) }

    func noteSSRC(_ ssrc: UInt32) {
        currentSSRC.store(ssrc, ordering: .relaxed)
        hasSSRC.store(true, ordering: .releasing)
    }

    /// Marks the participant as left: its track renders silence (timeline kept). Idempotent.
    func leave() {
        guard !leftFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        leaveCount.add(1, ordering: .relaxed)
        buffer.markEnded()
    }

    /// A packet arrived after the participant had left: it is back on the same track.
    func returned() { leftFlag.store(false, ordering: .releasing) }

    /// One RTP packet of the participant's stream into its jitter buffer: a new SSRC is noted (a
    /// sender that restarted continues the track), a participant who had left is back. Thread:
    /// the stream's one receiving thread; allocates nothing.
    func deliver(_ packet: RTPPacket, arrival: UInt64) {
        deliver(
            ssrc: packet.ssrc, sequence: packet.sequenceNumber, timestamp: packet.timestamp, payload: packet.payload,
            arrival: arrival)
    }

    /// ``deliver(_:arrival:)`` of a packet's fields (a packet held in a ``StreamSlot``).
    func deliver(ssrc: UInt32, sequence: UInt16, timestamp: UInt32, payload: UnsafeRawBufferPointer, arrival: UInt64) {
        if self.ssrc != ssrc { noteSSRC(ssrc) }
        if hasLeft { returned() }
        buffer.insert(sequence: sequence, timestamp: timestamp, payload: payload, arrival: arrival)
    }
}
