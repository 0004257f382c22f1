import RoomTapResampling

/// Interleaved Int16 sample-rate conversion for files, on libsoxr at high quality (SOXR_HQ, the
/// quality of `sox … rate`, linear phase; no dither). libsoxr takes its filter's delay out, so the
/// output is aligned with the input, and after ``flush()`` the total output is
/// `round(input × outputRate / inputRate)` frames: a room of 10 ms frames at 48 kHz becomes
/// exactly `frames × outputRate / 48000` at 8, 16 or 24 kHz.
///
/// Storage is allocated once; ``process(_:frames:)`` returns a view valid until the next call.
/// Thread: one thread at a time (a file writer's).
package final class SampleRateConverter {
    public let inputRate: Int
    public let outputRate: Int
    public let channels: Int
    /// The most input frames one ``process(_:frames:)`` call may take.
    public let maxInputFrames: Int

    private let stream: SoxrStream
    private let output: UnsafeMutablePointer<Int16>
    private let outputCapacity: Int  // frames

    /// A converter from `inputRate` to `outputRate` for `channels` interleaved channels.
    public init(inputRate: Int, outputRate: Int, channels: Int, maxInputFrames: Int = 4_800) throws(WAVError) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.maxInputFrames = maxInputFrames
        do {
            stream = try SoxrStream(
                inputRate: Double(inputRate), outputRate: Double(outputRate), channels: channels, recipe: .high)
        } catch {
            throw WAVError(path: "libsoxr", message: error.description, kind: .invalidArgument)
        }
        outputCapacity = maxInputFrames * outputRate / inputRate + 4_096
        output = .allocate(capacity: outputCapacity * channels)
    }

    deinit { output.deallocate() }

    /// Feeds `frames` (at most ``maxInputFrames``) interleaved frames; returns the output made (a
    /// view valid until the next call) and its frame count. Does not allocate.
    public func process(_ input: UnsafePointer<Int16>, frames: Int) -> (UnsafePointer<Int16>, Int) {
        precondition(frames <= maxInputFrames, "at most maxInputFrames per call")
        let produced = stream.process(input, frames: frames, into: output, capacity: outputCapacity).produced
        return (UnsafePointer(output), produced)
    }

    /// Ends the input; returns the tail (a view valid until the next call) and its frame count.
    public func flush() -> (UnsafePointer<Int16>, Int) {
        (UnsafePointer(output), stream.drain(into: output, capacity: outputCapacity))
    }
}
