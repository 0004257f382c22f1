import Foundation
import RoomTapCore
import RoomTapTestSupport
import Testing

/// The mixer and its limiter, through a real room: pass-through, silence, exact sums, no wrap and
/// smooth gain under overload, channel conversion, mix-minus.
@Suite struct MixerTests {
    /// Runs a room of `sources` plus a mix of them (of `mixChannels`), returns the mix sink and the
    /// frames rendered.
    private func mix(
        _ sources: [SyntheticSource], mixChannels: Int = 1, exclude: Set<Int> = []
    ) -> (sink: CollectingSink, frames: Int) {
        let room = Room(clock: VirtualClock())
        var tracks: [AudioTrack] = []
        for (i, source) in sources.enumerated() {
            tracks.append(room.addTrack(name: "s\(i)", source: source))
        }
        let inputs = tracks.enumerated().filter { !exclude.contains($0.offset) }.map(\.element)
        let sink = CollectingSink()
        room.addMix(name: "mix", inputs: inputs, channels: mixChannels).addSink(sink)
        room.run()
        return (sink, sink.frameCount)
    }

    @Test(arguments: [1, 2])
    func oneSourcePassesThroughUnchanged(channels: Int) {
        let ramp = RampSource(step: 7, channels: channels, length: 48_000)  // every value in ±32767
        let (sink, frames) = mix([ramp], mixChannels: channels)
        #expect(frames == 100)
        #expect(sink.samples == ramp.expectedSamples(0..<48_000))
        #expect(sink.statuses.allSatisfy { $0 == .normal })
    }

    @Test func silenceInGivesSilenceOut() {
        let zeros = ConstantSource(0, length: 48_000)  // .normal frames of zeros
        let late = SineSource(frequency: 440, amplitude: 20_000, offset: 48_000, length: 1)  // .silence until 1 s
        let (sink, frames) = mix([zeros, late])
        #expect(frames == 101)
        #expect(sink.samples.prefix(48_000).allSatisfy { $0 == 0 })
        let (silent, _) = mix([
            SineSource(frequency: 440, offset: 4_800, length: 1), ConstantSource(5, offset: 4_800, length: 1),
        ])
        #expect(silent.statuses.prefix(10).allSatisfy { $0 == .silence }, "all inputs silent: the mix is silence")
        #expect(silent.samples.prefix(4_800).allSatisfy { $0 == 0 })
    }

    @Test func twoSourcesSumExactlyWhenTheyDoNotClip() {
        let a = SineSource(frequency: 440, amplitude: 10_000, length: 96_000)
        let b = SineSource(frequency: 1_234.5, amplitude: 12_000, phase: 1, length: 96_000)
        let (sink, _) = mix([a, b])
        let expected = (0..<Int64(96_000)).map { a.expected(at: $0) + b.expected(at: $0) }
        #expect(sink.samples == expected)
    }

    @Test func eightFullScaleSinesNeverWrapAndTheGainMovesSmoothly() {
        let sines = (1...8).map { k in
            SineSource(frequency: 110 * Double(k) + 3, amplitude: 32_767, phase: Double(k), length: 96_000)
        }
        let (sink, frames) = mix(sines)
        #expect(frames == 200)
        let out = sink.samples
        let sums = (0..<96_000).map { n in sines.reduce(0) { $0 + Int($1.expected(at: Int64(n))) } }
        #expect(sums.map(abs).max()! > 150_000, "the input really overloads")
        var wrapped = 0
        var overshoot = 0
        for i in 0..<96_000 {
            if Int(out[i]) * sums[i] < 0 { wrapped += 1 }
            if abs(Int(out[i])) > abs(sums[i]) { overshoot += 1 }
        }
        #expect(out.allSatisfy { $0 >= -32_767 && $0 <= 32_767 })
        #expect(wrapped == 0, "a sample took the opposite sign of the sum")
        #expect(overshoot == 0, "the gain never exceeds 1")
        #expect(out.map { abs(Int($0)) }.max()! > 30_000, "the limiter uses the range")
        // The gain the limiter applied, where it can be measured to ±0.5/4000.
        var steepestRise = 0.0
        var steepestFallInsideAFrame = 0.0
        for i in 1..<96_000 where abs(sums[i]) > 4_000 && abs(sums[i - 1]) > 4_000 {
            let g0 = Double(out[i - 1]) / Double(sums[i - 1])
            let g1 = Double(out[i]) / Double(sums[i])
            steepestRise = max(steepestRise, g1 - g0)
            if i % 480 != 0 { steepestFallInsideAFrame = max(steepestFallInsideAFrame, g0 - g1) }
        }
        // Release is 40 dB/s (≈0.0001 per sample); attack inside a frame is ramped over a 1 ms block.
        #expect(steepestRise < 0.001, "the gain jumps up by \(steepestRise)")
        #expect(
            steepestFallInsideAFrame < 1.0 / 48 + 0.001, "the gain drops by \(steepestFallInsideAFrame) in one sample")
    }

    @Test func stereoIsAveragedIntoAMonoMixAndMonoDuplicatedIntoAStereoMix() {
        // (-301 + 100) / 2 = -100.5, rounded toward zero: -100.
        let stereo = ConstantSource(-301, right: 100, channels: 2, length: 960)
        let (mono, _) = mix([stereo], mixChannels: 1)
        #expect(mono.samples == [Int16](repeating: -100, count: 960))
        let monoSource = ConstantSource(1_234, length: 960)
        let (wide, _) = mix([monoSource], mixChannels: 2)
        #expect(wide.samples == [Int16](repeating: 1_234, count: 1_920))
        let pair = [ConstantSource(1_000, length: 960), ConstantSource(10, right: 20, channels: 2, length: 960)]
        let (both, _) = mix(pair, mixChannels: 2)
        #expect(both.samples == Array([1_010, 1_020].map(Int16.init).repeated(960)))
    }

    @Test func aMixMinusLeavesATrackOut() {
        let a = ConstantSource(1_000, length: 4_800)
        let b = ConstantSource(200, length: 4_800)
        let agent = ConstantSource(30, length: 4_800)
        let (sink, _) = mix([a, b, agent], exclude: [2])
        #expect(sink.samples == [Int16](repeating: 1_200, count: 4_800))
    }
}

extension Array {
    /// The array repeated `count` times.
    func repeated(_ count: Int) -> [Element] { (0..<count).flatMap { _ in self } }
}
