import RoomTapCore
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// The adaptive playout delay: it grows when packets arrive late, shrinks when the network calms,
/// and changes only in quiet frames, so no speech is cut and the file keeps the room's length.
@Suite("Opus jitter buffer: adaptive delay")
struct JitterAdaptiveDelayTests {
    /// 30 s of speech-like packets: 5 ms of jitter for 6 s, 120 ms for 10 s, 5 ms again for 14 s.
    static let calm1 = 300
    static let jittery = 500
    static let total = 1500
    static let stream = simulateSender(
        payloads: (0..<total).map { JitterFixtures.speech[$0 % JitterFixtures.speech.count] },
        impairment: Impairment(
            jitterMilliseconds: 5, jitterSteps: [(calm1, 120), (calm1 + jittery, 5)], seed: 11))

    /// Runs the stream through a harness; returns it and the frame count.
    static func run(adaptive: Bool) -> (JitterHarness, Int) {
        let harness = JitterHarness(adaptive: adaptive)
        harness.deliver(stream.arrived)
        let end = roomSample(stream.sent.last!.sendNanos) + 960 + 200 * 48
        let frames = end / 480
        harness.render(frames: frames)
        return (harness, frames)
    }

    /// Late packets (dropped in `insert` or at playout) by the end of frame `frame`.
    static func lateBy(_ harness: JitterHarness, frame: Int) -> Int { harness.lates[frame] }

    @Test func delayGrowsWithJitterThenShrinksAndLateDropsStop() {
        let (h, frames) = Self.run(adaptive: true)
        let s = h.buffer.statistics
        let jitterStart = roomSample(Self.stream.sent[Self.calm1].sendNanos) / 480
        let calmStart = roomSample(Self.stream.sent[Self.calm1 + Self.jittery].sendNanos) / 480
        // Calm: the minimum. Jitter: grows to cover 120 ms (+ the 15 ms guard), within the bound.
        #expect(h.delays[jitterStart - 1] == 2880)
        let peak = h.delays[jitterStart..<calmStart].max()!
        #expect(peak >= 120 * 48 && peak <= 200 * 48, "peak delay \(peak / 48) ms")
        #expect(s.maxDelayMilliseconds == Double(peak) / 48)
        // The growth takes the first seconds; after it (the last 6 s of jitter) nothing is late.
        let settled = jitterStart + 400
        #expect(h.delays[settled] >= 120 * 48, "delay 4 s into the jitter: \(h.delays[settled] / 48) ms")
        let lateBefore = h.buffer.statistics.late
        #expect(lateBefore > 0, "120 ms of jitter against 60 ms made packets late before the delay grew")
        #expect(
            Self.lateBy(h, frame: calmStart) == Self.lateBy(h, frame: settled),
            "late after growth: \(Self.lateBy(h, frame: calmStart) - Self.lateBy(h, frame: settled))")
        // Calm again: back to the minimum, slowly (not before the 5 s history has passed).
        #expect(h.delays[calmStart + 300] >= 120 * 48)
        #expect(h.delays[frames - 1] == 2880, "final delay \(h.delays[frames - 1] / 48) ms")
        #expect(s.delayMilliseconds == 60 && s.minDelayMilliseconds == 60)
        #expect(s.delayAdaptations >= 2 * (peak - 2880) / 480)
        // Exactly room-length output.
        #expect(h.output.count == frames * 480 && h.statuses.count == frames)
    }

    @Test func speechIsNeverCutNorStretched() {
        let (h, frames) = Self.run(adaptive: true)
        let first = roomSample(Self.stream.arrived[0].arrivalNanos)
        let expected = expectedTimeline(packets: Self.stream.sent, start: first + 2880, length: frames * 480 + 20_000)
        func peak(_ a: ArraySlice<Int16>) -> Int { a.map { abs(Int($0)) }.max() ?? 0 }
        var previous: Int?
        var inserted = 0
        var skipped = 0
        var compared = 0
        var exact = 0
        for k in 0..<frames {
            // Output frame k plays timeline frame k - (delay - 60 ms) / 10 ms (no drift here).
            let index = k - (h.delays[k] - 2880) / 480
            let out = h.output[(k * 480)..<((k + 1) * 480)]
            if let p = previous, index == p {
                inserted += 1
                // A frame of delay inserted between two quiet frames (never inside speech).
                // The quiet frame before it, repeated (here: the silence between syllables).
                #expect(Array(out) == Array(h.output[((k - 1) * 480)..<(k * 480)]), "inserted frame \(k)")
                #expect(peak(out) <= 128, "inserted frame \(k) is not quiet")
                let around = peak(h.output[((k - 1) * 480)..<(k * 480)] + h.output[((k + 1) * 480)..<((k + 2) * 480)])
                #expect(around <= 128, "frame inserted next to sound at \(k): peak \(around)")
            } else if let p = previous, index > p + 1 {
                // Frames of delay dropped: they must have been quiet.
                for gone in (p + 1)..<index {
                    skipped += 1
                    let lost = peak(expected[(gone * 480)..<((gone + 1) * 480)])
                    #expect(lost <= 128, "speech cut at timeline frame \(gone): peak \(lost)")
                }
            }
            previous = index
            let clean = expected[(index * 480)..<((index + 1) * 480)]
            if index >= 0 && h.statuses[k] == .normal && peak(clean) > 1000 {
                compared += 1
                if Array(out) == Array(clean) { exact += 1 }
            }
        }
        #expect(inserted > 0 && skipped > 0, "inserted \(inserted) skipped \(skipped)")
        #expect(inserted - skipped == 0, "the delay came back: as many frames inserted as dropped")
        // Wherever audio played (not concealed), it is the clean decode, sample for sample, but
        // for the few frames after a concealment where the decoder state converges.
        #expect(compared > 500 && Double(exact) > 0.95 * Double(compared), "exact \(exact) of \(compared)")
    }

    @Test func aFixedDelayStaysAndKeepsDroppingLatePackets() {
        let (h, frames) = Self.run(adaptive: false)
        let s = h.buffer.statistics
        #expect(h.delays.allSatisfy { $0 == 2880 } && s.delayAdaptations == 0 && s.maxDelayMilliseconds == 60)
        let jitterStart = roomSample(Self.stream.sent[Self.calm1].sendNanos) / 480
        let calmStart = roomSample(Self.stream.sent[Self.calm1 + Self.jittery].sendNanos) / 480
        #expect(Self.lateBy(h, frame: calmStart) - Self.lateBy(h, frame: jitterStart + 400) > 20)
        #expect(h.output.count == frames * 480)
    }

    @Test func aNoisyBackgroundStillAdapts() {
        // Speech over a noise floor around -48 dBFS (no DTX, never digital silence): the pauses
        // are quiet relative to the speech (40 dB below its peak), so the delay still grows.
        var rng = SplitMix64(seed: 5)
        let pcm = TestSignal.speechLike(samples: 200 * 960).map { x in
            Int16(clamping: Int(x) + Int(rng.nextUnit() * 260) - 130)
        }
        let packets = JitterFixtures.encode(pcm)
        let stream = simulateSender(
            payloads: (0..<800).map { packets[$0 % packets.count] },
            impairment: Impairment(jitterMilliseconds: 5, jitterSteps: [(300, 120)], seed: 12))
        let harness = JitterHarness()
        harness.deliver(stream.arrived)
        harness.render(frames: 1700)
        let frames = harness.output.chunks(480)[100..<1500]
        let pauses = frames.filter { $0.map { abs(Int($0)) }.max()! <= 128 }.count
        #expect(pauses < 5, "the noise floor leaves \(pauses) frames under the absolute threshold")
        #expect(harness.delays.last! >= 120 * 48, "delay \(harness.delays.last! / 48) ms")
    }

    @Test func theDelayStaysWithinItsBound() {
        let harness = JitterHarness(maxDelayMilliseconds: 100)
        harness.deliver(Self.stream.arrived)
        harness.render(frames: (Self.calm1 + Self.jittery) * 2)
        #expect(harness.delays.max() == 100 * 48)
        #expect(harness.buffer.statistics.maxDelayMilliseconds == 100)
    }
}

extension Array {
    /// Consecutive slices of `size` elements (the last may be shorter).
    fileprivate func chunks(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
