import Foundation

/// A sine wave test source: `amplitude * sin(2π f n / 48000 + phase)`, rounded, in every channel
/// (the right channel shifted by `stereoPhase` radians). See ``SyntheticSource``.
public final class SineSource: SyntheticSource, @unchecked Sendable {
    /// Frequency in Hz.
    public let frequency: Double
    /// Peak value (≤ 32767).
    public let amplitude: Double
    /// Starting phase in radians.
    public let phase: Double
    /// Extra phase of the right channel, in radians.
    public let stereoPhase: Double

    public init(
        frequency: Double, amplitude: Double = 16384, phase: Double = 0, stereoPhase: Double = 0,
        channels: Int = 1, offset: Int64 = 0, length: Int64? = nil
    ) {
        self.frequency = frequency
        self.amplitude = min(amplitude, 32767)
        self.phase = phase
        self.stereoPhase = stereoPhase
        super.init(channels: channels, offset: offset, length: length)
    }

    public override func value(at n: Int64, channel: Int) -> Int16 {
        let angle = 2 * Double.pi * frequency * Double(n) / 48_000 + phase + (channel == 1 ? stereoPhase : 0)
        return Int16((amplitude * sin(angle)).rounded())
    }
}
