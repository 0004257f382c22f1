import Foundation
import RoomTapAgent
import RoomTapTestSupport
import Testing

/// The libsoxr converter: 48 → 24 kHz keeps a sine's frequency and level with no alias, streaming
/// in 10 ms frames gives exactly half the samples once flushed and stays aligned with the input,
/// and 24 → 48 kHz brings a band-limited signal back.
@Suite struct ResamplerTests {
    /// Amplitude of `frequency` in `signal` at `rate` (a single-bin DFT), in sample units.
    private func amplitude(of frequency: Double, in signal: ArraySlice<Int16>, rate: Double) -> Double {
        var re = 0.0
        var im = 0.0
        for (k, v) in signal.enumerated() {
            let a = 2 * Double.pi * frequency * Double(k) / rate
            re += Double(v) * cos(a)
            im += Double(v) * sin(a)
        }
        return 2 * sqrt(re * re + im * im) / Double(signal.count)
    }

    @Test func downsamplingKeepsFrequencyAndAmplitudeAndCountsExactly() throws {
        let resampler = try Resampler(inputRate: 48_000, outputRate: 24_000, maxInputSamples: 480)
        let input = TestSignal.sine(frequency: 1_000, samples: 48_000, amplitude: 0.5)
        let out = resampler.stream(input, block: 480)
        #expect(out.count == 24_000, "one second in, half a second's samples out once flushed")
        let middle = out[2_400..<21_600]
        let level = amplitude(of: 1_000, in: middle, rate: 24_000)
        #expect(abs(level - 0.5 * 32_767) < 0.01 * 32_767, "1 kHz level \(level)")
        #expect(amplitude(of: 1_100, in: middle, rate: 24_000) < 50, "the tone stays at 1 kHz")
        // Aligned: output sample k is the input at sample 2k (the filter delay is compensated).
        var worst = 0
        for k in 2_400..<21_600 { worst = max(worst, abs(Int(out[k]) - Int(input[2 * k]))) }
        #expect(worst < 40, "output k differs from input 2k by \(worst)")
    }

    @Test func aToneAboveTheNewNyquistIsFilteredNotAliased() throws {
        let resampler = try Resampler(inputRate: 48_000, outputRate: 24_000, maxInputSamples: 480)
        // 15 kHz would alias to 9 kHz if every other sample were just picked.
        let out = resampler.stream(TestSignal.sine(frequency: 15_000, samples: 24_000, amplitude: 0.5), block: 480)
        let alias = amplitude(of: 9_000, in: out[1_200..<10_800], rate: 24_000)
        #expect(alias < 0.001 * 32_767, "alias at 9 kHz: \(alias)")
    }

    @Test func theLowLatencySettingHoldsBackAtMostAFrameStaysAlignedAndDoesNotAlias() throws {
        let resampler = try Resampler(inputRate: 48_000, outputRate: 24_000, maxInputSamples: 480, lowLatency: true)
        let input = TestSignal.sine(frequency: 1_000, samples: 96_000, amplitude: 0.5)
        var out: [Int16] = []
        var worstHeld = 0
        for f in 0..<200 {
            input[(f * 480)..<((f + 1) * 480)].withUnsafeBufferPointer { out += resampler.process($0) }
            if f >= 10 { worstHeld = max(worstHeld, (f + 1) * 240 - out.count) }
        }
        #expect(worstHeld <= 240, "held back at most 10 ms at 24 kHz: \(worstHeld) samples")
        var worst = 0
        for k in 2_400..<(out.count - 240) { worst = max(worst, abs(Int(out[k]) - Int(input[2 * k]))) }
        #expect(worst < 40, "output k is the input at 2k: off by \(worst)")
        let fast = try Resampler(inputRate: 48_000, outputRate: 24_000, maxInputSamples: 480, lowLatency: true)
        let tone = fast.stream(TestSignal.sine(frequency: 15_000, samples: 48_000, amplitude: 0.5), block: 480)
        let folded = amplitude(of: 9_000, in: tone[1_200..<22_800], rate: 24_000)
        #expect(folded < 0.0001 * 32_767, "a 15 kHz tone is not folded to 9 kHz: \(folded)")
        let level = (tone[1_200..<22_800].reduce(0.0) { $0 + Double($1) * Double($1) } / 21_600).squareRoot()
        #expect(level < 4, "nothing of it below 12 kHz: RMS \(level)")
    }

    @Test func streamingHoldsBackOnlyTheFilterDelay() throws {
        let resampler = try Resampler(inputRate: 48_000, outputRate: 24_000, maxInputSamples: 480)
        let input = TestSignal.sine(frequency: 440, samples: 4_800)
        var produced = 0
        for f in 0..<10 {
            input[(f * 480)..<((f + 1) * 480)].withUnsafeBufferPointer { produced += resampler.process($0).count }
        }
        let held = 2_400 - produced
        #expect(held >= 0 && held <= 720, "held back \(held) samples at 24 kHz (≤ 30 ms)")
        var tail = 0
        while true {
            let t = resampler.flush().count
            if t == 0 { break }
            tail += t
        }
        #expect(produced + tail == 2_400)
    }

    @Test func upsamplingRoundTripCorrelatesWithTheSource() throws {
        let down = try Resampler(inputRate: 48_000, outputRate: 24_000, maxInputSamples: 480)
        let up = try Resampler(inputRate: 24_000, outputRate: 48_000, maxInputSamples: 480)
        let source = TestSignal.speechLike(samples: 96_000)
        let back = up.stream(down.stream(source, block: 480), block: 240)
        #expect(back.count == 96_000)
        var dot = 0.0
        var a2 = 0.0
        var b2 = 0.0
        for i in 4_800..<91_200 {
            let a = Double(source[i])
            let b = Double(back[i])
            dot += a * b
            a2 += a * a
            b2 += b * b
        }
        let correlation = dot / sqrt(a2 * b2)
        #expect(correlation > 0.99, "correlation \(correlation)")
    }
}

extension Resampler {
    /// Streams `input` through `block` samples at a time, then flushes; returns all the output.
    func stream(_ input: [Int16], block: Int) -> [Int16] {
        var out: [Int16] = []
        var i = 0
        while i < input.count {
            let n = min(block, input.count - i)
            input[i..<(i + n)].withUnsafeBufferPointer { out += process($0) }
            i += n
        }
        while true {
            let tail = flush()
            if tail.isEmpty { break }
            out += tail
        }
        return out
    }
}
