import COpus
import RoomTapCore
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// An hour of a sender whose clock runs ±200 ppm against the room's: the track must not slide.
@Suite("Opus jitter buffer: sender clock drift")
struct JitterDriftTests {
    /// 49 quiet packets and a loud marker, 20 ms each, 12 kb/s (cheap to decode).
    static let packets: [[UInt8]] = {
        var pcm = [Int16](repeating: 0, count: 50 * 960)
        let tone = TestSignal.sine(frequency: 1000, samples: 960, amplitude: 0.9)
        pcm.replaceSubrange((49 * 960)..<(50 * 960), with: tone)
        var error: Int32 = 0
        let encoder = opus_encoder_create(48_000, 1, OPUS_APPLICATION_VOIP, &error)!
        defer { opus_encoder_destroy(encoder) }
        _ = roomtap_opus_encoder_set_bitrate(encoder, 12_000)
        var packets: [[UInt8]] = []
        var out = [UInt8](repeating: 0, count: 1500)
        for f in 0..<50 {
            let n = pcm.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    opus_encode(encoder, src.baseAddress! + f * 960, 960, dst.baseAddress!, 1500)
                }
            }
            packets.append(Array(out[0..<Int(n)]))
        }
        return packets
    }()

    /// The live playout (5 ms dead band: within a frame) and the record (20 ms dead band: within
    /// 25 ms; its placement never moves otherwise).
    @Test(arguments: [(200.0, false), (-200.0, false), (200.0, true), (-200.0, true)])
    func anHourAtTwoHundredPPMStaysWithinOneFrame(ppm: Double, record: Bool) {
        let hourPackets = 180_000
        let markerEvery = 3000  // one marker a minute
        let buffer = JitterBuffer(
            recordDelayMilliseconds: record ? 2000 : nil, livePlayout: false, arrivalToRoom: fakeMapping)!
        var rng = SplitMix64(seed: 42)
        let period = 20_000_000.0 / (1 + ppm * 1e-6)
        let start: UInt64 = 7_777_000
        func sendTime(_ i: Int) -> UInt64 { start + UInt64((Double(i) * period).rounded()) }
        func payload(_ i: Int) -> [UInt8] { i % markerEvery == 0 ? Self.packets[49] : Self.packets[i % 49] }

        var frame = [Int16](repeating: 0, count: 480)
        var next = 0
        var nextArrival = sendTime(0) + 5_000_000
        var firstOnset: Int?
        var worst = 0
        var markersFound = 0
        var nextMarker = 0
        var starved = 0
        var started = false
        let lastSend = sendTime(hourPackets - 1)
        let frames = Int((lastSend + (record ? 2_050_000_000 : 50_000_000)) / 10_000_000)
        for k in 0..<frames {
            let now = UInt64(k) * 10_000_000
            while next < hourPackets && nextArrival <= now {
                let result = payload(next).withUnsafeBytes {
                    buffer.insert(
                        sequence: UInt16(truncatingIfNeeded: 50_000 + next),
                        timestamp: UInt32(truncatingIfNeeded: 4_000_000_000 + UInt64(next) * 960), payload: $0,
                        arrival: nextArrival)
                }
                #expect(result == .accepted)
                next += 1
                nextArrival = sendTime(next) + 5_000_000 + UInt64(rng.nextUnit() * 5_000_000)
            }
            let status = frame.withUnsafeMutableBufferPointer { buffer.render(into: $0, at: Int64(k) * 480) }
            if status == .normal { started = true } else if started && next < hourPackets { starved += 1 }
            // Marker m belongs at the first marker's onset plus its send-time distance from it.
            let frameStart = k * 480
            guard nextMarker < hourPackets else { continue }
            let predicted = firstOnset.map { $0 + roomSample(sendTime(nextMarker)) - roomSample(sendTime(0)) }
            if let predicted, frameStart + 480 < predicted - 4800 { continue }
            if let i = frame.firstIndex(where: { abs(Int($0)) > 8000 }) {
                let onset = frameStart + i
                if let predicted { worst = max(worst, abs(onset - predicted)) } else { firstOnset = onset }
                markersFound += 1
                nextMarker += markerEvery
            } else if let predicted, frameStart > predicted + 4800 {
                worst = .max  // missing
                nextMarker += markerEvery
            }
        }
        let s = buffer.statistics
        #expect(markersFound >= 60, "markers found: \(markersFound)")
        #expect(worst <= (record ? 1200 : 480), "worst marker displacement \(worst) samples")
        #expect(
            s.lost == 0 && s.late == 0 && s.concealedSamples == 0 && s.overflow == 0,
            "lost \(s.lost) late \(s.late) concealed \(s.concealedSamples) overflow \(s.overflow)")
        #expect(starved == 0)
        // 200 ppm of an hour is 34 560 samples to drop (fast sender) or repeat (slow one).
        #expect(s.driftCorrectedSamples > 30_000 && s.driftCorrectedSamples < 40_000, "\(s.driftCorrectedSamples)")
        // Exactly room-duration samples: one 480-sample frame per tick, whatever the sender did.
        #expect(frames * 480 == Int(UInt64(frames) * 10_000_000 * 48 / 1_000_000))
    }

    /// A sender whose first packets came in a late burst (its stream anchored 300 ms late, its
    /// least skew -300 ms), then a new sender behind the same stream (a reconnect): the new
    /// anchor steps the skew by 300 ms, which is no drifting clock. The record must correct
    /// nothing and play the new sender exactly as libopus decodes it (it stretched it a sample per
    /// frame while the drift estimate kept the first sender's reference).
    @Test func aRestartAfterALateFirstPacketCorrectsNoDrift() {
        var a = simulateSender(payloads: Array(JitterFixtures.speech[0..<150]), firstSequence: 30_000)
        let burst = a.arrived[15].arrivalNanos
        for i in 0..<15 { a.arrived[i].arrivalNanos = burst }
        let b = simulateSender(
            payloads: JitterFixtures.speech + Array(JitterFixtures.speech[0..<150]), firstSequence: 9,
            firstTimestamp: 2_000_000_000, startNanos: a.sent[149].sendNanos + 1_000_000_000)
        let harness = JitterHarness(recordDelayMilliseconds: 2000, livePlayout: false)
        harness.deliver(a.arrived + b.arrived)
        let bArrival = roomSample(b.arrived[0].arrivalNanos)
        harness.render(until: roomSample(b.arrived[349].arrivalNanos) + 96_000 + 20 * 960)
        let s = harness.buffer.statistics
        #expect(s.restarts == 1)
        #expect(s.driftCorrectedSamples == 0, "\(s.driftCorrectedSamples) samples dropped or repeated")
        let expected = expectedTimeline(packets: b.sent, start: 0, length: 350 * 960)
        let firstSound = expected.firstIndex { $0 != 0 } ?? 0
        let output = harness.output
        let onset = output.indices.dropFirst(bArrival + 96_000 - 24_000).first { output[$0] != 0 }
        let start = (onset ?? output.count) - firstSound
        #expect(start + expected.count <= output.count, "the new sender is in the record")
        guard start + expected.count <= output.count else { return }
        #expect(firstDifference(Array(output[start..<(start + expected.count)]), expected) == nil)
    }
}
