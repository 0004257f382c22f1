/// The audio format of one participant's RTP stream: which codec, its RTP clock rate and the
/// channels the stream carries. Every codec decodes into the room's 48 kHz, 10 ms frames.
///
/// | encoding | payload type | RTP clock | audio | spec |
/// |---|---|---|---|---|
/// | `opus` | dynamic | 48000 | 48 kHz | RFC 7587 |
/// | `PCMU` (G.711 µ-law) | 0 | 8000 | 8 kHz | RFC 3551 §4.5.14 |
/// | `PCMA` (G.711 A-law) | 8 | 8000 | 8 kHz | RFC 3551 §4.5.14 |
/// | `G722` | 9 | 8000 | 16 kHz | RFC 3551 §4.5.2 (the clock-rate quirk) |
/// | `L16` | dynamic (10, 11 static) | any | = clock | RFC 3551 §4.5.11, big-endian |
///
/// G.722 samples 16 kHz audio but its RTP clock runs at 8000 Hz "for historical reasons"
/// (RFC 3551 §4.5.2, https://www.rfc-editor.org/rfc/rfc3551#section-4.5.2): a 20 ms packet is 160
/// bytes, 320 samples, and advances the timestamp by 160.
///
/// Named in SDP by `a=rtpmap:<pt> <encoding>/<clock rate>[/<channels>]` (RFC 8866 §6.6) or by the
/// static payload types 0, 8, 9, 10, 11 of RFC 3551 §6 without one; in a room file by the same
/// `<encoding>/<clock rate>[/<channels>]` text (see docs/ROOM-FILE.md).
///
/// Thread: a value type, use anywhere.
public struct AudioCodec: Sendable, Hashable, CustomStringConvertible {
    /// The codecs roomtap decodes.
    public enum Encoding: String, Sendable, CaseIterable {
        case opus
        case pcmu = "PCMU"
        case pcma = "PCMA"
        case g722 = "G722"
        case l16 = "L16"
    }

    /// The codec.
    public var encoding: Encoding
    /// The RTP timestamp clock in Hz (48000 for Opus, 8000 for G.711 and G.722, the sample rate
    /// for L16).
    public var clockRate: Int
    /// Channels in the stream (L16: 1 or 2, interleaved; Opus: 2 as SDP writes it whatever the
    /// audio, RFC 7587 §7; G.711, G.722: 1). Not the channels a track decodes to.
    public var channels: Int

    /// Opus, `opus/48000/2`.
    public static let opus = AudioCodec(encoding: .opus, clockRate: 48_000, channels: 2)
    /// G.711 µ-law, payload type 0.
    public static let pcmu = AudioCodec(encoding: .pcmu, clockRate: 8_000, channels: 1)
    /// G.711 A-law, payload type 8.
    public static let pcma = AudioCodec(encoding: .pcma, clockRate: 8_000, channels: 1)
    /// G.722 at 64 kbit/s, payload type 9.
    public static let g722 = AudioCodec(encoding: .g722, clockRate: 8_000, channels: 1)

    /// Linear 16-bit PCM in network byte order at `rate` Hz (8000...192000) with 1 or 2 channels.
    public static func l16(rate: Int, channels: Int = 1) -> AudioCodec {
        AudioCodec(encoding: .l16, clockRate: rate, channels: channels)
    }

    /// The L16 rates accepted (Hz).
    public static let l16Rates = 8_000...192_000

    private init(encoding: Encoding, clockRate: Int, channels: Int) {
        self.encoding = encoding
        self.clockRate = clockRate
        self.channels = channels
    }

    /// The codec an `a=rtpmap` names (encoding compared without case, RFC 8866 §6.6), or nil when
    /// roomtap does not decode it or the rate or channels are not the codec's (`PCMU/16000`).
    /// `channels` nil: the rtpmap gave none (1; Opus 2).
    public static func rtpmap(encoding: String, clockRate: Int, channels: Int?) -> AudioCodec? {
        switch encoding.lowercased() {
        case "opus":
            guard clockRate == 48_000, (channels ?? 2) <= 2, channels != 0 else { return nil }
            return .opus
        case "pcmu": return clockRate == 8_000 && (channels ?? 1) == 1 ? .pcmu : nil
        case "pcma": return clockRate == 8_000 && (channels ?? 1) == 1 ? .pcma : nil
        case "g722": return clockRate == 8_000 && (channels ?? 1) == 1 ? .g722 : nil
        case "l16":
            guard l16Rates.contains(clockRate), (1...2).contains(channels ?? 1) else { return nil }
            return .l16(rate: clockRate, channels: channels ?? 1)
        default: return nil
        }
    }

    /// The codec of a static RFC 3551 §6 payload type that has no `a=rtpmap`: 0 PCMU, 8 PCMA,
    /// 9 G722, 10 L16/44100/2, 11 L16/44100/1; nil for any other.
    public static func staticPayloadType(_ payloadType: UInt8) -> AudioCodec? {
        switch payloadType {
        case 0: .pcmu
        case 8: .pcma
        case 9: .g722
        case 10: .l16(rate: 44_100, channels: 2)
        case 11: .l16(rate: 44_100, channels: 1)
        default: nil
        }
    }

    /// The static payload type of this codec (RFC 3551 §6), or nil when it has none (Opus, L16
    /// at other rates than 44100).
    public var staticPayloadType: UInt8? {
        switch encoding {
        case .pcmu: 0
        case .pcma: 8
        case .g722: 9
        case .l16 where clockRate == 44_100: channels == 2 ? 10 : 11
        default: nil
        }
    }

    /// Reads the room file's `codec` text: `<encoding>[/<clock rate>[/<channels>]]` as an rtpmap
    /// writes it (`PCMU`, `G722/8000`, `L16/16000`, `L16/48000/2`, `opus`). L16 needs its rate;
    /// the others default to theirs. Nil when roomtap does not decode it.
    public static func named(_ text: String) -> AudioCodec? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let name = parts.first, !name.isEmpty else { return nil }
        var rate: Int?
        var channels: Int?
        if parts.count > 1 {
            guard let r = Int(parts[1]), r > 0 else { return nil }
            rate = r
        }
        if parts.count > 2 {
            guard let c = Int(parts[2]) else { return nil }
            channels = c
        }
        switch name.lowercased() {
        case "opus": return rtpmap(encoding: "opus", clockRate: rate ?? 48_000, channels: channels)
        case "pcmu", "pcma", "g722": return rtpmap(encoding: String(name), clockRate: rate ?? 8_000, channels: channels)
        case "l16":
            guard let rate else { return nil }
            return rtpmap(encoding: "L16", clockRate: rate, channels: channels)
        default: return nil
        }
    }

    /// The rate of the audio the codec carries (Hz): the clock rate, except G.722's 16000.
    public var sampleRate: Int { encoding == .g722 ? 16_000 : clockRate }

    /// As an rtpmap writes it and room.json reports it: `opus/48000/2`, `PCMU/8000`,
    /// `G722/8000`, `L16/16000/1`.
    public var description: String {
        switch encoding {
        case .opus: "opus/48000/2"
        case .l16: "L16/\(clockRate)/\(channels)"
        default: "\(encoding.rawValue)/\(clockRate)"
        }
    }

    /// True for Opus (decoded by libopus; the others by ``PCMPayloadDecoder``).
    public var isOpus: Bool { encoding == .opus }
}
