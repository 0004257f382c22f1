import CSoxr

/// Interleaved Int16 sample-rate conversion for files, on libsoxr at high quality (SOXR_HQ, the
/// quality of `sox … rate`, linear phase; no dither). libsoxr takes its filter's delay out, so the
/// output is aligned with the input, and after ``flush()`` the total output is
/// `round(input × outputRate / inputRate)` frames: a room of 10 ms frames at 48 kHz becomes
/// exactly `frames × outputRate / 48000` at 8, 16 or 24 kHz.
///
/// Storage is allocated once; ``process(_:frames:)`` returns a view valid until the next call.
/// Thread: one thread at a time (a file writer's).
public final class SampleRateConverter {
    public let inputRate: Int
    public let outputRate: Int
    public let channels: Int
    /// The most input frames one ``process(_:frames:)`` call may take.
    public let maxInputFrames: Int

    private let soxr: soxr_t
    private let output: UnsafeMutablePointer<Int16>
    private let outputCapacity: Int  // frames

    /// A converter from `inputRate` to `outputRate` for `channels` interleaved channels.
    public init(inputRate: Int, outputRate: Int, channels: Int, maxInputFrames: Int = 4_800) throws(WAVError) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.maxInputFrames = maxInputFrames
        var io = soxr_io_spec(SOXR_INT16_I, SOXR_INT16_I)
        io.flags |= UInt(SOXR_NO_DITHER)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        var runtime = soxr_runtime_spec(1)
        var error: soxr_error_t? = nil
        guard
            let handle = soxr_create(
                Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &quality, &runtime),
            error == nil
        else {
            throw WAVError(
                path: "libsoxr", message: error.map { String(cString: $0) } ?? "cannot create a resampler",
                kind: .invalidArgument)
        }
        soxr = handle
        outputCapacity = maxInputFrames * outputRate / inputRate + 4_096
        output = .allocate(capacity: outputCapacity * channels)
    }

    deinit {
        soxr_delete(soxr)
        output.deallocate()
    }

    /// Feeds `frames` (at most ``maxInputFrames``) interleaved frames; returns the output made (a
    /// view valid until the next call) and its frame count. Does not allocate.
    public func process(_ input: UnsafePointer<Int16>, frames: Int) -> (UnsafePointer<Int16>, Int) {
        precondition(frames <= maxInputFrames, "at most maxInputFrames per call")
        var produced = 0
        var consumed = 0
        while consumed < frames && produced < outputCapacity {
            var idone = 0
            var odone = 0
            _ = soxr_process(
                soxr, input + consumed * channels, frames - consumed, &idone, output + produced * channels,
                outputCapacity - produced, &odone)
            consumed += idone
            produced += odone
            if idone == 0 && odone == 0 { break }
        }
        return (UnsafePointer(output), produced)
    }

    /// Ends the input; returns the tail (a view valid until the next call) and its frame count.
    public func flush() -> (UnsafePointer<Int16>, Int) {
        var produced = 0
        while produced < outputCapacity {
            var odone = 0
            _ = soxr_process(soxr, nil, 0, nil, output + produced * channels, outputCapacity - produced, &odone)
            if odone == 0 { break }
            produced += odone
        }
        return (UnsafePointer(output), produced)
    }
}
