// The demuxing part of FFmpeg's libavformat (and the libavutil it needs) for Swift. Macros Swift
// cannot import become static inline functions here.
#ifndef ROOMTAP_CAVFORMAT_SHIM_H
#define ROOMTAP_CAVFORMAT_SHIM_H
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>

/// AVERROR_EOF: the end of the input.
static inline int roomtap_averror_eof(void) { return AVERROR_EOF; }
/// AV_NOPTS_VALUE: no timestamp.
static inline int64_t roomtap_av_nopts_value(void) { return AV_NOPTS_VALUE; }
/// av_rescale_q with rounding to the nearest, halfway cases away from zero (what demuxers use).
static inline int64_t roomtap_av_rescale(int64_t value, int from_num, int from_den, int to_num, int to_den) {
    return av_rescale_q_rnd(value, (AVRational){from_num, from_den}, (AVRational){to_num, to_den},
                            AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
}
#endif
