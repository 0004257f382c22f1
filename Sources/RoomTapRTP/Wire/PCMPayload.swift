/// The RTP payloads of the sample-based PBX codecs (RFC 3551 §4.3, §4.5,
/// https://www.rfc-editor.org/rfc/rfc3551#section-4.5): how long a payload is, in RTP timestamp
/// units, and whether it is whole.
///
/// - PCMU / PCMA (G.711, §4.5.14): one byte per sample, 8000 Hz; channels interleaved.
/// - G.722 (§4.5.2): 64 kbit/s, one byte per two 16 kHz samples, but the RTP clock is 8000 Hz, so
///   one byte is one timestamp unit.
/// - L16 (§4.5.11): 16-bit signed samples, most significant byte first, channels interleaved
///   (left, right):
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |        sample 0, left         |        sample 0, right        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |        sample 1, left         |              ...              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Thread: pure functions, any thread; nothing allocates.
package enum PCMPayload {
    /// The longest packet taken, in milliseconds (as for Opus: 120 ms). A longer one is invalid.
    public static let maxMilliseconds = 120

    /// The payload's duration in RTP timestamp units (`codec.clockRate`), or nil when it is empty,
    /// not a whole number of samples (frames of all channels), or longer than ``maxMilliseconds``.
    /// Not for Opus (see ``OpusPayload``).
    public static func timestampUnits(of payload: UnsafeRawBufferPointer, codec: AudioCodec) -> Int? {
        let bytesPerUnit: Int
        switch codec.encoding {
        case .opus: return nil
        case .pcmu, .pcma, .g722: bytesPerUnit = codec.channels
        case .l16: bytesPerUnit = 2 * codec.channels
        }
        guard !payload.isEmpty, payload.count % bytesPerUnit == 0 else { return nil }
        let units = payload.count / bytesPerUnit
        guard units <= codec.clockRate * maxMilliseconds / 1000 else { return nil }
        return units
    }
}
