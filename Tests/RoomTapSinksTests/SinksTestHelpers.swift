import Foundation
import RoomTapCore
import RoomTapSinks
import RoomTapTestSupport

/// Options for test files: no fsync (speed), otherwise the defaults.
func testOptions(_ change: (inout WAVWriter.Options) -> Void = { _ in }) -> WAVWriter.Options {
    var options = WAVWriter.Options()
    options.syncOnFinish = false
    change(&options)
    return options
}

/// Little-endian u32 at `offset` of `bytes`.
func le32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
}

/// Little-endian u64 at `offset` of `bytes`.
func le64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
    (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << UInt64(8 * $1) }
}

/// The four characters at `offset`.
func fourCC(_ bytes: [UInt8], _ offset: Int) -> String { String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) }

/// Sets a little-endian u32 at `offset`.
func setLE32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
    for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
}

/// Frames of 480 samples per channel in `samples` of `channels` channels, rounded down.
func wholeFrames(_ count: Int, channels: Int) -> Int { count / channels / AudioFrame.samplesPerChannel }

/// `count` samples of loud, reproducible white noise (TestSignal at full scale): no two neighbours
/// alike, so a misplaced byte shows.
func fullScaleNoise(_ count: Int, seed: UInt64 = 1) -> [Int16] {
    TestSignal.noise(samples: count, amplitude: 1, seed: seed)
}
