import RoomTapCore
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// The record playout (the files): placed once on the stream's least-delayed packets, never
/// moved by jitter, every lost packet concealed whole. Compared sample for sample with libopus
/// itself (``ReferenceOpusDecode``) given the packets that arrived and one PLC call per lost one.
@Suite("Jitter buffer: the record playout")
struct JitterRecordTests {
    static let recordDelayMs = 500
    static let lag = recordDelayMs * 48

    /// Where the record puts packet 0 of a stream: the least skew (arrival − timestamp position)
    /// of the packets that arrived before the record's first sample was due, plus the record
    /// delay. Mirrors the harness: deliveries arriving by frame `k` are inserted before it renders.
    static func predictedStart(_ arrived: [Delivery], lag: Int) -> Int {
        let first = arrived[0]
        let anchor = roomSample(first.arrivalNanos) - first.packet.index * 960
        var least = 0
        var earliest = first.packet.index
        var next = 0
        var k = 0
        while true {
            while next < arrived.count && arrived[next].arrivalNanos <= UInt64(k) * 10_000_000 {
                let d = arrived[next]
                least = min(least, roomSample(d.arrivalNanos) - (anchor + d.packet.index * 960))
                earliest = min(earliest, d.packet.index)
                next += 1
            }
            let position = anchor + earliest * 960
            if next > 0 && k * 480 + 480 > position + least + lag {
                return anchor + max(least, k * 480 - lag - position) + lag
            }
            k += 1
        }
    }

    /// The reference decode of what the sender sent, with the dropped packets concealed.
    static func reference(_ sent: [SentPacket], dropped: [Int], fec: Bool = false) -> [Int16] {
        let lost = Set(dropped)
        return ReferenceOpusDecode.decode(
            sent.map { .init(payload: $0.payload, arrived: !lost.contains($0.index)) }, fec: fec)
    }

    /// The first sample where the record (from `start`) differs from `expected` over the length
    /// both cover, or nil.
    static func mismatch(_ output: [Int16], from start: Int, _ expected: [Int16]) -> Int? {
        let n = min(output.count - start, expected.count)
        return firstDifference(Array(output[start..<(start + n)]), Array(expected[..<n]))
    }

    /// Runs one stream into a record-only buffer; returns the harness, what was sent and the start.
    static func record(
        _ payloads: [[UInt8]], impairment: Impairment, livePlayout: Bool = false, startNanos: UInt64 = 13_370_000
    ) -> (harness: JitterHarness, sent: [SentPacket], arrived: [Delivery], dropped: [Int], start: Int) {
        let (sent, arrived, dropped) = simulateSender(
            payloads: payloads, startNanos: startNanos, impairment: impairment)
        let harness = JitterHarness(recordDelayMilliseconds: recordDelayMs, livePlayout: livePlayout)
        harness.deliver(arrived)
        let start = predictedStart(arrived, lag: lag)
        harness.render(until: start + payloads.count * 960)
        return (harness, sent, arrived, dropped, start)
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func lossReorderDuplicatesAndJitterGiveExactlyTheLibopusDecodeWithOnePLCPerLostPacket(seed: UInt64) {
        let impairment = Impairment(
            loss: 0.05, reorder: 0.02, duplicate: 0.01, jitterMilliseconds: 30, seed: seed)
        let r = Self.record(JitterFixtures.speech, impairment: impairment)
        let expected = Self.reference(r.sent, dropped: r.dropped)
        let output = r.harness.output
        #expect(!r.dropped.isEmpty)
        #expect(Self.mismatch(output, from: r.start, expected) == nil, "seed \(seed)")
        #expect(output[..<r.start].allSatisfy { $0 == 0 })
        let s = r.harness.buffer.statistics.record!
        #expect(s.lost == r.dropped.count)
        #expect(s.late == 0)
        #expect(s.concealedSamples == r.dropped.count * 960, "concealedMs = lost + late packets")
        #expect(s.driftCorrectedSamples == 0)
    }

    @Test func withFECTheLostPacketBeforeAnFECPacketIsRecoveredAsLibopusWould() {
        let impairment = Impairment(loss: 0.08, jitterMilliseconds: 30, seed: 4)
        let r = Self.record(JitterFixtures.speechFEC, impairment: impairment)
        let expected = Self.reference(r.sent, dropped: r.dropped, fec: true)
        #expect(Self.mismatch(r.harness.output, from: r.start, expected) == nil)
        let s = r.harness.buffer.statistics.record!
        #expect(s.recoveredByFEC > 0)
        #expect(s.lost == r.dropped.count)
        #expect(s.recoveredByFEC * 960 + s.concealedSamples == r.dropped.count * 960)
    }

    @Test(arguments: [UInt64(5), 6])
    func aJitterStormWithoutLossIsBitExactWithTheCleanDecode(seed: UInt64) {
        let r = Self.record(JitterFixtures.speech, impairment: Impairment(jitterMilliseconds: 100, seed: seed))
        let clean = Self.reference(r.sent, dropped: [])
        #expect(Self.mismatch(r.harness.output, from: r.start, clean) == nil)
        let s = r.harness.buffer.statistics.record!
        #expect(s.lost == 0 && s.late == 0 && s.concealedSamples == 0)
    }

    /// Three speakers sent in the same instant, each with its own jitter: the record anchors each
    /// on its least-delayed packets, so they land together. At the default record delay (2 s: the
    /// anchor is refined over ~100 packets) ten triples of seeds, none chosen, stay within 2 ms
    /// under 0–30 ms jitter and 5 ms under 0–100 ms; each track bit-exact.
    @Test(arguments: [(30.0, 96), (100.0, 240)])
    func streamsSentTogetherLandTogether(jitter: Double, tolerance: Int) {
        let lag = 2000 * 48
        var worst = 0
        for triple in 0..<10 {
            var starts: [Int] = []
            for j in 0..<3 {
                let seed = UInt64(1000 + triple * 3 + j)
                let (sent, arrived, _) = simulateSender(
                    payloads: JitterFixtures.speech, impairment: Impairment(jitterMilliseconds: jitter, seed: seed))
                let start = Self.predictedStart(arrived, lag: lag)
                if triple == 0 {
                    let harness = JitterHarness(recordDelayMilliseconds: 2000, livePlayout: false)
                    harness.deliver(arrived)
                    harness.render(until: start + sent.count * 960)
                    #expect(Self.mismatch(harness.output, from: start, Self.reference(sent, dropped: [])) == nil)
                }
                starts.append(start)
            }
            worst = max(worst, starts.max()! - starts.min()!)
        }
        #expect(worst <= tolerance, "three tracks up to \(Double(worst) / 48) ms apart under \(jitter) ms jitter")
    }

    /// The live playout runs beside the record on its own decoder: adapting to jitter there
    /// never touches the record.
    @Test func theLivePlayoutAdaptsWhileTheRecordStaysExact() {
        var impairment = Impairment(seed: 8)
        impairment.jitterSteps = [(0, 5), (60, 120), (130, 5)]
        let r = Self.record(JitterFixtures.speech, impairment: impairment, livePlayout: true)
        #expect(r.harness.buffer.hasLivePlayout)
        #expect(Self.mismatch(r.harness.output, from: r.start, Self.reference(r.sent, dropped: [])) == nil)
        let s = r.harness.buffer.statistics
        #expect(s.maxDelayMilliseconds > 60, "the live delay rose")
        #expect(s.delayAdaptations > 0)
        #expect(s.record!.late == 0 && s.record!.lost == 0)
        #expect(
            s.live.late > 0, "the 120 ms step came faster than the live delay grew: late there, never in the record")
        #expect(r.harness.liveOutput.count == r.harness.output.count)
        // The live playout is ahead of the record: its audio starts about 440 ms earlier.
        let liveStart = r.harness.liveOutput.firstIndex { $0 != 0 } ?? .max
        let recordStart = r.harness.output.firstIndex { $0 != 0 } ?? .max
        #expect(recordStart - liveStart > 400 * 48 && recordStart - liveStart < 480 * 48)
    }

    @Test func aPacketReorderedBeforeTheFirstArrivalIsStillRecorded() {
        var (sent, arrived, _) = simulateSender(payloads: JitterFixtures.speech, impairment: Impairment(seed: 2))
        // Packet 0 arrives 15 ms after packet 1.
        arrived[0].arrivalNanos = arrived[1].arrivalNanos + 15_000_000
        arrived.swapAt(0, 1)
        let harness = JitterHarness(recordDelayMilliseconds: Self.recordDelayMs, livePlayout: false)
        harness.deliver(arrived)
        let start = Self.predictedStart(arrived, lag: Self.lag)
        harness.render(until: start + sent.count * 960)
        #expect(Self.mismatch(harness.output, from: start, Self.reference(sent, dropped: [])) == nil)
        #expect(harness.buffer.statistics.record!.late == 0)
    }

    /// A long stream at a high bitrate: its payloads wrap the ring's byte arena many times
    /// (2000 packets of ~300 bytes through 64 KiB) and still come out intact, in order.
    @Test func payloadsWrapTheArenaIntact() {
        let loud = JitterFixtures.encode(TestSignal.speechLike(samples: 2000 * 960, seed: 9), bitrate: 120_000)
        #expect(loud.reduce(0) { $0 + $1.count } > 3 * 64 * 1024, "the stream is several arenas long")
        let impairment = Impairment(loss: 0.03, reorder: 0.05, jitterMilliseconds: 40, seed: 21)
        let r = Self.record(loud, impairment: impairment)
        #expect(Self.mismatch(r.harness.output, from: r.start, Self.reference(r.sent, dropped: r.dropped)) == nil)
        #expect(r.harness.buffer.statistics.overflow == 0)
        #expect(r.harness.buffer.statistics.record!.lost == r.dropped.count)
    }

    /// A stream far above the arena's rate (510 kbit/s with a 2 s record delay) overflows: the
    /// packets that do not fit are counted, never written over ones a playout still needs.
    @Test func aStreamAboveTheArenasRateOverflowsAndIsCounted() {
        // 1275-byte single-frame CELT packets (TOC 0xF8: fullband, 20 ms, mono, one frame).
        var rng = SplitMix64(seed: 10)
        let huge = (0..<300).map { _ in [UInt8(0xF8)] + (0..<1274).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        let (_, arrived, _) = simulateSender(payloads: huge, impairment: Impairment(seed: 1))
        let harness = JitterHarness(recordDelayMilliseconds: 2000, livePlayout: false)
        harness.deliver(arrived)
        harness.render(until: 300 * 960 + 2000 * 48 + 48_000)
        let s = harness.buffer.statistics
        #expect(s.overflow > 0)
        #expect(s.record!.lost + s.record!.late <= s.overflow, "what overflowed is concealed, nothing else")
    }

    /// Decoding a frame ahead (every other stream of a room does, to spread decodes over ticks)
    /// changes when packets are decoded, never what the record holds.
    @Test func decodingAheadRecordsTheSameSamples() {
        let impairment = Impairment(loss: 0.05, reorder: 0.02, duplicate: 0.01, jitterMilliseconds: 30, seed: 7)
        let (sent, arrived, dropped) = simulateSender(payloads: JitterFixtures.speechFEC, impairment: impairment)
        let start = Self.predictedStart(arrived, lag: Self.lag)
        var outputs: [[Int16]] = []
        for ahead in [false, true] {
            let harness = JitterHarness(
                recordDelayMilliseconds: Self.recordDelayMs, livePlayout: false, recordLookahead: ahead)
            harness.deliver(arrived)
            harness.render(until: start + sent.count * 960)
            outputs.append(harness.output)
        }
        let same = outputs[0] == outputs[1]
        #expect(same)
        #expect(Self.mismatch(outputs[1], from: start, Self.reference(sent, dropped: dropped, fec: true)) == nil)
    }
}
