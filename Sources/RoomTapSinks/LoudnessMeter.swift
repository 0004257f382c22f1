import CEBUR128
import Foundation

/// Integrated loudness and true peak of a track (EBU R 128 / ITU-R BS.1770-4) through libebur128.
///
/// Fed on a file writer's thread with the 48 kHz samples the file gets (never on the room
/// clock's thread); read once the track is finished. Mono counts as one front channel (weight 1,
/// as `ffmpeg -af ebur128` does).
///
/// Thread: one thread at a time.
public final class LoudnessMeter {
    /// A finished measurement.
    public struct Result: Sendable, Equatable {
        /// Integrated loudness in LUFS; nil for a track that never rose above the −70 LUFS gate
        /// (silence).
        public var integratedLUFS: Double?
        /// The highest true peak of any channel (4× oversampled), in dBTP; nil for digital silence.
        public var truePeakDBTP: Double?

        public init(integratedLUFS: Double?, truePeakDBTP: Double?) {
            self.integratedLUFS = integratedLUFS
            self.truePeakDBTP = truePeakDBTP
        }
    }

    public let channels: Int
    public let sampleRate: Int
    private var state: UnsafeMutablePointer<ebur128_state>?

    /// A meter of `channels` channels at `sampleRate`; nil if libebur128 cannot make one.
    public init?(channels: Int, sampleRate: Int) {
        let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
        guard let state = ebur128_init(UInt32(channels), UInt(sampleRate), mode) else { return nil }
        self.state = state
        self.channels = channels
        self.sampleRate = sampleRate
    }

    deinit { ebur128_destroy(&state) }

    /// Adds `frames` interleaved frames.
    public func add(_ samples: UnsafePointer<Int16>, frames: Int) {
        guard frames > 0 else { return }
        _ = ebur128_add_frames_short(state, samples, frames)
    }

    /// The loudness and true peak of everything added so far.
    public var result: Result {
        var loudness = -Double.infinity
        _ = ebur128_loudness_global(state, &loudness)
        var peak = 0.0
        for c in 0..<channels {
            var p = 0.0
            if ebur128_true_peak(state, UInt32(c), &p) == 0 { peak = max(peak, p) }
        }
        return Result(
            integratedLUFS: loudness.isFinite ? loudness : nil, truePeakDBTP: peak > 0 ? 20 * log10(peak) : nil)
    }
}
