import CSRTP

/// The SRTP/SRTCP send side (RFC 3711) of one association: a libsrtp2 session with one outbound
/// stream (any SSRC), protecting in place in the caller's buffer, which must have room for the
/// authentication tag (and SRTCP's index) after the packet: 16 + 4 bytes more are always enough.
///
/// Thread: one thread at a time (libsrtp's session is not thread-safe); the caller serialises.
public final class SRTPSender: @unchecked Sendable {
    /// Bytes a protected packet may grow by (tag and SRTCP index).
    public static let overhead = 20 + 16
    private var session: srtp_t?

    /// A session for `keying`. Throws when libsrtp refuses.
    public init(keying: SRTPKeying) throws(SRTPContext.SetupError) {
        guard SRTPContext.libraryReady else {
            throw SRTPContext.SetupError(status: Int(srtp_err_status_init_fail.rawValue))
        }
        var session: srtp_t?
        let status = keying.keyAndSalt.withUnsafeBufferPointer { key in
            roomtap_srtp_add_stream(&session, keying.suite.rawValue, 1, 0, 1, key.baseAddress)
        }
        guard status == 0 else {
            if let session { srtp_dealloc(session) }
            throw SRTPContext.SetupError(status: Int(status))
        }
        self.session = session
    }

    deinit {
        if let session { srtp_dealloc(session) }
    }

    /// Protects `length` bytes of RTP at `bytes` in place; the protected length, or nil.
    public func protectRTP(_ bytes: UnsafeMutableRawPointer, length: Int) -> Int? {
        guard let session else { return nil }
        var size = Int32(length)
        return srtp_protect(session, bytes, &size) == srtp_err_status_ok ? Int(size) : nil
    }

    /// Protects `length` bytes of RTCP at `bytes` in place; the protected length, or nil.
    public func protectRTCP(_ bytes: UnsafeMutableRawPointer, length: Int) -> Int? {
        guard let session else { return nil }
        var size = Int32(length)
        return srtp_protect_rtcp(session, bytes, &size) == srtp_err_status_ok ? Int(size) : nil
    }
}
