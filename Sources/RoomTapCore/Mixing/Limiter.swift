import Foundation

/// A brick-wall peak limiter for the mix: sums of several loud speakers never wrap and never clip.
///
/// Works on 1 ms blocks (48 samples per channel), linked across channels, with no look-ahead (so
/// the mix is not delayed). For each block it computes the gain that brings the block's peak to the
/// ceiling; the applied gain is interpolated linearly inside each block and never exceeds the
/// gain needed by the block or the next one, so every output sample stays within the ceiling.
/// Attack is immediate; release is smooth (`releaseDecibelsPerSecond`). A signal whose peaks stay
/// within the ceiling passes through unchanged, sample for sample.
///
/// Thread: confined to one thread (the room clock's). `process` neither allocates nor blocks.
public struct Limiter: Sendable {
    /// Samples per channel in one gain block (1 ms).
    public static let blockLength = 48
    /// Largest output magnitude.
    public let ceiling: Float
    /// How fast the gain recovers after a peak, in dB per second.
    public let releaseDecibelsPerSecond: Float
    private let releaseFactorPerBlock: Float
    /// The gain applied at the end of the last processed frame (1 = unity).
    public private(set) var gain: Float = 1

    /// Creates a limiter. The default ceiling is full scale.
    public init(ceiling: Float = 32767, releaseDecibelsPerSecond: Float = 40) {
        self.ceiling = ceiling
        self.releaseDecibelsPerSecond = releaseDecibelsPerSecond
        let dbPerBlock = releaseDecibelsPerSecond * Float(Self.blockLength) / Float(AudioFrame.sampleRate)
        releaseFactorPerBlock = powf(10, dbPerBlock / 20)
    }

    /// Limits `frames` samples per channel of interleaved `input` into `output` (Int16, rounded).
    /// `frames` must be a multiple of ``blockLength``.
    public mutating func process(
        _ input: UnsafePointer<Float>, frames: Int, channels: Int, into output: UnsafeMutablePointer<Int16>
    ) {
        let blocks = frames / Self.blockLength
        let blockSamples = Self.blockLength * channels
        var wanted = desiredGain(input, block: 0, blockSamples: blockSamples)
        for b in 0..<blocks {
            let next = b + 1 < blocks ? desiredGain(input, block: b + 1, blockSamples: blockSamples) : wanted
            let start = min(gain, wanted)
            let end = min(min(start * releaseFactorPerBlock, 1), wanted, next)
            let base = b * blockSamples
            if start == 1 && end == 1 {
                for i in 0..<blockSamples { output[base + i] = Self.toInt16(input[base + i]) }
            } else {
                let step = (end - start) / Float(Self.blockLength)
                for f in 0..<Self.blockLength {
                    let g = start + step * Float(f + 1)
                    for c in 0..<channels {
                        let i = base + f * channels + c
                        output[i] = Self.toInt16(input[i] * g)
                    }
                }
            }
            gain = end
            wanted = next
        }
    }

    private func desiredGain(_ input: UnsafePointer<Float>, block: Int, blockSamples: Int) -> Float {
        var peak: Float = 0
        let base = block * blockSamples
        for i in 0..<blockSamples { peak = max(peak, abs(input[base + i])) }
        return peak > ceiling ? ceiling / peak : 1
    }

    @inline(__always) private static func toInt16(_ x: Float) -> Int16 {
        Int16(max(-32768, min(32767, x.rounded())))
    }
}
