import CSpanDSP

/// Decodes a PBX codec's RTP payloads (G.711 µ-law/A-law, G.722, L16; see ``AudioCodec``) into
/// 48 kHz PCM for a ``PlayoutDecoder``: libspandsp decodes G.711 (ITU-T G.711) and G.722 (ITU-T
/// G.722, 64 kbit/s, 16 kHz audio), L16 is read big-endian (RFC 3551 §4.5.11), the channels are
/// mixed down (average) or up (copied) to the track's, and a ``ResamplingQueue`` brings the rate
/// to 48 kHz.
///
/// Loss: G.711 is concealed by libspandsp's PLC (pitch-period repetition fading out over
/// 50 ms, then silence), which learns from every decoded sample. G.722 and L16 are concealed by a
/// fade: the last decoded sample of each channel falls linearly to zero over 10 ms, then silence;
/// no click, and no audio the sender never sent.
///
/// Placement: the resampler's output runs ``lead`` samples behind its input, so every packet is
/// placed that much earlier on the timeline (``PlayoutDecoder`` subtracts it); the audio lands
/// exactly where its timestamps say.
///
/// Thread: confined to the room clock's thread. Everything is allocated in `init`.
final class PCMPayloadDecoder: PayloadDecoder {
    /// The fade that conceals G.722 and L16, in milliseconds.
    static let fadeMilliseconds = 10

    let codec: AudioCodec
    let channels: Int
    var concealmentStep: Int { 1 }
    /// Samples (48 kHz) the output runs behind the input.
    var lead: Int { queue.lead }

    private let queue: ResamplingQueue
    /// The decoder's own rate: 8000 (G.711), 16000 (G.722), the L16 rate.
    private let rate: Int
    /// Native samples per channel of the longest packet (120 ms).
    private let maxNative: Int
    /// Decoded native samples, the stream's channels interleaved.
    private let native: UnsafeMutablePointer<Int16>
    /// The same in the track's channels.
    private let mapped: UnsafeMutablePointer<Int16>
    private let g711: OpaquePointer?
    private let g722: OpaquePointer?
    private let plc: UnsafeMutablePointer<plc_state_t>?
    private var lastSample = (Int16(0), Int16(0))
    private var fadePosition = 0
    private let fadeLength: Int

    /// Nil if a library refuses (or `codec` is Opus).
    init?(codec: AudioCodec, channels: Int) {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        guard !codec.isOpus else { return nil }
        self.codec = codec
        self.channels = channels
        rate = codec.sampleRate
        maxNative = rate * PCMPayload.maxMilliseconds / 1000 + 1
        fadeLength = rate * Self.fadeMilliseconds / 1000
        guard let queue = ResamplingQueue(inputRate: rate, channels: channels, maxInput: maxNative) else { return nil }
        self.queue = queue
        native = .allocate(capacity: maxNative * 2)
        native.initialize(repeating: 0, count: maxNative * 2)
        mapped = .allocate(capacity: maxNative * 2)
        mapped.initialize(repeating: 0, count: maxNative * 2)
        switch codec.encoding {
        case .pcmu, .pcma:
            g711 = g711_init(nil, codec.encoding == .pcmu ? Int32(G711_ULAW) : Int32(G711_ALAW))
            plc = plc_init(nil)
            g722 = nil
        case .g722:
            g722 = g722_decode_init(nil, 64_000, 0)
            g711 = nil
            plc = nil
        default:
            g711 = nil
            g722 = nil
            plc = nil
        }
    }

    deinit {
        if let g711 { g711_free(g711) }
        if let g722 { g722_decode_free(g722) }
        if let plc { plc_free(plc) }
        native.deallocate()
        mapped.deallocate()
    }

    func decode(_ payload: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        guard let units = PCMPayload.timestampUnits(of: payload, codec: codec),
            let bytes = payload.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return -1 }
        let streamChannels = codec.channels
        var n: Int
        switch codec.encoding {
        case .pcmu, .pcma:
            n = Int(g711_decode(g711, native, bytes, Int32(payload.count)))
            if let plc { _ = plc_rx(plc, native, Int32(n)) }
        case .g722:
            n = Int(g722_decode(g722, native, bytes, Int32(payload.count)))
        case .l16:
            n = units
            for i in 0..<(n * streamChannels) {
                native[i] = Int16(bitPattern: UInt16(bytes[2 * i]) << 8 | UInt16(bytes[2 * i + 1]))
            }
        case .opus:
            return -1
        }
        n = min(n, maxNative)
        guard n > 0 else { return -1 }
        mapChannels(n, from: streamChannels)
        lastSample = (mapped[(n - 1) * channels], mapped[(n - 1) * channels + channels - 1])
        fadePosition = 0
        queue.push(mapped, frames: n)
        queue.take(frames, into: pcm)
        return frames
    }

    func decodeFEC(from packet: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        -1
    }

    func conceal(into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        let n = queue.inputNeeded(toTake: frames)
        if n > 0 {
            if let plc {
                _ = roomtap_plc_fillin(plc, native, Int32(n))  // spandsp's, minus its overlapping memcpy
                mapChannels(n, from: 1)
            } else {
                fade(n)
            }
            queue.push(mapped, frames: n)
        }
        queue.take(frames, into: pcm)
        return frames
    }

    func reset() {
        if let g722 { _ = g722_decode_init(g722, 64_000, 0) }
        if let plc { _ = plc_init(plc) }
        lastSample = (0, 0)
        fadePosition = 0
    }

    func isDTX(_ payload: UnsafeRawBufferPointer) -> Bool { false }

    /// `native` (`from` channels) into `mapped` (the track's channels), `n` samples per channel.
    private func mapChannels(_ n: Int, from streamChannels: Int) {
        switch (streamChannels, channels) {
        case (1, 1), (2, 2):
            mapped.update(from: native, count: n * channels)
        case (1, 2):
            for i in 0..<n {
                mapped[2 * i] = native[i]
                mapped[2 * i + 1] = native[i]
            }
        default:
            for i in 0..<n { mapped[i] = Int16((Int(native[2 * i]) + Int(native[2 * i + 1])) / 2) }
        }
    }

    /// `n` samples of the fade that conceals G.722 and L16 into `mapped`.
    private func fade(_ n: Int) {
        for i in 0..<n {
            let left = max(0, fadeLength - fadePosition - i)
            let scale = Int32(left) * 32_768 / Int32(max(1, fadeLength))
            mapped[i * channels] = Int16((Int32(lastSample.0) * scale) >> 15)
            if channels == 2 { mapped[i * channels + 1] = Int16((Int32(lastSample.1) * scale) >> 15) }
        }
        fadePosition += n
    }
}
