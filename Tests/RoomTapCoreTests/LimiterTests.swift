import RoomTapCore
import Testing

/// The limiter alone: transparent below the ceiling, never above it, smooth release.
@Suite struct LimiterTests {
    private func run(_ limiter: inout Limiter, _ input: [Float], channels: Int = 1) -> [Int16] {
        var output = [Int16](repeating: 0, count: input.count)
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                limiter.process(
                    i.baseAddress!, frames: input.count / channels, channels: channels, into: o.baseAddress!)
            }
        }
        return output
    }

    @Test func belowTheCeilingTheSignalPassesSampleForSample() {
        var limiter = Limiter()
        let input = (0..<480).map { Float(($0 * 137) % 65_535 - 32_767) }
        #expect(run(&limiter, input) == input.map { Int16($0) })
        #expect(limiter.gain == 1)
    }

    @Test func aStepFarAboveTheCeilingIsHeldAtTheCeilingThenReleasedSlowly() {
        var limiter = Limiter()
        var out: [Int16] = []
        for _ in 0..<10 { out += run(&limiter, [Float](repeating: -200_000, count: 480)) }
        #expect(out.allSatisfy { $0 <= 0 && $0 >= -32_767 })
        #expect(out.suffix(480).allSatisfy { $0 == -32_767 }, "settled at the ceiling")
        // The overload ends: the gain recovers at 40 dB/s, so 10 ms later it is still well below 1.
        let quiet = run(&limiter, [Float](repeating: 1_000, count: 480))
        #expect(quiet.allSatisfy { $0 > 0 && $0 < 1_000 })
        #expect(zip(quiet, quiet.dropFirst()).allSatisfy { $0 <= $1 }, "monotonic release")
        #expect(limiter.gain < 0.2)
    }

    @Test func stereoChannelsAreLimitedTogether() {
        var limiter = Limiter()
        var input: [Float] = []
        for _ in 0..<480 { input += [100_000, 1_000] }  // a loud left reduces the right too (linked)
        let out = run(&limiter, input, channels: 2)
        let rights = stride(from: 1, to: out.count, by: 2).map { out[$0] }
        #expect(rights.last! < 1_000 && rights.last! > 300)
        #expect(stride(from: 0, to: out.count, by: 2).allSatisfy { out[$0] <= 32_767 })
    }
}
