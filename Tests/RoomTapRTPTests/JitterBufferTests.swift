import RoomTapCore
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// The jitter buffer driven directly (no sockets): a seeded sender with impairments feeds
/// `insert` on a fake arrival clock, frames are rendered at the room's sample positions.
@Suite("Opus jitter buffer")
struct JitterBufferTests {
    static let delay = 2880  // 60 ms

    /// Runs `payloads` through `impairment` and renders until `tail` samples after the last
    /// packet's playout.
    static func run(
        _ payloads: [[UInt8]], firstSequence: UInt16 = 1000, firstTimestamp: UInt32 = 123_456,
        impairment: Impairment = Impairment()
    ) -> (harness: JitterHarness, sent: [SentPacket], arrived: [Delivery], dropped: [Int], start: Int, length: Int) {
        let (sent, arrived, dropped) = simulateSender(
            payloads: payloads, firstSequence: firstSequence, firstTimestamp: firstTimestamp, impairment: impairment)
        let harness = JitterHarness()
        harness.deliver(arrived)
        let start = roomSample(arrived[0].arrivalNanos) + delay
        harness.render(until: start + payloads.count * 960)
        return (harness, sent, arrived, dropped, start, harness.output.count)
    }

    @Test func aCleanStreamIsTheLibopusDecodePlacedAtAnchorPlusDelay() {
        let r = Self.run(JitterFixtures.speech)
        let expected = expectedTimeline(packets: r.sent, start: r.start, length: r.length)
        #expect(r.start % 480 != 0, "the anchor is not frame-aligned, so placement is checked to the sample")
        #expect(firstDifference(r.harness.output, expected) == nil)
        let s = r.harness.buffer.statistics
        #expect(s.packets == 200)
        #expect(s.lost == 0 && s.late == 0 && s.concealedSamples == 0 && s.duplicates == 0 && s.reordered == 0)
        #expect(s.driftCorrectedSamples == 0)
        #expect(r.harness.statuses.first == .silence)
        #expect(r.harness.statuses[r.start / 480 + 1] == .normal)
        #expect(r.harness.results.allSatisfy { $0 == .accepted })
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func reorderDuplicatesAndJitterWithinTheDelayStaySampleExact(seed: UInt64) {
        let impairment = Impairment(reorder: 0.1, duplicate: 0.1, jitterMilliseconds: 25, seed: seed)
        let r = Self.run(JitterFixtures.speech, impairment: impairment)
        let expected = expectedTimeline(packets: r.sent, start: r.start, length: r.length)
        #expect(firstDifference(r.harness.output, expected) == nil)
        // What the network did, counted the way the buffer must count it.
        var seen = Set<Int>()
        var highest = -1
        var duplicates = 0
        var reordered = 0
        for d in r.arrived {
            if seen.contains(d.packet.index) {
                duplicates += 1
                continue
            }
            if d.packet.index < highest { reordered += 1 }
            seen.insert(d.packet.index)
            highest = max(highest, d.packet.index)
        }
        let s = r.harness.buffer.statistics
        #expect(duplicates > 0 && reordered > 0)
        #expect(s.duplicates == duplicates)
        #expect(s.reordered == reordered)
        #expect(s.lost == 0 && s.late == 0 && s.concealedSamples == 0)
        #expect(s.jitter > 0 && s.jitterMilliseconds < 25)
    }

    @Test func lossWithoutFECIsConcealedPacketForPacketAndKeepsTheTimeline() {
        let r = Self.run(JitterFixtures.speech, impairment: Impairment(loss: 0.08, jitterMilliseconds: 10, seed: 4))
        let s = r.harness.buffer.statistics
        #expect(r.dropped.count >= 5)
        #expect(s.lost == r.dropped.count)
        #expect(s.concealedSamples == r.dropped.count * 960)
        #expect(s.recoveredByFEC == 0)
        let expected = expectedTimeline(packets: r.sent, start: r.start, length: r.length)
        // Exact up to the first loss; after it the decoder state differs, but audio stays in place.
        let firstLoss = r.start + r.dropped[0] * 960
        #expect(firstDifference(Array(r.harness.output[..<firstLoss]), Array(expected[..<firstLoss])) == nil)
        #expect(correlation(r.harness.output[r.start...], expected[r.start...]) > 0.6)
        let concealedFrames = r.harness.statuses.filter { $0 == .concealed }.count
        #expect(concealedFrames >= r.dropped.count && concealedFrames <= r.dropped.count * 3)
    }

    @Test func lossWithFECIsRecoveredFromTheNextPacket() {
        let impairment = Impairment(loss: 0.08, jitterMilliseconds: 10, seed: 4)
        let lossy = Self.run(JitterFixtures.speechFEC, impairment: impairment)
        let clean = Self.run(JitterFixtures.speechFEC, impairment: Impairment(jitterMilliseconds: 10, seed: 4))
        let s = lossy.harness.buffer.statistics
        #expect(lossy.start == clean.start)
        #expect(s.lost == lossy.dropped.count)
        #expect(s.recoveredByFEC > 0)
        // Every lost packet was either recovered from FEC or concealed for its whole duration.
        #expect(s.recoveredByFEC * 960 + s.concealedSamples == lossy.dropped.count * 960)
        let c = correlation(lossy.harness.output[lossy.start...], clean.harness.output[clean.start...])
        #expect(c > 0.8, "FEC audio is close to the clean decode (correlation \(c))")
    }

    @Test func sequenceAndTimestampWrapMidStreamAreExact() {
        let impairment = Impairment(reorder: 0.1, duplicate: 0.05, jitterMilliseconds: 20, seed: 9)
        let r = Self.run(
            JitterFixtures.speech, firstSequence: 65_500, firstTimestamp: UInt32.max - 50 * 960 + 1,
            impairment: impairment)
        #expect(r.sent.contains { $0.sequence == 65_535 } && r.sent.contains { $0.sequence == 0 })
        #expect(r.sent.contains { $0.timestamp < 960 * 200 } && r.sent.contains { $0.timestamp > UInt32.max - 960 })
        let expected = expectedTimeline(packets: r.sent, start: r.start, length: r.length)
        #expect(firstDifference(r.harness.output, expected) == nil)
        let s = r.harness.buffer.statistics
        #expect(s.restarts == 0 && s.lost == 0 && s.late == 0)
    }

    /// Sender A plays 100 packets, then a new sender (new sequence and timestamp base) starts.
    static func restart(pauseNanos: UInt64) -> (JitterHarness, [SentPacket], [SentPacket], Int, Int) {
        let a = simulateSender(payloads: Array(JitterFixtures.speech[0..<100]), firstSequence: 40_000)
        let bStart = a.sent[99].sendNanos + pauseNanos
        let b = simulateSender(
            payloads: Array(JitterFixtures.speech[100..<200]), firstSequence: 7, firstTimestamp: 3_000_000_000,
            startNanos: bStart)
        let harness = JitterHarness()
        harness.deliver(a.arrived + b.arrived)
        let aEnd = roomSample(a.arrived[0].arrivalNanos) + delay + 100 * 960
        harness.render(until: max(roomSample(b.arrived[0].arrivalNanos) + delay, aEnd) + 100 * 960)
        return (harness, a.sent, b.sent, roomSample(a.arrived[0].arrivalNanos), roomSample(b.arrived[0].arrivalNanos))
    }

    @Test func aSenderRestartIsReanchoredAtItsArrival() {
        let (harness, a, b, aArrival, bArrival) = Self.restart(pauseNanos: 1_000_000_000)
        let s = harness.buffer.statistics
        #expect(s.restarts == 1)
        let length = harness.output.count
        let expectedA = expectedTimeline(packets: a, start: aArrival + Self.delay, length: length)
        let aEnd = aArrival + Self.delay + 100 * 960
        #expect(firstDifference(Array(harness.output[..<aEnd]), Array(expectedA[..<aEnd])) == nil)
        // B: a fresh decode placed at its own arrival + delay, silence between (after A's PLC tail).
        let bStart = bArrival + Self.delay
        let expectedB = expectedTimeline(packets: b, start: bStart, length: length)
        #expect(firstDifference(Array(harness.output[bStart...]), Array(expectedB[bStart...])) == nil)
        #expect(harness.output[(aEnd + 9600)..<bStart].allSatisfy { $0 == 0 })
    }

    @Test func aRestartThatWouldOverlapIsPlacedAfterWhatIsAlreadyPlaced() {
        // B starts while A's last packet is still playing: B goes right after A, no overlap.
        let (harness, a, b, aArrival, bArrival) = Self.restart(pauseNanos: 5_000_000)
        #expect(harness.buffer.statistics.restarts == 1)
        let aEnd = aArrival + Self.delay + 100 * 960
        #expect(bArrival + Self.delay < aEnd, "B arrived before A's audio was placed to its end")
        let expectedA = expectedTimeline(packets: a, start: aArrival + Self.delay, length: harness.output.count)
        let expectedB = expectedTimeline(packets: b, start: aEnd, length: harness.output.count)
        #expect(firstDifference(Array(harness.output[..<aEnd]), Array(expectedA[..<aEnd])) == nil)
        #expect(firstDifference(Array(harness.output[aEnd...]), Array(expectedB[aEnd...])) == nil)
    }

    @Test func aPacketLaterThanItsPlayoutPointIsDroppedAndCounted() {
        var (sent, arrived, _) = simulateSender(payloads: JitterFixtures.speech)
        // Packet 50 is held back 100 ms (the target delay is 60 ms).
        let i = arrived.firstIndex { $0.packet.index == 50 }!
        var late = arrived.remove(at: i)
        late.arrivalNanos += 100_000_000
        arrived.append(late)
        arrived.sort { $0.arrivalNanos < $1.arrivalNanos }
        let harness = JitterHarness()
        harness.deliver(arrived)
        let start = roomSample(arrived[0].arrivalNanos) + Self.delay
        harness.render(until: start + 200 * 960)
        let s = harness.buffer.statistics
        #expect(s.late == 1)
        #expect(s.lost == 0, "lost is what never arrived; this one came, late")
        #expect(s.concealedSamples == 960, "concealed: the duration of lost + late packets")
        #expect(harness.results.contains(.late))
        let expected = expectedTimeline(packets: sent, start: start, length: harness.output.count)
        let loss = start + 50 * 960
        #expect(firstDifference(Array(harness.output[..<loss]), Array(expected[..<loss])) == nil)
        sent.removeAll()
    }

    @Test func aDTXGapIsSilenceAndAudioResumesAtItsTimestamp() {
        // 50 packets, a DTX packet (TOC only), one second with nothing sent, then 50 more packets;
        // the sequence continues, the timestamps jump by the gap.
        var payloads = Array(JitterFixtures.speech[0..<50])
        payloads.append([JitterFixtures.speech[49][0] & 0xFC])
        let before = simulateSender(payloads: payloads)
        let gap: UInt32 = 48_000
        let resumeNanos = before.sent[50].sendNanos + 20_000_000 + 1_000_000_000
        let after = simulateSender(
            payloads: Array(JitterFixtures.speech[100..<150]), firstSequence: 1051,
            firstTimestamp: before.sent[50].timestamp &+ 960 &+ gap, startNanos: resumeNanos)
        let harness = JitterHarness()
        harness.deliver(before.arrived + after.arrived)
        let start = roomSample(before.arrived[0].arrivalNanos) + Self.delay
        harness.render(until: start + 101 * 960 + Int(gap))
        let expected = expectedTimeline(packets: before.sent + after.sent, start: start, length: harness.output.count)
        #expect(firstDifference(harness.output, expected) == nil)
        let s = harness.buffer.statistics
        #expect(s.restarts == 0 && s.lost == 0 && s.concealedSamples == 0)
        // Frames wholly inside the gap are silence.
        let gapStart = (start + 51 * 960) / 480 + 1
        let gapEnd = (start + 51 * 960 + Int(gap)) / 480
        #expect(harness.statuses[gapStart..<gapEnd].allSatisfy { $0 == .silence })
        #expect(harness.statuses[gapEnd + 1] == .normal)
    }

    @Test func aSenderThatStopsIsConcealedBrieflyThenSilentAndResumesInPlace() {
        // No DTX packet: the buffer cannot tell loss from a pause, conceals 200 ms, then silence.
        let before = simulateSender(payloads: Array(JitterFixtures.speech[0..<50]))
        let resumeNanos = before.sent[49].sendNanos + 1_020_000_000
        let after = simulateSender(
            payloads: Array(JitterFixtures.speech[100..<150]), firstSequence: 1050,
            firstTimestamp: before.sent[49].timestamp &+ 960 &+ 48_000, startNanos: resumeNanos)
        let harness = JitterHarness()
        harness.deliver(before.arrived + after.arrived)
        let start = roomSample(before.arrived[0].arrivalNanos) + Self.delay
        harness.render(until: start + 100 * 960 + 48_000)
        let s = harness.buffer.statistics
        #expect(s.concealedSamples == 9600)
        #expect(s.lost == 0 && s.restarts == 0)
        let end = start + 50 * 960
        let resume = end + 48_000
        #expect(harness.statuses[(end + 9600) / 480 + 1..<resume / 480].allSatisfy { $0 == .silence })
        #expect(harness.output[(end + 9600)..<resume].allSatisfy { $0 == 0 })
        #expect(harness.output[resume..<(resume + 960)].contains { $0 != 0 })
    }

    @Test func hostilePayloadsAreRejectedOrConcealedWithoutCrashing() {
        let harness = JitterHarness()
        var rng = SplitMix64(seed: 77)
        var deliveries: [Delivery] = []
        for (i, payload) in JitterFixtures.speech.prefix(100).enumerated() {
            let t = 13_000_000 + UInt64(i) * 20_000_000
            deliveries.append(
                Delivery(
                    packet: SentPacket(
                        sequence: UInt16(i), timestamp: UInt32(i * 960), payload: payload, sendNanos: t, index: i),
                    arrivalNanos: t + 5_000_000))
        }
        // Every fourth packet replaced by junk: empty, one byte, bad TOC codes, random bytes, too long.
        let junk: [[UInt8]] = [
            [], [0x03], [0xFF, 0xFF], [0x0B, 0xFF, 0xFF, 0xFF], Array(repeating: 0x5A, count: 1600),
        ]
        for i in stride(from: 4, to: 100, by: 4) {
            let kind = i / 4 % 6
            let payload =
                kind < junk.count
                ? junk[kind] : (0..<(1 + Int(rng.next() % 300))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            deliveries[i].packet.payload = payload
        }
        harness.deliver(deliveries)
        harness.render(frames: 250)
        let s = harness.buffer.statistics
        #expect(s.invalid >= 15)
        #expect(harness.results.filter { $0 == .invalid }.count == s.invalid)
        #expect(harness.output.count == 250 * 480)
        #expect(harness.statuses.contains(.concealed))
        #expect(harness.statuses.contains(.normal))
    }

    @Test func aFloodOfPacketsFarAheadIsBoundedAndCounted() {
        let harness = JitterHarness()
        let payload = JitterFixtures.speech[0]
        var deliveries: [Delivery] = []
        // Nothing is rendered while 900 packets arrive (sequence 0...899): the ring holds 512.
        for i in 0..<900 {
            deliveries.append(
                Delivery(
                    packet: SentPacket(
                        sequence: UInt16(i), timestamp: UInt32(i * 960), payload: payload, sendNanos: 0, index: i),
                    arrivalNanos: 0))
        }
        harness.deliver(deliveries)
        harness.render(frames: 1)
        let s = harness.buffer.statistics
        #expect(harness.results.filter { $0 == .accepted }.count == JitterBuffer.ringCapacity)
        #expect(s.overflow == 900 - JitterBuffer.ringCapacity)
        #expect(s.restarts == 0)
        // The buffer still plays what it holds.
        harness.render(frames: 20)
        #expect(harness.statuses.contains(.normal))
    }

    @Test func markEndedRendersSilenceAndAReturningSenderContinuesTheTrack() {
        let a = simulateSender(payloads: Array(JitterFixtures.speech[0..<50]))
        let harness = JitterHarness()
        harness.deliver(a.arrived)
        harness.render(frames: 150)
        #expect(harness.buffer.lastArrival == a.arrived.last!.arrivalNanos)
        harness.buffer.markEnded()
        harness.buffer.markEnded()
        #expect(harness.buffer.isEnded && !harness.buffer.isFinished)
        harness.render(frames: 100)
        #expect(harness.statuses.suffix(100).allSatisfy { $0 == .silence })
        // The same sender comes back, sequence and timestamps continuing as if nothing happened.
        let back = simulateSender(
            payloads: Array(JitterFixtures.speech[100..<150]), firstSequence: 1050,
            firstTimestamp: a.sent[49].timestamp &+ 960, startNanos: 250 * 10_000_000)
        harness.deliver(back.arrived)
        harness.render(until: roomSample(back.arrived[0].arrivalNanos) + Self.delay + 50 * 960)
        #expect(!harness.buffer.isEnded)
        #expect(harness.buffer.statistics.restarts == 1)
        let start = roomSample(back.arrived[0].arrivalNanos) + Self.delay
        let expected = expectedTimeline(packets: back.sent, start: start, length: harness.output.count)
        #expect(firstDifference(Array(harness.output[start...]), Array(expected[start...])) == nil)
    }

    @Test func aStereoTrackOfAMonoStreamCarriesItOnBothChannels() {
        let (sent, arrived, _) = simulateSender(payloads: Array(JitterFixtures.speech[0..<50]))
        let harness = JitterHarness(channels: 2)
        harness.deliver(arrived)
        let start = roomSample(arrived[0].arrivalNanos) + Self.delay
        harness.render(until: start + 50 * 960)
        let left = stride(from: 0, to: harness.output.count, by: 2).map { harness.output[$0] }
        let right = stride(from: 1, to: harness.output.count, by: 2).map { harness.output[$0] }
        #expect(left == right)
        let expected = expectedTimeline(packets: sent, start: start, length: left.count)
        #expect(correlation(left[...], expected[...]) > 0.99)
        #expect(left[..<start].allSatisfy { $0 == 0 })
    }
}
