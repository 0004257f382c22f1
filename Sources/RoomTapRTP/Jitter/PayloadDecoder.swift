/// Decodes one stream's RTP payloads into interleaved 48 kHz PCM, packet by packet, for a
/// ``PlayoutDecoder``: the one place the jitter buffer knows which codec it plays.
///
/// Every codec decodes a packet into exactly the samples the packet covers on the timeline, so
/// the playout's packet grid, loss handling and files are the same for all of them; what differs
/// is how a lost packet is concealed: Opus with libopus's PLC or in-band FEC
/// (``LiveOpusDecoder``), G.711 with libspandsp's PLC, G.722 and L16 with a short fade
/// (``PCMPayloadDecoder``).
///
/// Thread: confined to the room clock's thread (inside the jitter buffer). No member allocates.
protocol PayloadDecoder: AnyObject {
    /// Output channels (1 or 2).
    var channels: Int { get }
    /// Concealment comes in multiples of this many samples per channel (Opus: 120, 2.5 ms).
    var concealmentStep: Int { get }
    /// Samples per channel the decoded audio runs behind the packets (a resampler's delay): the
    /// playout places every packet that much earlier. 0 for Opus.
    var lead: Int { get }
    /// Decodes `payload`, whose place on the timeline is `frames` samples per channel long, into
    /// `pcm` (room for ``LiveOpusDecoder/maxFrameSamples`` per channel). Returns the samples per
    /// channel written, or a negative number when the payload cannot be decoded.
    func decode(_ payload: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int
    /// Recovers the `frames` samples before `packet` from its in-band FEC, or returns a negative
    /// number when the codec has none.
    func decodeFEC(from packet: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int
    /// Synthesises `frames` samples per channel (a multiple of ``concealmentStep``, at most
    /// ``LiveOpusDecoder/maxFrameSamples``) where a packet was lost. Returns the samples written.
    func conceal(into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int
    /// A new sender starts: forget the old one's state.
    func reset()
    /// True when `payload` carries no audio and silence should follow it (Opus DTX).
    func isDTX(_ payload: UnsafeRawBufferPointer) -> Bool
}

extension LiveOpusDecoder: PayloadDecoder {
    var concealmentStep: Int { Self.granularity }
    var lead: Int { 0 }

    func decode(_ payload: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        decode(payload, into: pcm, maxFrames: Self.maxFrameSamples)
    }

    func isDTX(_ payload: UnsafeRawBufferPointer) -> Bool { payload.count <= 2 }
}

/// The decoder for `codec` rendering `channels` channels; nil if the library refuses.
func makePayloadDecoder(codec: AudioCodec, channels: Int) -> (any PayloadDecoder)? {
    if codec.isOpus { return LiveOpusDecoder(channels: channels) }
    return PCMPayloadDecoder(codec: codec, channels: channels)
}
