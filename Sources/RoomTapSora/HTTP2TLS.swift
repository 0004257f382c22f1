import COpenSSL

/// TLS for ``HTTP2Server`` (`https://` audio-streaming URLs): HTTP/2 over TLS 1.2 or later with
/// ALPN `h2` (RFC 9113 §3.2 and §9.2, https://www.rfc-editor.org/rfc/rfc9113#section-3.2; ALPN:
/// RFC 7301). OpenSSL does TLS over memory BIOs, so the server's one poll loop feeds it the bytes
/// its socket reads and sends what it produces; a client that offers no `h2` is refused in the
/// handshake (`no_application_protocol`), as it could only speak HTTP/1.
///
/// Thread: the context is made on a control thread and then only read; each session is confined
/// to the server's thread.
package final class TLSServerContext: @unchecked Sendable {
    let context: OpaquePointer

    /// Loads the certificate chain (PEM, leaf first) and its private key (PEM). Throws a one-line
    /// reason naming the file.
    package init(certificate: String, key: String) throws(HTTP2Server.BindError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw HTTP2Server.BindError(description: "cannot create a TLS context: \(Self.errorText())")
        }
        self.context = context
        roomtap_ssl_ctx_tls12(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
            throw HTTP2Server.BindError(
                description: "--tls-cert \(certificate): not a readable PEM certificate (\(Self.errorText()))")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            let text = Self.errorText()
            throw HTTP2Server.BindError(
                description: text.contains("mismatch")
                    ? "--tls-key \(key) is not the key of --tls-cert \(certificate)"
                    : "--tls-key \(key): not a readable PEM private key (\(text))")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw HTTP2Server.BindError(
                description: "--tls-key \(key) is not the key of --tls-cert \(certificate) (\(Self.errorText()))")
        }
        SSL_CTX_set_alpn_select_cb(context, Self.selectH2, nil)
    }

    deinit { SSL_CTX_free(context) }

    /// A session for one accepted connection; nil when OpenSSL cannot make one.
    func makeSession() -> TLSSession? { TLSSession(context: context) }

    /// ALPN (RFC 7301 §3.2): `h2` if the client offers it, else the handshake fails.
    private static let selectH2:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
            UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
        ) -> Int32 = { _, out, outLength, offered, offeredLength, _ in
            guard let out, let outLength, let offered else { return SSL_TLSEXT_ERR_ALERT_FATAL }
            var i = 0
            while i < Int(offeredLength) {
                let length = Int(offered[i])
                if length == 2, i + 2 < Int(offeredLength), offered[i + 1] == UInt8(ascii: "h"),
                    offered[i + 2] == UInt8(ascii: "2")
                {
                    out.pointee = offered + i + 1
                    outLength.pointee = 2
                    return SSL_TLSEXT_ERR_OK
                }
                i += 1 + length
            }
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }

    static func errorText() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        roomtap_ssl_error_text(&buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "unknown error" : text
    }
}

/// One connection's TLS: ciphertext in (``receive(_:into:)``), plaintext out, and back.
///
/// Thread: confined to the server's thread.
final class TLSSession {
    private let ssl: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer

    init?(context: OpaquePointer) {
        guard let ssl = SSL_new(context), let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem())
        else { return nil }
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        SSL_set_bio(ssl, incoming, outgoing)  // the SSL owns both BIOs now
        SSL_set_accept_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Takes `ciphertext` from the socket and appends the plaintext it yields (nothing during the
    /// handshake) to `plaintext`; what TLS wants to send (handshake, alerts) goes to `wire`.
    /// Returns a one-line reason when the connection must close.
    func receive(_ ciphertext: UnsafeRawBufferPointer, into plaintext: inout [UInt8], wire: inout [UInt8]) -> String? {
        if ciphertext.count > 0 { _ = BIO_write(incoming, ciphertext.baseAddress, Int32(ciphertext.count)) }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if n > 0 {
                plaintext.append(contentsOf: buffer[0..<Int(n)])
                continue
            }
            let error = SSL_get_error(ssl, n)
            drain(into: &wire)
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return nil
            case SSL_ERROR_ZERO_RETURN: return "the client closed TLS"
            default: return "TLS: \(TLSServerContext.errorText())"
            }
        }
    }

    /// Encrypts `plaintext` and appends the records to `wire`.
    func send(_ plaintext: UnsafeRawBufferPointer, into wire: inout [UInt8]) {
        var offset = 0
        while offset < plaintext.count {
            let n = SSL_write(ssl, plaintext.baseAddress! + offset, Int32(plaintext.count - offset))
            guard n > 0 else { break }
            offset += Int(n)
            drain(into: &wire)
        }
        drain(into: &wire)
    }

    /// Whether the handshake is complete.
    var isEstablished: Bool { SSL_is_init_finished(ssl) == 1 }

    private func drain(into wire: inout [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while BIO_ctrl_pending(outgoing) > 0 {
            let n = buffer.withUnsafeMutableBytes { BIO_read(outgoing, $0.baseAddress, Int32($0.count)) }
            guard n > 0 else { return }
            wire.append(contentsOf: buffer[0..<Int(n)])
        }
    }
}
