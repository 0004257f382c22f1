import COpus

/// One libopus decoder (RFC 6716, https://www.rfc-editor.org/rfc/rfc6716) at 48 kHz for a live
/// stream: normal decode, in-band FEC decode (RFC 6716 §2.1.7) and packet-loss concealment.
///
/// RoomTapRTP's own small wrapper, so the RTP target needs only COpus (RoomTapIngest's decoder is
/// `package` to that target). Output is interleaved signed 16-bit PCM with the requested channel
/// count; libopus down- or up-mixes by itself.
///
/// Thread: confined to one thread (the room clock's, inside the jitter buffer). No member
/// allocates. The static helpers only read their argument and are safe anywhere.
final class LiveOpusDecoder {
    /// The longest Opus packet, 120 ms, in samples per channel at 48 kHz.
    static let maxFrameSamples = 5760
    /// PLC and FEC work in multiples of 2.5 ms (120 samples at 48 kHz).
    static let granularity = 120

    /// 1 or 2.
    let channels: Int
    private let state: OpaquePointer

    /// Creates a 48 kHz decoder with `channels` output channels; nil if libopus refuses.
    init?(channels: Int) {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        var error: Int32 = 0
        guard let state = opus_decoder_create(48_000, Int32(channels), &error), error == OPUS_OK else { return nil }
        self.channels = channels
        self.state = state
    }

    deinit { opus_decoder_destroy(state) }

    /// Decodes `packet` into `pcm` (room for `maxFrames` samples per channel). Returns samples per
    /// channel, or a negative libopus error.
    func decode(_ packet: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, maxFrames: Int) -> Int {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 0 else {
            return Int(OPUS_INVALID_PACKET)
        }
        return Int(opus_decode(state, base, Int32(clamping: packet.count), pcm, Int32(maxFrames), 0))
    }

    /// Recovers the `frames` samples per channel just before `packet` from its in-band FEC (LBRR)
    /// data: libopus conceals the first `frames - packetDuration` samples and decodes the FEC for
    /// the last packet-duration (RFC 6716 §2.1.7). `frames` must be a multiple of ``granularity``
    /// and at most ``maxFrameSamples``. Returns samples per channel or a negative libopus error.
    func decodeFEC(from packet: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 0 else {
            return Int(OPUS_INVALID_PACKET)
        }
        return Int(opus_decode(state, base, Int32(clamping: packet.count), pcm, Int32(frames), 1))
    }

    /// Synthesises `frames` samples per channel of packet-loss concealment (a multiple of
    /// ``granularity``, at most ``maxFrameSamples``). Returns samples per channel or an error.
    func conceal(into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        Int(opus_decode(state, nil, 0, pcm, Int32(frames), 0))
    }

    /// Forgets the stream's state (a new sender starts), like a fresh decoder.
    func reset() { _ = roomtap_opus_decoder_reset(state) }

    /// Samples per channel at 48 kHz in `packet`, or nil when the packet is not a valid Opus
    /// packet (empty, bad TOC or frame-count byte, more than 120 ms). A 1-byte packet (TOC only,
    /// as DTX sends) is valid. Pure; reads only `packet`.
    static func duration(of packet: UnsafeRawBufferPointer) -> Int? {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 0 else {
            return nil
        }
        let n = Int(opus_packet_get_nb_samples(base, Int32(clamping: packet.count), 48_000))
        guard n > 0, n <= maxFrameSamples else { return nil }
        // opus_packet_get_nb_samples reads only the TOC and frame count; a full parse also checks
        // that the frame lengths fit in the packet.
        var toc: UInt8 = 0
        var offset: Int32 = 0
        let frames = withUnsafeTemporaryAllocation(of: Int16.self, capacity: 48) { sizes in
            opus_packet_parse(base, Int32(clamping: packet.count), &toc, nil, sizes.baseAddress!, &offset)
        }
        return frames > 0 ? n : nil
    }

    /// True when `packet` carries in-band FEC (SILK LBRR) data for the packet before it. CELT-only
    /// packets never do. The same test as libopus 1.5's `opus_packet_has_lbrr` (libopus 1.3 lacks
    /// it): the LBRR flag follows the VAD flags in the first bits of the first SILK frame
    /// (RFC 6716 §4.2.3-4.2.4). Pure.
    static func hasFEC(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 1 else {
            return false
        }
        let toc = base[0]
        if toc & 0x80 != 0 { return false }  // configs 16-31: CELT only
        let frameSize = Int(opus_packet_get_samples_per_frame(base, 48_000))
        let silkFrames = frameSize > 960 ? frameSize / 960 : 1
        let stereo = toc & 0x04 != 0
        var offset: Int32 = 0
        return withUnsafeTemporaryAllocation(of: Int16.self, capacity: 48) { sizes in
            withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 48) { frames in
                let count = opus_packet_parse(
                    base, Int32(clamping: packet.count), nil, frames.baseAddress!, sizes.baseAddress!, &offset)
                guard count > 0, sizes[0] > 0, let first = frames[0] else { return false }
                var lbrr = (first[0] >> (7 - silkFrames)) & 1 != 0
                if stereo { lbrr = lbrr || (first[0] >> (6 - 2 * silkFrames)) & 1 != 0 }
                return lbrr
            }
        }
    }
}
