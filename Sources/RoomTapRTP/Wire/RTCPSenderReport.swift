/// An RTCP sender report's sender information: how the sender's RTP timestamps map to its
/// wall clock (RFC 3550 §6.4.1, https://www.rfc-editor.org/rfc/rfc3550#section-6.4.1).
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    RC   |   PT=SR=200   |             length            |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         SSRC of sender                        |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// sender |              NTP timestamp, most significant word             |
/// info   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |             NTP timestamp, least significant word             |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         RTP timestamp                         |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                     sender's packet count                     |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                      sender's octet count                     |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// report |                 report blocks, 24 bytes each (RC)             |
/// blocks :                           ...                                 :
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |                  profile-specific extensions                  |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Report blocks (what the sender heard from others) are only bounds-checked: the body must hold
/// the sender info and RC blocks. Thread: a value type, parsing is pure and allocates nothing.
public struct RTCPSenderReport: Sendable, Equatable {
    /// Bytes of the body before the report blocks (SSRC and sender info).
    static let senderInfoSize = 24
    /// Bytes of one report block.
    static let reportBlockSize = 24

    /// The sender.
    public var ssrc: UInt32
    /// The sender's wall clock when it sent this report.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant as ``ntpTimestamp`` in the sender's RTP timestamp units (48 kHz for Opus).
    public var rtpTimestamp: UInt32
    /// RTP data packets sent since the start of transmission (wraps).
    public var packetCount: UInt32
    /// Payload octets sent since the start of transmission (wraps).
    public var octetCount: UInt32
    /// Report blocks in the packet (RC), 0...31.
    public var reportCount: Int

    /// Creates a report (for tests and senders).
    public init(
        ssrc: UInt32, ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        reportCount: Int = 0
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reportCount = reportCount
    }

    /// Reads a sender report, or nil when `packet` is not an SR (type 200) or its body is shorter
    /// than the sender info plus its report blocks.
    public static func parse(_ packet: RTCPPacket) -> RTCPSenderReport? {
        guard packet.packetType == RTCPPacket.senderReport else { return nil }
        let body = packet.bodyRange
        guard body.count >= senderInfoSize + reportBlockSize * packet.count else { return nil }
        let b = packet.bytes
        let o = body.lowerBound
        return RTCPSenderReport(
            ssrc: b.bigEndianUInt32(at: o),
            ntpTimestamp: NTPTimestamp(seconds: b.bigEndianUInt32(at: o + 4), fraction: b.bigEndianUInt32(at: o + 8)),
            rtpTimestamp: b.bigEndianUInt32(at: o + 12), packetCount: b.bigEndianUInt32(at: o + 16),
            octetCount: b.bigEndianUInt32(at: o + 20), reportCount: packet.count)
    }
}
