import RoomTapJSON

/// Reads the value of an SDP `a=crypto` attribute (SDES, RFC 4568 §9.1,
/// https://www.rfc-editor.org/rfc/rfc4568#section-9.1):
///
/// ```
/// a=crypto:<tag> <crypto-suite> <key-params> [<session-params>]
/// key-params = "inline:" <base64 key‖salt> ["|" <lifetime>] ["|" <MKI>":"<MKI length>]
/// ```
///
/// e.g. what `ffmpeg -srtp_out_suite ... -sdp_file` writes:
/// `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:zRCoQsnTDbsRqanw1ZL3PFeLJF+Nt+ALhQJRgnWA`.
///
/// Taken: the four suites of ``SRTPSuite``, one `inline:` key of the suite's length, and a
/// lifetime (`2^31` or a number: the most packets the sender protects with the key; the sender's
/// limit to keep, nothing a receiver does). Refused, never ignored: any other suite, several keys
/// or an MKI (libsrtp would need each key and its index), and session parameters
/// (`UNENCRYPTED_SRTP`, `KDR=`, `FEC_ORDER=`...: each changes how packets are protected).
///
/// Messages never contain the key.
///
/// Thread: pure, thread-safe.
package enum SDESCrypto {
    /// What is wrong with an `a=crypto` value: one line without the key, and whether the line is
    /// well-formed but asks for something roomtap cannot honour (`unsupported`) or malformed.
    package struct Problem: Error, Equatable {
        package var unsupported: Bool
        package var message: String
    }

    /// The tag and keying of one `a=crypto` value (the text after `a=crypto:`).
    package static func parse(_ value: Substring) throws(Problem) -> (tag: UInt32, keying: SRTPKeying) {
        let fields = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let expected = "expected a=crypto:<tag> <suite> inline:<base64 key and salt> (RFC 4568)"
        guard fields.count >= 3, let tag = fields[0].sdpDecimal(maximum: 999_999_999), fields[0].utf8.count <= 9 else {
            throw Problem(unsupported: false, message: "malformed a=crypto line; \(expected)")
        }
        guard let suite = SRTPSuite(name: fields[1]) else {
            throw Problem(
                unsupported: true,
                message: "a=crypto suite \(fields[1].prefix(64).quotedForMessage) is not one roomtap receives; "
                    + "have the sender use \(SRTPSuite.namesForMessages)")
        }
        guard fields.count == 3 else {
            throw Problem(
                unsupported: true,
                message: "a=crypto session parameter \(fields[3].prefix(32).quotedForMessage) is not supported; "
                    + "roomtap takes a=crypto lines without session parameters")
        }
        let keys = fields[2].split(separator: ";", omittingEmptySubsequences: false)
        guard keys.count == 1 else {
            throw Problem(
                unsupported: true,
                message: "a=crypto gives \(keys.count) keys; roomtap takes one key (inline:...) per line")
        }
        let parts = fields[2].split(separator: "|", omittingEmptySubsequences: false)
        guard parts[0].hasPrefix("inline:") else {
            throw Problem(
                unsupported: false,
                message: "a=crypto key method is not inline: (the only one SDES defines for SRTP); \(expected)")
        }
        for extra in parts.dropFirst() {
            if extra.contains(":") {
                throw Problem(
                    unsupported: true,
                    message: "a=crypto key has an MKI (|<MKI>:<length>); roomtap takes keys without an MKI")
            }
            guard isLifetime(extra) else {
                throw Problem(
                    unsupported: false,
                    message: "a=crypto key lifetime is not 2^<n> or a number; \(expected)")
            }
        }
        guard parts.count <= 2 else {
            throw Problem(unsupported: false, message: "a=crypto key has more than one lifetime; \(expected)")
        }
        let base64 = parts[0].dropFirst("inline:".count)
        guard let keying = SRTPKeying(suite: suite, base64: base64) else {
            let decoded = SRTPKeying.decodeBase64(base64)
            let what = decoded.map { "is \($0.count) bytes" } ?? "is not base64"
            throw Problem(
                unsupported: false,
                message: "a=crypto key and salt \(what); \(suite.name) takes \(suite.keyAndSaltLength) bytes "
                    + "(\(suite.keyLength) of key, \(suite.saltLength) of salt) in base64")
        }
        return (UInt32(tag), keying)
    }

    /// `2^<n>` (n 1...64) or a decimal number of packets.
    private static func isLifetime(_ text: Substring) -> Bool {
        if text.hasPrefix("2^") { return text.dropFirst(2).sdpDecimal(maximum: 64).map { $0 >= 1 } ?? false }
        return text.sdpDecimal(maximum: UInt64.max) != nil
    }
}
