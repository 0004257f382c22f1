// The C API of libsrtp2 (RFC 3711 SRTP/SRTCP) for Swift. The crypto-policy setters for the
// suites roomtap takes are gathered in one static inline function here, so Swift never fills an
// srtp_policy_t field by field (some setters are macros Swift cannot call).
#ifndef ROOMTAP_CSRTP_SHIM_H
#define ROOMTAP_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#include <stdint.h>
#include <string.h>

/// Sets `policy`'s RTP and RTCP crypto for a suite, in the order of roomtap's SRTPSuite:
/// 0 AES_CM_128_HMAC_SHA1_80, 1 AES_CM_128_HMAC_SHA1_32, 2 AEAD_AES_128_GCM, 3 AEAD_AES_256_GCM.
/// 0 when set, -1 for another number.
static inline int roomtap_srtp_set_suite(srtp_policy_t *policy, int suite) {
    switch (suite) {
    case 0:
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy->rtp);
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy->rtcp);
        return 0;
    case 1:
        // RFC 4568 §6.2.2 (and RFC 3711 §5.2): SRTCP keeps the 80-bit tag with the _32 suite.
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy->rtp);
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy->rtcp);
        return 0;
    case 2:
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy->rtp);
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy->rtcp);
        return 0;
    case 3:
        srtp_crypto_policy_set_aes_gcm_256_16_auth(&policy->rtp);
        srtp_crypto_policy_set_aes_gcm_256_16_auth(&policy->rtcp);
        return 0;
    default:
        return -1;
    }
}

/// Adds one stream to `*session` (creating the session when it is NULL). Inbound (`outbound` 0):
/// for `ssrc` when `any_ssrc` is 0, else for every SSRC no other stream of the session names
/// (libsrtp's template, cloned only once a packet authenticates). Outbound (tests, fuzzing): any
/// SSRC. `key` is the master key followed by the master salt (RFC 4568 §6.1, RFC 7714 §12);
/// libsrtp copies it. Replay window: 1024 packets. Returns libsrtp's status (0 = ok).
static inline int roomtap_srtp_add_stream(srtp_t *session, int suite, int outbound, uint32_t ssrc,
                                          int any_ssrc, const unsigned char *key) {
    srtp_policy_t policy;
    memset(&policy, 0, sizeof policy);
    if (roomtap_srtp_set_suite(&policy, suite) != 0) return srtp_err_status_bad_param;
    if (outbound) {
        policy.ssrc.type = ssrc_any_outbound;
    } else {
        policy.ssrc.type = any_ssrc ? ssrc_any_inbound : ssrc_specific;
        policy.ssrc.value = ssrc;
    }
    policy.key = (unsigned char *)key;
    policy.window_size = 1024;
    policy.allow_repeat_tx = 0;
    if (*session == NULL) return srtp_create(session, &policy);
    return srtp_add_stream(*session, &policy);
}
#endif
