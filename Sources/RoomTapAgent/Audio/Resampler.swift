import CSoxr

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
public final class Resampler {
    /// Input rate in Hz.
    public let inputRate: Int
    /// Output rate in Hz.
    public let outputRate: Int
    /// The most input samples one ``process(_:)`` call may take.
    public let maxInputSamples: Int

    private let soxr: soxr_t
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
        var io = soxr_io_spec(SOXR_INT16_I, SOXR_INT16_I)
        io.flags |= UInt(SOXR_NO_DITHER)
        var quality = soxr_quality_spec(UInt(SOXR_MQ), 0)
        var runtime = soxr_runtime_spec(1)
        if lowLatency {
            quality.passband_end = 0.8
            quality.stopband_begin = 1.0
            runtime.log2_min_dft_size = 8
        }
        var error: soxr_error_t? = nil
        guard
            let handle = soxr_create(
                Double(inputRate), Double(outputRate), 1, &error, &io, &quality, &runtime), error == nil
        else {
            throw CreationError(description: "libsoxr: \(error.map { String(cString: $0) } ?? "cannot create")")
        }
        soxr = handle
        // Room for a whole call's output plus what the filter may release at once.
        let capacity = maxInputSamples * outputRate / inputRate + 1_024
        output = .allocate(capacity: capacity)
        output.initialize(repeating: 0)
    }

    deinit {
        soxr_delete(soxr)
        output.deallocate()
    }

    /// Feeds `input` (at most ``maxInputSamples``) and returns the output produced, a view into
    /// this converter's storage valid until the next call. Does not allocate.
    public func process(_ input: UnsafeBufferPointer<Int16>) -> UnsafeBufferPointer<Int16> {
        precondition(input.count <= maxInputSamples, "at most maxInputSamples per call")
        guard let base = input.baseAddress, !input.isEmpty else { return UnsafeBufferPointer(rebasing: output[0..<0]) }
        var produced = 0
        var consumed = 0
        while consumed < input.count && produced < output.count {
            var idone = 0
            var odone = 0
            _ = soxr_process(
                soxr, base + consumed, input.count - consumed, &idone, output.baseAddress! + produced,
                output.count - produced, &odone)
            consumed += idone
            produced += odone
            if idone == 0 && odone == 0 { break }
        }
        return UnsafeBufferPointer(rebasing: output[0..<produced])
    }

    /// Ends the input: returns the tail the filter was holding back (call until it returns an empty
    /// view to be sure), after which the converter is ready for a fresh signal.
    public func flush() -> UnsafeBufferPointer<Int16> {
        var produced = 0
        while produced < output.count {
            var odone = 0
            _ = soxr_process(soxr, nil, 0, nil, output.baseAddress! + produced, output.count - produced, &odone)
            if odone == 0 { break }
            produced += odone
        }
        if produced < output.count { soxr_clear(soxr) }
        return UnsafeBufferPointer(rebasing: output[0..<produced])
    }

    /// Drops whatever the filter holds and starts a fresh signal (barge-in, a gap in the input).
    public func reset() { soxr_clear(soxr) }

    /// Output samples the filter now holds back (libsoxr's `soxr_delay`).
    public var delay: Double { soxr_delay(soxr) }
}
