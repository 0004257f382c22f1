import COpus

/// One libopus decoder (RFC 6716, https://www.rfc-editor.org/rfc/rfc6716) at 48 kHz.
///
/// Output is interleaved signed 16-bit PCM with the requested channel count: libopus down-mixes a
/// stereo stream to mono, or duplicates a mono stream to stereo, by itself. The output gain of the
/// OpusHead (RFC 7845 §5.1) is applied by libopus (`OPUS_SET_GAIN`).
///
/// Thread: confined to one thread. `decode` and `conceal` do not allocate.
package final class OpusPacketDecoder {
    /// The longest Opus packet, 120 ms, in samples per channel at 48 kHz.
    package static let maxFrameSamples = 5760
    /// Packet-loss concealment works in multiples of 2.5 ms (120 samples).
    package static let concealmentGranularity = 120

    /// 1 or 2.
    package let channels: Int
    private let state: OpaquePointer

    /// Creates a decoder producing `channels` channels and applying `gainQ8` (dB in Q7.8).
    /// Returns nil if libopus refuses (bad arguments, out of memory).
    package init?(channels: Int, gainQ8: Int16) {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        var error: Int32 = 0
        guard let state = opus_decoder_create(48_000, Int32(channels), &error), error == OPUS_OK else { return nil }
        self.channels = channels
        self.state = state
        if gainQ8 != 0 { _ = roomtap_opus_decoder_set_gain(state, Int32(gainQ8)) }
    }

    deinit { opus_decoder_destroy(state) }

    /// Decodes one packet into `pcm` (room for `maxFrames` samples per channel). Returns samples per
    /// channel, or a negative libopus error (`OPUS_INVALID_PACKET`, `OPUS_BUFFER_TOO_SMALL`).
    package func decode(_ packet: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, maxFrames: Int) -> Int
    {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 0 else {
            return Int(OPUS_INVALID_PACKET)
        }
        return Int(opus_decode(state, base, Int32(clamping: packet.count), pcm, Int32(maxFrames), 0))
    }

    /// Synthesises `frames` samples per channel of packet-loss concealment into `pcm` (libopus PLC:
    /// `opus_decode` with no data). `frames` must be a multiple of ``concealmentGranularity``.
    /// Returns samples per channel or a negative libopus error.
    package func conceal(into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        Int(opus_decode(state, nil, 0, pcm, Int32(frames), 0))
    }
}
