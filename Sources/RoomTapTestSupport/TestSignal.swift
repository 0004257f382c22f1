import Foundation

/// Deterministic test signals at 48 kHz, interleaved Int16.
public enum TestSignal {
    /// A sine per channel (channel `c` at `frequency * (1 + c / 2)`, so stereo channels differ).
    public static func sine(
        frequency: Double = 440, samples: Int, amplitude: Double = 0.5, channels: Int = 1
    ) -> [Int16] {
        var out = [Int16](repeating: 0, count: samples * channels)
        for i in 0..<samples {
            for c in 0..<channels {
                let f = frequency * (1 + Double(c) / 2)
                out[i * channels + c] = Int16(amplitude * 32767 * sin(2 * .pi * f * Double(i) / 48_000))
            }
        }
        return out
    }

    /// A linear chirp from `from` to `to` Hz over the signal, same on every channel.
    public static func chirp(
        from: Double = 100, to: Double = 8_000, samples: Int, amplitude: Double = 0.5, channels: Int = 1
    )
        -> [Int16]
    {
        var out = [Int16](repeating: 0, count: samples * channels)
        let k = (to - from) / Double(max(samples, 1))
        for i in 0..<samples {
            let t = Double(i)
            let phase = 2 * .pi * (from * t + k * t * t / 2) / 48_000
            let v = Int16(amplitude * 32767 * sin(phase))
            for c in 0..<channels { out[i * channels + c] = v }
        }
        return out
    }

    /// White noise from a seeded generator (the same seed gives the same samples everywhere).
    public static func noise(samples: Int, amplitude: Double = 0.3, channels: Int = 1, seed: UInt64 = 1) -> [Int16] {
        var rng = SplitMix64(seed: seed)
        return (0..<samples * channels).map { _ in Int16(amplitude * 32767 * (rng.nextUnit() * 2 - 1)) }
    }

    /// Speech-like: noise shaped by a one-pole low-pass, amplitude-modulated at a syllable rate
    /// (~4 Hz) with pauses, so codecs switch modes as they do on voice.
    public static func speechLike(samples: Int, channels: Int = 1, seed: UInt64 = 7) -> [Int16] {
        var rng = SplitMix64(seed: seed)
        var out = [Int16](repeating: 0, count: samples * channels)
        var lp = 0.0
        for i in 0..<samples {
            let t = Double(i) / 48_000
            let syllable = max(0, sin(2 * .pi * 4 * t)) * (sin(2 * .pi * 0.5 * t) > -0.3 ? 1 : 0)
            lp = 0.9 * lp + 0.1 * (rng.nextUnit() * 2 - 1)
            let voiced = 0.5 * sin(2 * .pi * 140 * t) + 0.25 * sin(2 * .pi * 280 * t)
            let v = 0.6 * syllable * (voiced + 2 * lp)
            for c in 0..<channels {
                out[i * channels + c] = Int16(max(-1, min(1, v * (c == 0 ? 1 : 0.8))) * 32000)
            }
        }
        return out
    }
}

/// SplitMix64: a tiny seeded generator for reproducible test data.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    /// Starts from `seed`.
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    public mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }

}

extension TestSignal {
    /// Pearson correlation of two signals over the length both have (1: the same shape, 0:
    /// unrelated). Pure.
    public static func correlation<A: Collection<Int16>, B: Collection<Int16>>(_ a: A, _ b: B) -> Double {
        let n = min(a.count, b.count)
        guard n > 0 else { return 0 }
        let x = a.prefix(n).map(Double.init)
        let y = b.prefix(n).map(Double.init)
        let mx = x.reduce(0, +) / Double(n)
        let my = y.reduce(0, +) / Double(n)
        var sxy = 0.0
        var sxx = 0.0
        var syy = 0.0
        for i in 0..<n {
            sxy += (x[i] - mx) * (y[i] - my)
            sxx += (x[i] - mx) * (x[i] - mx)
            syy += (y[i] - my) * (y[i] - my)
        }
        return sxy / (sxx * syy).squareRoot()
    }
}
