import COpenSSL
import Foundation

/// The certificate DTLS presents, made once per run (RFC 8827 §6.5: a fresh one per session is
/// fine; peers check it only against the fingerprint our SDP carries, RFC 8122): an EC P-256 key,
/// self-signed, valid from a day ago for 30 days, `CN=roomtap`.
///
/// Thread: immutable after `init`; OpenSSL's key and certificate objects are only read
/// (reference-counted by each SSL_CTX that uses them).
package final class DTLSCertificate: @unchecked Sendable {
    let key: OpaquePointer
    let certificate: OpaquePointer
    /// `sha-256 AB:CD:...`, as `a=fingerprint` carries it.
    public let fingerprint: String

    public init() throws(WebRTCError) {
        guard let key = roomtap_ec_p256_key() else { throw WebRTCError.dtls("OpenSSL could not make a DTLS key") }
        guard let x509 = X509_new() else {
            EVP_PKEY_free(key)
            throw WebRTCError.dtls("OpenSSL could not make a DTLS certificate")
        }
        X509_set_version(x509, 2)
        var serial: UInt64 = 0
        withUnsafeMutableBytes(of: &serial) { _ = RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 8) }
        ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), serial >> 1)
        X509_gmtime_adj(X509_getm_notBefore(x509), -86_400)
        X509_gmtime_adj(X509_getm_notAfter(x509), 30 * 86_400)
        let name = X509_get_subject_name(x509)
        _ = X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "roomtap", -1, -1, 0)
        X509_set_issuer_name(x509, name)
        X509_set_pubkey(x509, key)
        guard X509_sign(x509, key, EVP_sha256()) > 0, let fingerprint = Self.fingerprint(of: x509)
        else {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw WebRTCError.dtls("OpenSSL could not sign the DTLS certificate")
        }
        self.key = key
        certificate = x509
        self.fingerprint = fingerprint
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// A certificate's SHA-256 fingerprint as `sha-256 AB:CD:...` (RFC 8122 §5).
    static func fingerprint(of certificate: OpaquePointer) -> String? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { return nil }
        return "sha-256 " + digest[..<Int(length)].map { String(format: "%02X", $0) }.joined(separator: ":")
    }
}
