/// An RTP data packet: a parsed, non-owning view over a datagram's bytes.
///
/// RFC 3550 §5.1, https://www.rfc-editor.org/rfc/rfc3550#section-5.1. All fields big-endian.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                 (CC of them, 4 bytes each)                    |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  defined by profile (X = 1)   |  length (32-bit words, X = 1) |   RFC 3550 §5.3.1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                 header extension (length words)               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           payload ...                         |
/// |                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                               |  padding (P=1)| padding count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// The parser checks what RFC 3550 §A.1 asks of a receiver and everything needed so that every
/// range it reports lies inside the buffer: version 2, the CSRC list and the header extension fit,
/// and with P set the last byte (the padding count, which counts itself) is at least 1 and at most
/// the bytes after the header. It does not judge the payload type or tell RTCP apart (a receiver
/// sharing a port with RTCP asks ``RTPDemux/isRTCP(_:)`` first, RFC 5761 §4).
///
/// Ranges are byte offsets into ``bytes``. The view borrows the caller's buffer: it is valid only
/// while those bytes are, so use it and drop it before the receive buffer is reused.
///
/// Thread: parsing is pure and allocates nothing; call it from any thread.
public struct RTPPacket {
    /// Size of the fixed header (before the CSRC list), in bytes.
    public static let fixedHeaderSize = 12

    /// The whole datagram this view reads.
    public let bytes: UnsafeRawBufferPointer
    /// The P bit: the packet ends with padding (already removed from ``payloadRange``).
    public let hasPadding: Bool
    /// The X bit: a header extension follows the CSRC list.
    public let hasExtension: Bool
    /// The marker bit (for audio, the first packet of a talkspurt; roomtap ignores it).
    public let marker: Bool
    /// The payload type, 0...127.
    public let payloadType: UInt8
    /// The sequence number (wraps at 0xFFFF).
    public let sequenceNumber: UInt16
    /// The media timestamp, in the payload's clock (48 kHz for Opus, RFC 7587 §4.1). Wraps.
    public let timestamp: UInt32
    /// The synchronization source.
    public let ssrc: UInt32
    /// Number of contributing sources, 0...15.
    public let csrcCount: Int
    /// The header extension's "defined by profile" field (0xBEDE: RFC 8285 one-byte elements,
    /// 0x100X: two-byte elements), or nil without an extension.
    public let extensionProfile: UInt16?
    /// The header extension's data (after its 4-byte header), or nil without an extension.
    public let extensionRange: Range<Int>?
    /// The payload: after the header (and extension), before the padding. May be empty.
    public let payloadRange: Range<Int>
    /// Padding bytes at the end, including the count byte itself (0 when P is clear).
    public let paddingCount: Int

    /// Parses a datagram as RTP. Never traps and allocates nothing, whatever the bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> RTPParseResult {
        let count = bytes.count
        guard count >= fixedHeaderSize else { return .invalid(.tooShort) }
        let b0 = bytes[0]
        let b1 = bytes[1]
        guard b0 >> 6 == 2 else { return .invalid(.badVersion) }
        let csrcCount = Int(b0 & 0x0F)
        var offset = fixedHeaderSize + 4 * csrcCount
        guard offset <= count else { return .invalid(.csrcOverflow) }
        let hasExtension = b0 & 0x10 != 0
        var extensionProfile: UInt16?
        var extensionRange: Range<Int>?
        if hasExtension {
            guard offset + 4 <= count else { return .invalid(.extensionOverflow) }
            let profile = bytes.bigEndianUInt16(at: offset)
            let words = Int(bytes.bigEndianUInt16(at: offset + 2))
            let start = offset + 4
            let end = start + 4 * words
            guard end <= count else { return .invalid(.extensionOverflow) }
            extensionProfile = profile
            extensionRange = start..<end
            offset = end
        }
        let hasPadding = b0 & 0x20 != 0
        var paddingCount = 0
        if hasPadding {
            guard offset < count else { return .invalid(.badPadding) }
            paddingCount = Int(bytes[count - 1])
            guard paddingCount >= 1, paddingCount <= count - offset else { return .invalid(.badPadding) }
        }
        return .packet(
            RTPPacket(
                bytes: bytes, hasPadding: hasPadding, hasExtension: hasExtension, marker: b1 & 0x80 != 0,
                payloadType: b1 & 0x7F, sequenceNumber: bytes.bigEndianUInt16(at: 2),
                timestamp: bytes.bigEndianUInt32(at: 4), ssrc: bytes.bigEndianUInt32(at: 8), csrcCount: csrcCount,
                extensionProfile: extensionProfile, extensionRange: extensionRange,
                payloadRange: offset..<(count - paddingCount), paddingCount: paddingCount))
    }

    /// The RTP version; always 2 for a parsed packet.
    public var version: UInt8 { 2 }

    /// The contributing source at `index` (0..<``csrcCount``), or nil outside that range.
    public func csrc(at index: Int) -> UInt32? {
        guard index >= 0, index < csrcCount else { return nil }
        return bytes.bigEndianUInt32(at: Self.fixedHeaderSize + 4 * index)
    }

    /// The payload bytes (a slice of ``bytes``, same lifetime).
    public var payload: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[payloadRange]) }

    /// The header extension's elements (RFC 8285), empty when there is no extension or its
    /// profile is neither 0xBEDE nor 0x100X.
    public var extensionElements: RTPHeaderExtensionElements {
        guard let profile = extensionProfile, let range = extensionRange else {
            return RTPHeaderExtensionElements(bytes: bytes, profile: 0, range: 0..<0)
        }
        return RTPHeaderExtensionElements(bytes: bytes, profile: profile, range: range)
    }
}

/// What ``RTPPacket/parse(_:)`` found: a packet, or why the datagram is not one.
public enum RTPParseResult {
    case packet(RTPPacket)
    case invalid(RTPParseError)

    /// The packet, or nil when invalid.
    public var packet: RTPPacket? {
        if case .packet(let p) = self { return p }
        return nil
    }
}

/// Why a datagram is not a valid RTP packet. `rawValue` indexes a fixed array of drop counters.
public enum RTPParseError: UInt8, CaseIterable, Sendable, Error {
    /// Fewer than the 12 bytes of the fixed header.
    case tooShort
    /// The version field is not 2.
    case badVersion
    /// The CSRC list (CC × 4 bytes) runs past the end of the datagram.
    case csrcOverflow
    /// The header extension's header or its length (in 32-bit words) runs past the end.
    case extensionOverflow
    /// P is set but the padding count is 0 or more than the bytes after the header.
    case badPadding
}
