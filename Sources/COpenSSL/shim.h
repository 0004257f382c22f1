// OpenSSL for Swift. libcrypto: digests (EVP) and HMAC (RoomTapStorage); libssl: DTLS with the
// use_srtp extension and keying-material export (DTLS-SRTP, RFC 5764) and the per-run certificate
// (RoomTapWebRTC). Macros Swift cannot call are wrapped as static inline functions.
#ifndef ROOMTAP_COPENSSL_SHIM_H
#define ROOMTAP_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/ec.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/srtp.h>

/// A fresh EC P-256 key (EVP_EC_gen is a variadic macro). NULL on failure.
static inline EVP_PKEY *roomtap_ec_p256_key(void) { return EVP_EC_gen("P-256"); }

/// DTLSv1_get_timeout: 1 and the time left in `*tv` when a retransmission timer runs.
static inline long roomtap_dtls_get_timeout(SSL *ssl, struct timeval *tv) { return DTLSv1_get_timeout(ssl, tv); }

/// DTLSv1_handle_timeout: retransmits the last flight when its timer expired.
static inline long roomtap_dtls_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }

/// SSL_CTX_set_read_ahead(ctx, 1), as DTLS over a memory BIO needs.
static inline void roomtap_ssl_ctx_read_ahead(SSL_CTX *ctx) { SSL_CTX_set_read_ahead(ctx, 1); }

/// SSL_set_mtu with the MTU fixed (no query of a socket: the transport is ICE).
static inline void roomtap_ssl_fixed_mtu(SSL *ssl, long mtu) {
    SSL_set_options(ssl, SSL_OP_NO_QUERY_MTU);
    SSL_set_mtu(ssl, mtu);
    DTLS_set_link_mtu(ssl, mtu);
}
/// SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION): DTLS 1.2 or later (RFC 8827 §6.5).
static inline void roomtap_ssl_ctx_dtls12(SSL_CTX *ctx) { SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION); }

/// SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION): TLS 1.2 or later (HTTP/2 over TLS, RFC 9113 §9.2).
static inline void roomtap_ssl_ctx_tls12(SSL_CTX *ctx) { SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }

/// SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN: the peer sent close_notify.
static inline int roomtap_ssl_peer_closed(SSL *ssl) { return (SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN) != 0; }

/// The oldest error on OpenSSL's queue as text (queue cleared), into `buffer`.
static inline void roomtap_ssl_error_text(char *buffer, size_t length) {
    unsigned long code = ERR_get_error();
    if (code == 0) { buffer[0] = 0; return; }
    ERR_error_string_n(code, buffer, length);
    ERR_clear_error();
}
#endif
