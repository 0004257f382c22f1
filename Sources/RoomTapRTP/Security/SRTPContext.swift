import CSRTP

/// libsrtp2's one-time initialisation, run by the first ``SRTPContext`` (Swift runs a global's
/// initialiser once, thread-safely). True when libsrtp is ready.
private let libsrtpReady: Bool = srtp_init() == srtp_err_status_ok

/// The SRTP/SRTCP receive state (RFC 3711, https://www.rfc-editor.org/rfc/rfc3711) of one listen
/// socket: a libsrtp2 session holding the key of every participant who sends there. A participant
/// with an SSRC gets a stream of that SSRC; the one participant of a port without an SSRC (see
/// ``RoomDescription``) gets libsrtp's template, which any other SSRC must authenticate against.
///
/// `unprotectRTP`/`unprotectRTCP` authenticate, check replay (a 1024-packet window per SSRC) and
/// decrypt in place, in the caller's buffer; a packet that fails is left to be dropped and counted by
/// the caller, so it never reaches a parser or creates a track. libsrtp allocates only when a new
/// SSRC first authenticates against the template (its stream is cloned then); a packet that does not
/// authenticate allocates nothing.
///
/// Thread: made on a control thread; after that used by one thread at a time (the receive thread):
/// libsrtp's session is not thread-safe.
public final class SRTPContext: @unchecked Sendable {
    /// One participant's stream: its SSRC (nil: any SSRC no other stream names) and its keying.
    public struct Stream: Sendable {
        /// The SSRC, or nil for libsrtp's template (any other SSRC).
        public var ssrc: UInt32?
        /// Suite, key and salt.
        public var keying: SRTPKeying

        /// Creates a stream.
        public init(ssrc: UInt32?, keying: SRTPKeying) {
            self.ssrc = ssrc
            self.keying = keying
        }
    }

    /// Why libsrtp refused a session: its status number (libsrtp's `srtp_err_status_t`). The message
    /// names no key.
    public struct SetupError: Error, CustomStringConvertible, Sendable {
        /// libsrtp's status.
        public let status: Int
        public var description: String {
            "libsrtp2 could not set up SRTP (status \(status)); check the SRTP keys and suites of the room"
        }
    }

    private var session: srtp_t?

    /// Whether libsrtp2 is initialised (it is the first time this is read, once per process: anything
    /// else using libsrtp in this process must ask here rather than call `srtp_init` itself).
    package static var libraryReady: Bool { libsrtpReady }

    /// A session with these streams. Throws when libsrtp refuses (two streams for one SSRC, two
    /// without an SSRC, libsrtp not initialised).
    public init(streams: [Stream]) throws(SetupError) {
        guard libsrtpReady else { throw SetupError(status: Int(srtp_err_status_init_fail.rawValue)) }
        var session: srtp_t?
        for stream in streams {
            let status = stream.keying.keyAndSalt.withUnsafeBufferPointer { key in
                roomtap_srtp_add_stream(
                    &session, stream.keying.suite.rawValue, 0, stream.ssrc ?? 0, stream.ssrc == nil ? 1 : 0,
                    key.baseAddress)
            }
            guard status == 0 else {
                if let session { srtp_dealloc(session) }
                throw SetupError(status: Int(status))
            }
        }
        self.session = session
    }

    deinit {
        if let session { srtp_dealloc(session) }
    }

    /// Unprotects an SRTP packet in place: the plain RTP packet's length, or nil when it does not
    /// authenticate, is a replay, or its SSRC has no key here. `length` bytes at `bytes` are the
    /// datagram; the plain packet starts at `bytes` too. Allocates nothing (but see the type's note
    /// on a new SSRC).
    public func unprotectRTP(_ bytes: UnsafeMutableRawPointer, length: Int) -> Int? {
        guard let session, length >= 12, length <= Int(Int32.max) else { return nil }
        var plain = Int32(length)
        return srtp_unprotect(session, bytes, &plain) == srtp_err_status_ok ? Int(plain) : nil
    }

    /// Unprotects an SRTCP compound packet in place (RFC 3711 §3.4): the plain RTCP length, or nil
    /// when it does not authenticate or is a replay.
    public func unprotectRTCP(_ bytes: UnsafeMutableRawPointer, length: Int) -> Int? {
        guard let session, length >= 8, length <= Int(Int32.max) else { return nil }
        var plain = Int32(length)
        return srtp_unprotect_rtcp(session, bytes, &plain) == srtp_err_status_ok ? Int(plain) : nil
    }
}
