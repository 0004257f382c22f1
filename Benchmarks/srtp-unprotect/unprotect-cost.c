// What libsrtp2's srtp_unprotect costs the receive thread per packet: CPU time (this thread's, so a
// loaded machine does not inflate it) and heap allocations, for authentic and forged packets of
// each suite roomtap receives. Debian's libsrtp2 does its crypto through NSS, which makes a new
// PKCS#11 context per packet (docs/ARCHITECTURE.md, "SRTP on the receive thread"). Run:
//
//   bash Benchmarks/srtp-unprotect/run.sh            (builds with clang, runs every suite)
//   ./unprotect-cost SUITE FORGED PACKETS [TRACES]   (SUITE 80, 32 or 128 = AEAD_AES_128_GCM;
//                                                     TRACES: print the first allocations' stacks)
//
// malloc/calloc/realloc/free are defined here, so libsrtp2's and NSS's calls come to them.
#include <execinfo.h>
#include <srtp2/srtp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static int counting = 0, traces = 0;
static long allocations = 0, frees = 0;

void *malloc(size_t n) {
    if (counting) {
        allocations++;
        if (traces > 0) {
            traces--;
            counting = 0;
            void *frames[16];
            fprintf(stderr, "-- malloc(%zu)\n", n);
            backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
            counting = 1;
        }
    }
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) { if (counting) allocations++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (counting) allocations++; return __libc_realloc(p, n); }
void free(void *p) { if (counting && p) frees++; __libc_free(p); }

static double cpuNanoseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    int suite = argc > 1 ? atoi(argv[1]) : 80, forged = argc > 2 ? atoi(argv[2]) : 0;
    int packets = argc > 3 ? atoi(argv[3]) : 100000;
    traces = argc > 4 ? atoi(argv[4]) : 0;
    srtp_init();
    unsigned char key[46];
    for (int i = 0; i < 46; i++) key[i] = (unsigned char)(i * 7 + 1);
    srtp_policy_t policy;
    memset(&policy, 0, sizeof policy);
    if (suite == 80) srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp);
    else if (suite == 32) srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy.rtp);
    else srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp);
    srtp_crypto_policy_set_rtcp_default(&policy.rtcp);
    policy.key = key;
    policy.window_size = 1024;
    policy.ssrc.type = ssrc_any_outbound;
    srtp_t sender, receiver;
    if (srtp_create(&sender, &policy)) return 1;
    policy.ssrc.type = ssrc_any_inbound;  // as roomtap's template: a stream per SSRC that authenticates
    if (srtp_create(&receiver, &policy)) return 1;
    static unsigned char batch[1000][200];
    int lengths[1000];
    double cpu = 0;
    long accepted = 0, measured = 0;
    for (int round = 0; round < packets / 1000; round++) {
        for (int i = 0; i < 1000; i++) {  // an Opus-sized packet: 12-byte header, 80 bytes
            int seq = round * 1000 + i, length = 92;
            unsigned char *b = batch[i];
            memset(b, 0, 200);
            b[0] = 0x80, b[1] = 111, b[2] = seq >> 8, b[3] = seq, b[5] = seq >> 16, b[6] = seq >> 8, b[7] = seq;
            b[8] = 0x12, b[9] = 0x34, b[10] = 0x56, b[11] = 0x78;
            srtp_protect(sender, b, &length);
            if (forged) b[20] ^= 1;
            lengths[i] = length;
        }
        int warm = round >= 2;  // the first rounds make the stream and warm the caches
        counting = warm;
        double start = cpuNanoseconds();
        for (int i = 0; i < 1000; i++) {
            int length = lengths[i];
            if (srtp_unprotect(receiver, batch[i], &length) == srtp_err_status_ok && warm) accepted++;
        }
        double end = cpuNanoseconds();
        counting = 0;
        if (warm) cpu += end - start, measured += 1000;
    }
    printf("%-24s %-9s %6.0f ns/packet  %5.2f allocations/packet  %5.2f frees/packet  (%ld of %ld accepted)\n",
           suite == 80 ? "AES_CM_128_HMAC_SHA1_80" : suite == 32 ? "AES_CM_128_HMAC_SHA1_32" : "AEAD_AES_128_GCM",
           forged ? "forged" : "authentic", cpu / measured, (double)allocations / measured,
           (double)frees / measured, accepted, measured);
    return 0;
}
