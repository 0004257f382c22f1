// The parts of libspandsp (Debian libspandsp-dev) roomtap uses, for Swift: the G.711 (ITU-T
// G.711) and G.722 (ITU-T G.722) decoders and G.711 packet-loss concealment. spandsp's headers
// expect the C99 integer types and telephony.h before the codec headers.
#ifndef ROOMTAP_CSPANDSP_SHIM_H
#define ROOMTAP_CSPANDSP_SHIM_H
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <spandsp/telephony.h>
#include <spandsp/g711.h>
#include <spandsp/g722.h>
#include <spandsp/plc.h>

/// `plc_fillin` without its overlapping `memcpy`. At the start of a gap (`missing_samples == 0`)
/// spandsp 0.0.6 rotates its history ring to the front (`normalise_history`) with
/// `memcpy(history, history + buf_ptr, ...)`: overlapping ranges, undefined behaviour (found by
/// AddressSanitizer, memcpy-param-overlap). This does the same rotation first, with `memmove`, so
/// `plc_fillin` finds `buf_ptr == 0` and skips its own; the samples are the same. No allocation
/// (PLC_HISTORY_LEN samples on the stack); the room clock's thread may call it.
static inline int roomtap_plc_fillin(plc_state_t *s, int16_t amp[], int len) {
    if (s->missing_samples == 0 && s->buf_ptr > 0 && s->buf_ptr < PLC_HISTORY_LEN) {
        int16_t head[PLC_HISTORY_LEN];
        int n = s->buf_ptr;
        memcpy(head, s->history, sizeof(int16_t) * (size_t)n);
        memmove(s->history, s->history + n, sizeof(int16_t) * (size_t)(PLC_HISTORY_LEN - n));
        memcpy(s->history + PLC_HISTORY_LEN - n, head, sizeof(int16_t) * (size_t)n);
        s->buf_ptr = 0;
    }
    return plc_fillin(s, amp, len);
}
#endif
