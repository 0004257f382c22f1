/// An RTCP BYE: the listed sources are leaving (RFC 3550 §6.6,
/// https://www.rfc-editor.org/rfc/rfc3550#section-6.6). A parsed, non-owning view.
///
/// ```
///        0                   1                   2                   3
///        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |V=2|P|    SC   |   PT=BYE=203  |             length            |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |                           SSRC/CSRC                           |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       :                              ...                              :
///       +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// (opt) |     length    |               reason for leaving            ...
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Thread: pure, allocates nothing; valid only while the caller's bytes are.
public struct RTCPBye {
    /// The datagram.
    public let bytes: UnsafeRawBufferPointer
    /// Sources leaving (SC), 0...31.
    public let ssrcCount: Int
    /// The reason for leaving (UTF-8, up to 255 bytes) as offsets into ``bytes``, or nil when the
    /// packet gives none.
    public let reasonRange: Range<Int>?
    let ssrcStart: Int

    /// Reads a BYE, or nil when `packet` is not a BYE (type 203), its body is shorter than its
    /// SC sources, or the reason's length byte points past the body.
    public static func parse(_ packet: RTCPPacket) -> RTCPBye? {
        guard packet.packetType == RTCPPacket.bye else { return nil }
        let body = packet.bodyRange
        let ssrcEnd = body.lowerBound + 4 * packet.count
        guard ssrcEnd <= body.upperBound else { return nil }
        var reason: Range<Int>?
        if ssrcEnd < body.upperBound {
            let length = Int(packet.bytes[ssrcEnd])
            let start = ssrcEnd + 1
            guard start + length <= body.upperBound else { return nil }
            // A zero length octet followed by nothing but zeros is the 32-bit alignment, no reason.
            if length > 0 { reason = start..<(start + length) }
        }
        return RTCPBye(bytes: packet.bytes, ssrcCount: packet.count, reasonRange: reason, ssrcStart: body.lowerBound)
    }

    /// The source at `index` (0..<``ssrcCount``), or nil outside that range.
    public func ssrc(at index: Int) -> UInt32? {
        guard index >= 0, index < ssrcCount else { return nil }
        return bytes.bigEndianUInt32(at: ssrcStart + 4 * index)
    }

    /// The reason's bytes (a slice of ``bytes``), or nil.
    public var reason: UnsafeRawBufferPointer? {
        reasonRange.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }
    }
}
