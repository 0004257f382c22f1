/// Why joining over WebRTC failed: one line for the user, saying what failed and what to check.
///
/// Thread: a value type, use anywhere.
public enum WebRTCError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The signaling server answered with an error, or not at all.
    case signaling(String)
    /// ICE could not gather or connect.
    case ice(String)
    /// The DTLS handshake failed or the peer's certificate does not match its fingerprint.
    case dtls(String)
    /// The peer's SDP cannot be used.
    case sdp(String)

    public var description: String {
        switch self {
        case .signaling(let message), .ice(let message), .dtls(let message), .sdp(let message): message
        }
    }
}
