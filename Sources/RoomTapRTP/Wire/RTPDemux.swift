/// Telling RTP from RTCP when both arrive on one port (RFC 5761 §4,
/// https://www.rfc-editor.org/rfc/rfc5761#section-4).
///
/// The RTCP packet type occupies the octet where RTP has the marker bit and the payload type:
///
/// ```
///  0                   1
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |   RTP
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|    RC   |  packet type  |   RTCP
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// RFC 5761 §4 keeps the two apart with two rules: "payload type values in the range 64-95 MUST
/// NOT be used" for RTP on a multiplexed port, and "future RTCP packet type assignments SHOULD be
/// made after the current assignments in the range 209-223, then in the range 194-199, so that
/// only the RTP payload types in the range 64-95 are blocked". RTCP packet types therefore live in
/// 192-223 (FIR, NACK, SR 200, RR 201, SDES 202, BYE 203, APP 204, RTPFB 205, PSFB 206, XR 207,
/// ...), which is PT 64-95 with the marker bit set. The rule here is exactly that: version 2 and a
/// second octet in 192...223 is RTCP; anything else goes to the RTP parser. A second octet of
/// 64...95 (PT 64-95 without the marker) is then RTP with a payload type RFC 5761 forbids, which a
/// receiver drops as an unknown payload type. (libwebrtc and others test `octet & 0x7F` in 64...95
/// and call those RTCP too; the difference only concerns packets that are invalid either way.)
///
/// Thread: pure functions, any thread.
public enum RTPDemux {
    /// RTCP packet types RFC 5761 §4 sets apart from RTP: the second octet of an RTCP packet.
    public static let rtcpPacketTypes: ClosedRange<UInt8> = 192...223

    /// Whether a datagram starting with these two octets is RTCP (RFC 5761 §4).
    public static func isRTCP(firstByte: UInt8, secondByte: UInt8) -> Bool {
        firstByte >> 6 == 2 && rtcpPacketTypes.contains(secondByte)
    }

    /// Whether a datagram is RTCP (RFC 5761 §4). False for fewer than 2 bytes.
    public static func isRTCP(_ datagram: UnsafeRawBufferPointer) -> Bool {
        datagram.count >= 2 && isRTCP(firstByte: datagram[0], secondByte: datagram[1])
    }
}
