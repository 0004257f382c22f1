import COpenSSL
import Foundation
import RoomTapRTP

/// The DTLS side of a DTLS-SRTP association (RFC 5764, https://www.rfc-editor.org/rfc/rfc5764):
/// an OpenSSL DTLS 1.2 session over ICE that negotiates the `use_srtp` extension, checks the peer's
/// certificate against the fingerprint of its SDP (RFC 8122) and exports the SRTP master keys
/// (`EXTRACTOR-dtls_srtp`, RFC 5764 §4.2).
///
/// Records go out through a BIO of our own that hands each datagram OpenSSL writes to `send`
/// (a memory BIO would run a flight's datagrams together); datagrams in go through a memory BIO
/// (DTLS records delimit themselves). The MTU is fixed at 1200 bytes, as browsers use.
///
/// Thread: confined to one thread (the ICE thread) after `init`.
final class DTLSEndpoint: @unchecked Sendable {
    /// Which side of the handshake we are: the client is `a=setup:active` (RFC 5763 §5).
    enum Role: Sendable { case client, server }

    /// The keys of both directions, once the handshake is done.
    struct Keys: Sendable {
        var suite: SRTPSuite
        /// Protects what we send.
        var local: SRTPKeying
        /// Unprotects what the peer sends.
        var remote: SRTPKeying
    }

    /// What a datagram or a timer did.
    enum Event: Sendable {
        case connected(Keys)
        case failed(String)
        case closed
    }

    static let mtu = 1200
    let role: Role
    private let remoteFingerprint: String
    private let send: (UnsafeRawBufferPointer) -> Void
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private var method: OpaquePointer?
    private(set) var isConnected = false
    private var isFinished = false

    /// A session presenting `certificate`, expecting `remoteFingerprint` (`sha-256 AB:...`).
    init(
        certificate: DTLSCertificate, role: Role, remoteFingerprint: String,
        send: @escaping (UnsafeRawBufferPointer) -> Void
    ) throws(WebRTCError) {
        self.role = role
        self.remoteFingerprint = remoteFingerprint
        self.send = send
        guard let context = SSL_CTX_new(DTLS_method()) else { throw WebRTCError.dtls("OpenSSL could not start DTLS") }
        roomtap_ssl_ctx_dtls12(context)
        roomtap_ssl_ctx_read_ahead(context)
        SSL_CTX_use_certificate(context, certificate.certificate)
        SSL_CTX_use_PrivateKey(context, certificate.key)
        // Every certificate is accepted here and checked against the SDP's fingerprint after the
        // handshake (a self-signed certificate is the norm in WebRTC).
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, _ in 1 }
        // SSL_CTX_set_tlsext_use_srtp returns 0 on success.
        guard
            SSL_CTX_set_tlsext_use_srtp(
                context, "SRTP_AEAD_AES_128_GCM:SRTP_AEAD_AES_256_GCM:SRTP_AES128_CM_SHA1_80:SRTP_AES128_CM_SHA1_32")
                == 0,
            let ssl = SSL_new(context), let readBIO = BIO_new(BIO_s_mem())
        else {
            SSL_CTX_free(context)
            throw WebRTCError.dtls("OpenSSL could not set up DTLS-SRTP")
        }
        self.context = context
        self.ssl = ssl
        self.readBIO = readBIO
        let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "roomtap-ice")
        self.method = method
        BIO_meth_set_write(method) { bio, data, length in
            guard let bio, let data, length > 0, let owner = BIO_get_data(bio) else { return -1 }
            Unmanaged<DTLSEndpoint>.fromOpaque(owner).takeUnretainedValue().send(
                UnsafeRawBufferPointer(start: data, count: Int(length)))
            return length
        }
        BIO_meth_set_ctrl(method) { _, command, _, _ in
            switch command {
            case BIO_CTRL_FLUSH: 1
            case BIO_CTRL_DGRAM_QUERY_MTU: Int(DTLSEndpoint.mtu)
            default: 0
            }
        }
        BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        let writeBIO = BIO_new(method)
        BIO_set_data(writeBIO, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_bio(ssl, readBIO, writeBIO)
        roomtap_ssl_fixed_mtu(ssl, Self.mtu)
        switch role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
    }

    deinit {
        SSL_free(ssl)  // frees both BIOs
        SSL_CTX_free(context)
        if let method { BIO_meth_free(method) }
    }

    /// Starts the handshake (the client sends its ClientHello; the server waits). Call once ICE
    /// has connected.
    func start() -> Event? {
        role == .client ? advance() : nil
    }

    /// One DTLS datagram from the peer.
    func receive(_ datagram: UnsafeRawBufferPointer) -> Event? {
        guard !isFinished, let base = datagram.baseAddress else { return nil }
        BIO_write(readBIO, base, Int32(datagram.count))
        if !isConnected { return advance() }
        // After the handshake only alerts (and retransmitted flights) come: read them.
        var sink = [UInt8](repeating: 0, count: 64)
        while SSL_read(ssl, &sink, Int32(sink.count)) > 0 {}
        if roomtap_ssl_peer_closed(ssl) != 0 {
            isFinished = true
            return .closed
        }
        return nil
    }

    /// Retransmits a lost flight when its timer ran out (every 100 ms or so from the ICE thread
    /// until connected).
    func handleTimeout() -> Event? {
        guard !isConnected, !isFinished else { return nil }
        var left = timeval()
        if roomtap_dtls_get_timeout(ssl, &left) == 1, left.tv_sec == 0, left.tv_usec == 0 {
            if roomtap_dtls_handle_timeout(ssl) < 0 { return fail("the DTLS handshake timed out") }
        }
        return nil
    }

    /// Sends close_notify (idempotent).
    func shutdown() {
        guard isConnected, !isFinished else { return }
        isFinished = true
        SSL_shutdown(ssl)
    }

    private func advance() -> Event? {
        let result = SSL_do_handshake(ssl)
        if result == 1 { return finishHandshake() }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return nil }
        return fail("the DTLS handshake failed: \(Self.openSSLError())")
    }

    private func finishHandshake() -> Event {
        guard let certificate = SSL_get1_peer_certificate(ssl) else {
            return fail("the peer sent no DTLS certificate")
        }
        defer { X509_free(certificate) }
        let (algorithm, expected) = Self.splitFingerprint(remoteFingerprint)
        guard let digest = Self.digest(named: algorithm) else {
            return fail("the peer's fingerprint uses \(algorithm), which roomtap does not check (use sha-256)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        X509_digest(certificate, digest, &bytes, &length)
        let actual = bytes[..<Int(length)].map { String(format: "%02X", $0) }.joined(separator: ":")
        guard actual == expected.uppercased() else {
            return fail("the peer's DTLS certificate does not match the fingerprint in its SDP: refusing the media")
        }
        guard let profile = SSL_get_selected_srtp_profile(ssl), let suite = Self.suite(profileID: profile.pointee.id)
        else { return fail("the peer negotiated no SRTP profile roomtap takes (DTLS use_srtp)") }
        let keyLength = suite.keyLength
        let saltLength = suite.saltLength
        var material = [UInt8](repeating: 0, count: 2 * (keyLength + saltLength))
        let label = "EXTRACTOR-dtls_srtp"
        guard SSL_export_keying_material(ssl, &material, material.count, label, label.utf8.count, nil, 0, 0) == 1
        else { return fail("OpenSSL could not export the SRTP keys") }
        // client key ‖ server key ‖ client salt ‖ server salt (RFC 5764 §4.2)
        let clientKey = material[0..<keyLength]
        let serverKey = material[keyLength..<2 * keyLength]
        let clientSalt = material[2 * keyLength..<2 * keyLength + saltLength]
        let serverSalt = material[(2 * keyLength + saltLength)...]
        guard let client = SRTPKeying(suite: suite, keyAndSalt: Array(clientKey + clientSalt)),
            let server = SRTPKeying(suite: suite, keyAndSalt: Array(serverKey + serverSalt))
        else { return fail("the exported SRTP keys have the wrong length") }
        isConnected = true
        return .connected(
            role == .client
                ? Keys(suite: suite, local: client, remote: server) : Keys(suite: suite, local: server, remote: client))
    }

    private func fail(_ message: String) -> Event {
        isFinished = true
        return .failed(message)
    }

    /// `sha-256 AB:CD` → ("sha-256", "AB:CD").
    static func splitFingerprint(_ fingerprint: String) -> (String, String) {
        let parts = fingerprint.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return ("", "") }
        return (parts[0].lowercased(), String(parts[1]))
    }

    private static func digest(named name: String) -> OpaquePointer? {
        switch name {
        case "sha-1": EVP_sha1()
        case "sha-256": EVP_sha256()
        case "sha-384": EVP_sha384()
        case "sha-512": EVP_sha512()
        default: nil
        }
    }

    /// OpenSSL's SRTP profile ids (srtp.h) as suites.
    private static func suite(profileID: UInt) -> SRTPSuite? {
        switch Int32(profileID) {
        case SRTP_AES128_CM_SHA1_80: .aesCM128HMACSHA1Tag80
        case SRTP_AES128_CM_SHA1_32: .aesCM128HMACSHA1Tag32
        case SRTP_AEAD_AES_128_GCM: .aeadAES128GCM
        case SRTP_AEAD_AES_256_GCM: .aeadAES256GCM
        default: nil
        }
    }

    private static func openSSLError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        roomtap_ssl_error_text(&buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "no reason given" : text
    }
}
