import RoomTapCore
import Synchronization

/// The record playout of one stream: what goes into the files. Packets play at a fixed *record
/// delay* after the stream's least-delayed packets, and nothing that adapts ever moves them.
///
/// ## Placement
/// The inserter places packet `T` at timeline position `P(T) = A + (T − T₀)` (`A`: the first
/// packet's arrival) and keeps the least skew `m = min(arrival − P(T))` of the current sender:
/// the packets that crossed the network fastest. The record plays `T` at room sample
/// `P(T) + m + lag`: the anchor is refined by every packet that arrives before the stream's first
/// sample is due (the first `lag` of arrivals, e.g. 25 packets of 20 ms at 500 ms), then fixed
/// for good. A stream placed by an RTCP sender report before then plays at its place on the
/// room's NTP mapping instead (``SenderClockSync``). A later sender (restart) is placed the same
/// way from its own packets, never over audio already placed.
///
/// ## What it decodes
/// Every packet that arrives within the record delay is decoded whole, in order, by the record's
/// own decoder; a packet that never arrived (or came later than the delay) is concealed with one
/// PLC call of its duration, or recovered from the next packet's FEC (``PlayoutDecoder``). So a
/// file equals, sample for sample, what one libopus decoder gives for the packets that arrived
/// and one PLC call per lost packet. When nothing more has arrived by the time it is due (the
/// sender paused, stopped or left: it had the whole record delay to send), the record plays
/// silence, never a concealment tail of audio nobody sent. The only correction ever applied is for a sender whose clock
/// drifts: past the dead band (``JitterBuffer/recordDriftDeadband``, 20 ms, far above what jitter does to the minimum
/// of a 2 s window) a sample is dropped or repeated per frame at its quietest point until the
/// slide is absorbed.
///
/// Thread: confined to the room clock's thread (reads the inserter's atomics; publishes its read
/// position). Nothing allocates after init.
final class RecordPlayout {
    /// The record delay after the stream's least-delayed arrival, in samples (48 kHz).
    let lag: Int64
    /// Samples decoded ahead of the frame being played (0 or one frame). Streams sent together
    /// decode their 20 ms packets on the same tick; giving half of the streams each render thread
    /// owns one frame of lookahead moves their decodes to the other tick, halving the thread's
    /// busiest tick (the room sets it: ``JitterBuffer/decodeAhead(_:)``). The record is the
    /// same (only when it is decoded moves); its delay is that much shorter. Changing it is safe
    /// at any frame: a shorter lookahead finds the samples already decoded.
    var lookahead: Int64
    let line: PlayoutDecoder
    private let ring: JitterPacketRing
    private let state: JitterStreamState
    private var started = false
    /// ``offset`` as published for other threads (room.json is written while the room runs).
    private let publishedOffset = Atomic<Int64>(0)
    private var drift: Int64 = 0
    private var correction: DriftCorrection

    init(
        lag: Int64, driftDeadband: Int64, lookahead: Int64, line: PlayoutDecoder, ring: JitterPacketRing,
        state: JitterStreamState
    ) {
        self.lag = lag
        self.lookahead = lookahead
        correction = DriftCorrection(deadband: driftDeadband)
        self.line = line
        self.ring = ring
        self.state = state
    }

    /// The anchor refinement fixed when the stream started (samples; 0 before). Any thread.
    var offset: Int64 { publishedOffset.load(ordering: .relaxed) }

    /// Renders the record's 10 ms at room sample `roomSample`. Room clock's thread only.
    func render(into out: UnsafeMutablePointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let frames = AudioFrame.samplesPerChannel
        let playout = line.playout
        guard started || start(at: roomSample) else {
            out.update(repeating: 0, count: frames * line.channels)
            return .silence
        }
        if playout.start != roomSample - lag - drift {
            playout.reset(at: roomSample - lag - drift)  // the room skipped frames: keep the timeline
        }
        let adjust = driftAdjustment()
        drift += Int64(adjust)
        line.fill(upTo: playout.start + Int64(frames - adjust) + lookahead, underrunIsSilence: true)
        let status = playout.play(into: out, adjust: adjust)
        state.recordRead.store(line.nextSequence, ordering: .releasing)
        return status
    }

    /// Places the stream and starts playing it if its first sample falls in the frame at
    /// `roomSample`; until then (false) the anchor keeps being refined by new arrivals.
    private func start(at roomSample: Int64) -> Bool {
        let first = state.firstSequence.load(ordering: .acquiring)
        guard first >= 0 else { return false }
        // The earliest packet held: one sent before the first that arrived may be there.
        var earliest = max(0, first - JitterBuffer.earlyPackets)
        while earliest < first && ring.stamp(at: earliest) != earliest { earliest += 1 }
        guard let packet = ring.packet(at: earliest) else { return false }
        var offset: Int64
        if state.syncKnown.load(ordering: .acquiring) {
            offset = state.recordSync.load(ordering: .relaxed)
        } else {
            offset = min(0, state.leastSkew.load(ordering: .relaxed))
        }
        guard roomSample + Int64(AudioFrame.samplesPerChannel) > packet.position + offset + lag else { return false }
        // A refinement that came since the last frame must not put audio before this one.
        offset = max(offset, roomSample - lag - packet.position)
        started = true
        line.nextSequence = earliest
        line.offset = offset
        publishedOffset.store(offset, ordering: .relaxed)
        line.playout.reset(at: roomSample - lag)
        return true
    }

    /// +1 (repeat a sample), -1 (drop one) or 0 for this frame.
    private func driftAdjustment() -> Int {
        let estimate = state.slide.load(ordering: .relaxed)
        guard estimate != .min else { return 0 }
        let adjust = correction.adjustment(error: estimate - drift)
        if adjust != 0 { line.statistics.driftCorrectionCounter.add(1, ordering: .relaxed) }
        return adjust
    }
}
