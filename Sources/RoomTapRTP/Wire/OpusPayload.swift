import COpus

/// What an Opus RTP payload holds: its duration, frames and channels, checked with libopus
/// (RFC 7587 §4.2, https://www.rfc-editor.org/rfc/rfc7587#section-4.2: the payload is exactly one
/// Opus packet; RFC 6716 §3, https://www.rfc-editor.org/rfc/rfc6716#section-3, its framing).
///
/// The first byte is the TOC (RFC 6716 §3.1):
///
/// ```
///  0 1 2 3 4 5 6 7
/// +-+-+-+-+-+-+-+-+
/// | config  |s| c |
/// +-+-+-+-+-+-+-+-+
/// ```
/// `config` 0...31 gives the mode (SILK 0-11, hybrid 12-15, CELT 16-31), the audio bandwidth and
/// the frame duration (2.5, 5, 10, 20, 40 or 60 ms); `s` is stereo; `c` is the frame count code:
/// 0 one frame, 1 two equal frames, 2 two frames of different sizes, 3 a signalled number of
/// frames (1...48) in the next byte (RFC 6716 §3.2.5):
///
/// ```
///  0 1 2 3 4 5 6 7
/// +-+-+-+-+-+-+-+-+
/// |v|p|     M     |   v: VBR, p: Opus padding, M: frame count
/// +-+-+-+-+-+-+-+-+
/// ```
///
/// A payload is valid when libopus's `opus_packet_parse` accepts its framing (which rejects an
/// empty payload, code 3 with M = 0, more than 120 ms, frame lengths that do not fit, and an odd
/// size for code 1), so the duration is 2.5...120 ms and the frames 1...48.
/// `opus_packet_get_nb_samples` alone is not enough: it reads only the TOC and frame count, and
/// answers 0 for M = 0 and 40 ms for a code 2 packet with no frame lengths at all.
///
/// DTX: a frame of 0 or 1 bytes carries no audio. libopus's decoder ("Payloads of 1 (2 including
/// ToC) or 0 trigger the PLC/DTX", `opus_decode_frame` in src/opus_decoder.c) conceals such a
/// frame, continuing the previous signal or its comfort noise, for the duration the TOC gives. So
/// a 1-byte payload (TOC only) or a 2-byte code 0 payload (one 1-byte frame) is a valid DTX
/// packet: it moves the timeline on by its duration with no new audio. ``OpusPacketInfo/isDTX``
/// says so for any packet whose frames are all that small.
///
/// Thread: pure functions, any thread; nothing is allocated (libopus writes frame sizes into a
/// small stack buffer).
package enum OpusPayload {
    /// Samples per second of every Opus duration here (RFC 7587 §4.1: the RTP clock is 48 kHz).
    public static let sampleRate = 48_000

    /// The payload's duration in samples per channel at 48 kHz (120...5760), or nil when it is not
    /// a valid Opus packet.
    public static func duration(of payload: UnsafeRawBufferPointer) -> Int? {
        inspect(payload)?.samples
    }

    /// Everything the TOC and framing say, or nil when the payload is not a valid Opus packet.
    public static func inspect(_ payload: UnsafeRawBufferPointer) -> OpusPacketInfo? {
        guard let base = payload.baseAddress?.assumingMemoryBound(to: UInt8.self), !payload.isEmpty,
            payload.count <= Int(Int32.max)
        else { return nil }
        let length = Int32(payload.count)
        // opus_packet_parse checks the framing (and needs room for 48 frame sizes).
        let parsedFrames = withUnsafeTemporaryAllocation(of: Int16.self, capacity: 48) { sizes -> (Int32, Bool) in
            guard let sizePointer = sizes.baseAddress else { return (-1, false) }
            var payloadOffset: Int32 = 0
            let n = opus_packet_parse(base, length, nil, nil, sizePointer, &payloadOffset)
            guard n > 0 else { return (n, false) }
            var dtx = true
            for i in 0..<Int(n) where sizes[i] > 1 { dtx = false }
            return (n, dtx)
        }
        guard parsedFrames.0 > 0 else { return nil }
        let frames = opus_packet_get_nb_frames(base, length)
        let samples = opus_packet_get_nb_samples(base, length, Int32(sampleRate))
        // Both agree with the parse for a packet it accepted; checked so that a libopus with other
        // rules gives nil rather than a wrong duration.
        guard frames == parsedFrames.0, frames >= 1, frames <= 48, samples >= 120, samples <= 5760 else { return nil }
        let toc = payload[0]
        return OpusPacketInfo(
            configuration: Int(toc >> 3), isStereo: toc & 0x04 != 0, frameCountCode: Int(toc & 0x03),
            frameCount: Int(frames), samples: Int(samples), isDTX: parsedFrames.1)
    }
}

/// What ``OpusPayload/inspect(_:)`` found in a valid Opus packet. Thread: a value type.
public struct OpusPacketInfo: Sendable, Equatable {
    /// The TOC's configuration number, 0...31 (RFC 6716 §3.1, Table 2).
    public var configuration: Int
    /// The TOC's `s` bit: the packet codes stereo (decoding to mono or stereo is up to the decoder).
    public var isStereo: Bool
    /// The TOC's frame count code `c`, 0...3.
    public var frameCountCode: Int
    /// Opus frames in the packet, 1...48.
    public var frameCount: Int
    /// Duration in samples per channel at 48 kHz, 120 (2.5 ms) ... 5760 (120 ms).
    public var samples: Int
    /// Every frame is 0 or 1 bytes: libopus conceals it (DTX / comfort noise), no new audio.
    public var isDTX: Bool

    /// Samples per channel at 48 kHz of one frame of `configuration` (RFC 6716 §3.1, Table 2).
    public static func samplesPerFrame(configuration: Int) -> Int {
        let c = configuration & 31
        switch c {
        case 0...11: return c & 3 == 3 ? 2880 : 480 << (c & 3)  // SILK: 10, 20, 40, 60 ms
        case 12...15: return 480 << (c & 1)  // hybrid: 10, 20 ms
        default: return 120 << (c & 3)  // CELT: 2.5, 5, 10, 20 ms
        }
    }

    /// The duration in milliseconds.
    public var milliseconds: Double { Double(samples) / 48.0 }
}
