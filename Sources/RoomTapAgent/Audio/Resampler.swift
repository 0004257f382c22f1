import RoomTapResampling

/// A streaming mono Int16 sample-rate converter on libsoxr (medium quality: 16-bit, linear phase,
/// no dither): 48 kHz room audio to the 24 kHz the Realtime API takes, and its 24 kHz replies back
/// to 48 kHz. By default libsoxr holds back up to about 40 ms (its filter and its DFT blocks);
/// `lowLatency` holds back at most about 10 ms (see ``init(inputRate:outputRate:maxInputSamples:lowLatency:)``).
///
/// libsoxr compensates its own filter delay: the output stream is aligned with the input stream,
/// so output sample `k` is the input at time `k / outputRate` (the first outputs are held back
/// until the filter has seen enough input, and ``flush()`` releases the tail). After a flush the
/// total output is `round(input × outputRate / inputRate)` samples.
///
/// Storage is allocated once, in `init`; ``process(_:)`` writes into it and returns a view valid
/// until the next call.
///
/// Thread: confined to one thread at a time (the agent's listen thread, or its session thread).
package final class Resampler {
    /// Input rate in Hz.
    public let inputRate: Int
    /// Output rate in Hz.
    public let outputRate: Int
    /// The most input samples one ``process(_:)`` call may take.
    public let maxInputSamples: Int

    private let stream: SoxrStream
    private let output: UnsafeMutableBufferPointer<Int16>

    /// Errors creating the converter (libsoxr's message).
    public struct CreationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates a converter from `inputRate` to `outputRate` Hz taking up to `maxInputSamples` per call.
    ///
    /// `lowLatency` (what the agent hears, where every millisecond held back delays its turn): a
    /// shorter linear-phase filter (passband to 80 % of the lower Nyquist frequency, stopband from
    /// it: 9.6 kHz and 12 kHz at 48 → 24 kHz) run in small DFT blocks (libsoxr's
    /// `log2_min_dft_size` 8). Fed 10 ms frames it holds back at most about 10 ms instead of 40;
    /// output stays aligned sample for sample; a 15 kHz tone is attenuated by more than 80 dB, not
    /// folded to 9 kHz (measured in ResamplerTests).
    public init(inputRate: Int, outputRate: Int, maxInputSamples: Int = 4_800, lowLatency: Bool = false) throws {
        precondition(inputRate > 0 && outputRate > 0 && maxInputSamples > 0, "rates and sizes are positive")
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.maxInputSamples = maxInputSamples
        do {
            stream = try SoxrStream(
                inputRate: Double(inputRate), outputRate: Double(outputRate), channels: 1,
                recipe: lowLatency ? .mediumLowLatency : .medium)
        } catch {
            throw CreationError(description: error.description)
        }
        // Room for a whole call's output plus what the filter may release at once.
        let capacity = maxInputSamples * outputRate / inputRate + 1_024
        output = .allocate(capacity: capacity)
        output.initialize(repeating: 0)
    }

    deinit { output.deallocate() }

    /// Feeds `input` (at most ``maxInputSamples``) and returns the output produced, a view into
    /// this converter's storage valid until the next call. Does not allocate.
    public func process(_ input: UnsafeBufferPointer<Int16>) -> UnsafeBufferPointer<Int16> {
        precondition(input.count <= maxInputSamples, "at most maxInputSamples per call")
        guard let base = input.baseAddress, !input.isEmpty else { return UnsafeBufferPointer(rebasing: output[0..<0]) }
        let produced = stream.process(base, frames: input.count, into: output.baseAddress!, capacity: output.count)
            .produced
        return UnsafeBufferPointer(rebasing: output[0..<produced])
    }

    /// Ends the input: returns the tail the filter was holding back (call until it returns an empty
    /// view to be sure), after which the converter is ready for a fresh signal.
    public func flush() -> UnsafeBufferPointer<Int16> {
        let produced = stream.drain(into: output.baseAddress!, capacity: output.count)
        return UnsafeBufferPointer(rebasing: output[0..<produced])
    }

    /// Drops whatever the filter holds and starts a fresh signal (barge-in, a gap in the input).
    public func reset() { stream.clear() }

    /// Output samples the filter now holds back (libsoxr's `soxr_delay`).
    public var delay: Double { stream.delay }
}
