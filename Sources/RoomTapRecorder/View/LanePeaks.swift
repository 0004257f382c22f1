import Foundation

/// A lane's level over time for the review page: one byte per 10 ms of the file (100 per second),
/// the largest absolute sample of that stretch over all channels, on a decibel scale.
///
/// A byte is 0 when the stretch is exact zeros (nothing in the file: absent, muted off the record,
/// a gap), else `1 + round((dBFS + 72) / 72 * 254)` clamped to 1...255: 1 is -72 dBFS or quieter, 255
/// full scale. The page draws it as a bar of height `(byte - 1) / 254` of the lane. A stretch is
/// `sampleRate / 100` samples per channel (the last one may be shorter).
///
/// Thread: a value used on one thread; feed samples in order, then `finish`.
struct LanePeaks {
    /// Peaks per second of room time.
    static let perSecond = 100
    /// The quietest level drawn, dBFS.
    static let floorDBFS = -72.0

    let channels: Int
    private let stretch: Int  // samples (all channels) per peak
    private var inStretch = 0
    private var largest: Int32 = 0
    private(set) var bytes: [UInt8] = []

    init(sampleRate: Int, channels: Int) {
        self.channels = max(1, channels)
        stretch = max(1, sampleRate / Self.perSecond) * self.channels
    }

    /// Takes the next interleaved 16-bit samples (any count; stretches may straddle calls).
    mutating func feed(_ samples: UnsafeBufferPointer<Int16>) {
        for sample in samples {
            let magnitude = abs(Int32(sample))
            if magnitude > largest { largest = magnitude }
            inStretch += 1
            if inStretch == stretch { endStretch() }
        }
    }

    /// Ends the input (a partial last stretch counts) and returns the bytes.
    mutating func finish() -> [UInt8] {
        if inStretch > 0 { endStretch() }
        return bytes
    }

    /// The byte for a peak magnitude (0...32768).
    static func code(_ magnitude: Int32) -> UInt8 {
        guard magnitude > 0 else { return 0 }
        let dB = 20 * log10(Double(magnitude) / 32_768)
        let scaled = 1 + ((dB - floorDBFS) / -floorDBFS * 254).rounded()
        return UInt8(min(255, max(1, scaled)))
    }

    private mutating func endStretch() {
        bytes.append(Self.code(largest))
        largest = 0
        inStretch = 0
    }
}
