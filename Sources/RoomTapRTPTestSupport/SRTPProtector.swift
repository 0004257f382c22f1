import CSRTP
public import RoomTapRTP

/// The sending side of SRTP for tests (libsrtp2, as a real sender would use it): protects RTP
/// packets and RTCP compounds with one suite and key, for any SSRC. Each protector keeps its own
/// rollover and SRTCP index, like one sender.
///
/// Thread: one thread at a time (libsrtp's session is not thread-safe).
public final class SRTPProtector: @unchecked Sendable {
    private var session: srtp_t?

    /// A protector for this keying; nil when libsrtp refuses it.
    public init?(_ keying: SRTPKeying) {
        guard SRTPContext.libraryReady else { return nil }
        var session: srtp_t?
        let status = keying.keyAndSalt.withUnsafeBufferPointer {
            roomtap_srtp_add_stream(&session, keying.suite.rawValue, 1, 0, 1, $0.baseAddress)
        }
        guard status == 0, session != nil else { return nil }
        self.session = session
    }

    deinit {
        if let session { srtp_dealloc(session) }
    }

    /// The SRTP packet protecting `packet` (RFC 3711 §3.1): encrypted payload plus the tag.
    public func protectRTP(_ packet: [UInt8]) -> [UInt8] {
        protect(packet, rtcp: false)
    }

    /// The SRTCP packet protecting an RTCP compound (RFC 3711 §3.4): encrypted, E flag, index, tag.
    public func protectRTCP(_ packet: [UInt8]) -> [UInt8] {
        protect(packet, rtcp: true)
    }

    private func protect(_ packet: [UInt8], rtcp: Bool) -> [UInt8] {
        // Room for the tag and the SRTCP index (SRTP_MAX_TRAILER_LEN is 144).
        var buffer = packet + [UInt8](repeating: 0, count: 160)
        var length = Int32(packet.count)
        let status = buffer.withUnsafeMutableBytes { raw in
            rtcp
                ? srtp_protect_rtcp(session, raw.baseAddress, &length) : srtp_protect(session, raw.baseAddress, &length)
        }
        precondition(status == srtp_err_status_ok, "srtp_protect failed: \(status.rawValue)")
        return Array(buffer.prefix(Int(length)))
    }
}
