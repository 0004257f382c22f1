import CSoxr

/// One libsoxr stream of interleaved Int16 audio from one rate to another: the single place
/// roomtap creates, feeds, drains and clears a libsoxr handle (no dither; libsoxr takes its
/// filter's delay out, so output sample `k` is the input at time `k / outputRate`).
///
/// Each user picks the ``Recipe`` its latency and quality call for: files take
/// ``Recipe/high``, the agent's ears ``Recipe/mediumLowLatency``, the telephone codecs on the
/// live clock ``Recipe/quick``.
///
/// The owner supplies the output storage; nothing here allocates after `init` (libsoxr allocates
/// its own buffers as it is first fed). Thread: one thread at a time (the owner's).
package final class SoxrStream {
    /// libsoxr's quality recipes, as roomtap uses them.
    package enum Recipe: Sendable {
        /// `SOXR_QQ`, cubic interpolation: holds back a handful of samples, no DFT blocks. For
        /// band-limited telephone audio on a real-time path.
        case quick
        /// `SOXR_MQ`, 16-bit linear phase: holds back up to about 40 ms in DFT blocks.
        case medium
        /// `SOXR_MQ` with a shorter filter (passband to 80 % of the lower Nyquist frequency,
        /// stopband from it) in small DFT blocks (`log2_min_dft_size` 8): fed 10 ms frames it
        /// holds back at most about 10 ms.
        case mediumLowLatency
        /// `SOXR_HQ`, the quality of `sox … rate` (linear phase).
        case high
    }

    /// libsoxr refused the rates or the recipe; its own message.
    package struct CreationError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Interleaved channels in and out.
    package let channels: Int
    private let handle: soxr_t

    /// A stream from `inputRate` to `outputRate` Hz of `channels` interleaved channels.
    package init(inputRate: Double, outputRate: Double, channels: Int, recipe: Recipe) throws(CreationError) {
        precondition(inputRate > 0 && outputRate > 0 && channels > 0, "rates and channels are positive")
        self.channels = channels
        var io = soxr_io_spec(SOXR_INT16_I, SOXR_INT16_I)
        io.flags |= UInt(SOXR_NO_DITHER)
        var quality: soxr_quality_spec_t
        var runtime = soxr_runtime_spec(1)
        switch recipe {
        case .quick: quality = soxr_quality_spec(UInt(SOXR_QQ), 0)
        case .medium: quality = soxr_quality_spec(UInt(SOXR_MQ), 0)
        case .high: quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        case .mediumLowLatency:
            quality = soxr_quality_spec(UInt(SOXR_MQ), 0)
            quality.passband_end = 0.8
            quality.stopband_begin = 1.0
            runtime.log2_min_dft_size = 8
        }
        var error: soxr_error_t? = nil
        let made = soxr_create(inputRate, outputRate, UInt32(channels), &error, &io, &quality, &runtime)
        guard let made, error == nil else {
            if let made { soxr_delete(made) }
            throw CreationError(
                description: "libsoxr: \(error.map { String(cString: $0) } ?? "cannot create a resampler")")
        }
        handle = made
    }

    deinit { soxr_delete(handle) }

    /// Feeds `frames` interleaved frames of `input` and writes what the filter releases into
    /// `output` (room for `capacity` frames); returns the frames consumed and produced. Stops
    /// early only when `output` is full. Does not allocate once the stream has been fed.
    @discardableResult
    package func process(
        _ input: UnsafePointer<Int16>, frames: Int, into output: UnsafeMutablePointer<Int16>, capacity: Int
    ) -> (consumed: Int, produced: Int) {
        var consumed = 0
        var produced = 0
        while consumed < frames && produced < capacity {
            var idone = 0
            var odone = 0
            _ = soxr_process(
                handle, input + consumed * channels, frames - consumed, &idone, output + produced * channels,
                capacity - produced, &odone)
            consumed += idone
            produced += odone
            if idone == 0 && odone == 0 { break }
        }
        return (consumed, produced)
    }

    /// Ends the input: writes the tail the filter was holding back into `output` (room for
    /// `capacity` frames) and returns its frame count. If that filled `output`, more may remain:
    /// call again. Once the tail is out (fewer than `capacity` frames returned) the stream is
    /// cleared, ready for a fresh signal.
    package func drain(into output: UnsafeMutablePointer<Int16>, capacity: Int) -> Int {
        var produced = 0
        while produced < capacity {
            var odone = 0
            _ = soxr_process(handle, nil, 0, nil, output + produced * channels, capacity - produced, &odone)
            if odone == 0 { break }
            produced += odone
        }
        if produced < capacity { soxr_clear(handle) }
        return produced
    }

    /// Drops whatever the filter holds and starts a fresh signal. Idempotent.
    package func clear() { soxr_clear(handle) }

    /// Output frames the filter now holds back (libsoxr's `soxr_delay`).
    package var delay: Double { soxr_delay(handle) }
}
