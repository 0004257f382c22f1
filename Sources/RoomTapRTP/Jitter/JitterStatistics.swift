import Synchronization

/// Live counters of one jitter buffer, readable from any thread (relaxed atomics: a reading may
/// lag the audio by a frame, and counters read one after the other are not one snapshot).
///
/// Units: packets are counts, `bytes` are payload bytes, samples are per channel at 48 kHz.
/// Thread: written by the jitter buffer's producer (receive thread) and consumer (room clock's
/// thread); read anywhere.
public final class JitterStatistics: Sendable {
    let packetCounter = Atomic<Int>(0)
    let byteCounter = Atomic<Int>(0)
    let duplicateCounter = Atomic<Int>(0)
    let reorderedCounter = Atomic<Int>(0)
    let restartCounter = Atomic<Int>(0)
    let invalidCounter = Atomic<Int>(0)
    let overflowCounter = Atomic<Int>(0)
    let adaptationCounter = Atomic<Int>(0)
    let delaySamples = Atomic<Int64>(0)
    let minDelaySamples = Atomic<Int64>(0)
    let maxDelaySamples = Atomic<Int64>(0)
    let syncSamples = Atomic<Int64>(0)
    let syncUsedFlag = Atomic<Bool>(false)
    /// RFC 3550 Appendix A.8 estimator, scaled by 16 (timestamp units).
    let jitterQ4 = Atomic<Int>(0)

    /// What the live playout did (the low-latency path; see ``JitterBuffer``).
    public let live = PlayoutStatistics()
    /// What the record playout did (the files), nil when the stream has none.
    public let record: PlayoutStatistics?

    init(hasRecord: Bool) { record = hasRecord ? PlayoutStatistics() : nil }

    /// The playout the track renders as its own audio: the record when there is one.
    public var primary: PlayoutStatistics { record ?? live }

    /// Packets handed to `insert` (every call, whatever its result).
    public var packets: Int { packetCounter.load(ordering: .relaxed) }
    /// Payload bytes handed to `insert`.
    public var bytes: Int { byteCounter.load(ordering: .relaxed) }
    /// ``PlayoutStatistics/lost`` of the ``primary`` playout: packets that never arrived.
    public var lost: Int { primary.lost }
    /// ``PlayoutStatistics/recoveredByFEC`` of the ``primary`` playout.
    public var recoveredByFEC: Int { primary.recoveredByFEC }
    /// ``PlayoutStatistics/concealedSamples`` of the ``primary`` playout.
    public var concealedSamples: Int { primary.concealedSamples }
    /// ``concealedSamples`` in milliseconds.
    public var concealedMilliseconds: Double { primary.concealedMilliseconds }
    /// ``PlayoutStatistics/late`` of the ``primary`` playout: arrived after their place was played.
    public var late: Int { primary.late }
    /// Packets received twice (the copy is dropped).
    public var duplicates: Int { duplicateCounter.load(ordering: .relaxed) }
    /// Packets that arrived after a packet with a higher sequence number.
    public var reordered: Int { reorderedCounter.load(ordering: .relaxed) }
    /// Sender restarts detected (sequence or timestamp jumps); each re-anchored the stream.
    public var restarts: Int { restartCounter.load(ordering: .relaxed) }
    /// Packets that were not valid Opus (empty, bad TOC, longer than a slot) and were dropped.
    public var invalid: Int { invalidCounter.load(ordering: .relaxed) }
    /// Packets dropped because they were too far ahead of playout for the ring.
    public var overflow: Int { overflowCounter.load(ordering: .relaxed) }
    /// ``PlayoutStatistics/driftCorrectedSamples`` of the ``primary`` playout.
    public var driftCorrectedSamples: Int { primary.driftCorrectedSamples }
    /// Steps the live playout delay (or the sender-report sync offset) took, each in a quiet frame.
    public var delayAdaptations: Int { adaptationCounter.load(ordering: .relaxed) }
    /// The live playout delay now, in milliseconds (after the stream's anchor: its first packet's
    /// arrival).
    public var delayMilliseconds: Double { Double(delaySamples.load(ordering: .relaxed)) / 48 }
    /// The smallest playout delay so far, in milliseconds.
    public var minDelayMilliseconds: Double { Double(minDelaySamples.load(ordering: .relaxed)) / 48 }
    /// The largest playout delay so far, in milliseconds.
    public var maxDelayMilliseconds: Double { Double(maxDelaySamples.load(ordering: .relaxed)) / 48 }
    /// True once RTCP sender-report timing placed the stream (see ``SenderClockSync``).
    public var senderReportTimingUsed: Bool { syncUsedFlag.load(ordering: .relaxed) }
    /// The shift sender-report timing applied to the stream against its arrival anchor, in
    /// milliseconds (negative: played earlier). 0 without sender reports.
    public var senderReportCorrectionMilliseconds: Double { Double(syncSamples.load(ordering: .relaxed)) / 48 }
    /// RFC 3550 §6.4.1 interarrival jitter, in RTP timestamp units (48 kHz for Opus).
    /// https://www.rfc-editor.org/rfc/rfc3550#section-6.4.1
    public var jitter: Int { jitterQ4.load(ordering: .relaxed) >> 4 }
    /// ``jitter`` in milliseconds.
    public var jitterMilliseconds: Double { Double(jitterQ4.load(ordering: .relaxed)) / 16 / 48 }
}
