import Synchronization

/// What one playout (the live one or the record, see ``JitterBuffer``) did with a stream's
/// packets, readable from any thread (relaxed atomics).
///
/// Units: packets are counts, samples are per channel at 48 kHz. `lost` is what never arrived;
/// `late` is what arrived after this playout had passed its place. Each lost or late packet's
/// duration is concealed (Opus PLC) or, for the packet just before one carrying in-band FEC,
/// recovered: `concealedSamples == (lost + late) × packet duration − recoveredByFEC × packet
/// duration` for a stream of one packet duration (a true underrun may conceal up to 2.5 ms more).
///
/// Thread: written by the receive thread (late arrivals) and the room clock's thread; read anywhere.
public final class PlayoutStatistics: Sendable {
    let missedCounter = Atomic<Int>(0)
    let lateArrivalCounter = Atomic<Int>(0)
    let lateDropCounter = Atomic<Int>(0)
    let fecCounter = Atomic<Int>(0)
    let concealedCounter = Atomic<Int>(0)
    let driftCorrectionCounter = Atomic<Int>(0)

    init() {}

    /// Packets that never arrived (passed missing, and not received since).
    public var lost: Int {
        max(0, missedCounter.load(ordering: .relaxed) - lateArrivalCounter.load(ordering: .relaxed))
    }
    /// Packets that arrived after their place had been played, and were dropped.
    public var late: Int {
        lateArrivalCounter.load(ordering: .relaxed) + lateDropCounter.load(ordering: .relaxed)
    }
    /// Missing packets whose audio was decoded from the in-band FEC of the packet after them
    /// (RFC 6716 §2.1.7).
    public var recoveredByFEC: Int { fecCounter.load(ordering: .relaxed) }
    /// Samples per channel synthesised by Opus packet-loss concealment (not counting silence).
    public var concealedSamples: Int { concealedCounter.load(ordering: .relaxed) }
    /// ``concealedSamples`` in milliseconds.
    public var concealedMilliseconds: Double { Double(concealedSamples) / 48 }
    /// Samples dropped or repeated to follow the sender's clock (drift correction).
    public var driftCorrectedSamples: Int { driftCorrectionCounter.load(ordering: .relaxed) }
}
