// The demuxing part of FFmpeg's libavformat (and the libavcodec/libavutil calls it needs) for
// Swift, loaded at the first use (dlopen) instead of at start-up: libavformat brings 134 shared
// libraries, whose symbol lookups and constructors cost every roomtap run ~0.2 G instructions
// (~50 ms) and ~25 MiB of resident memory, container or not. Only the types come from the headers;
// every call goes through `roomtap_av_*`. Macros Swift cannot import become functions here.
#ifndef ROOMTAP_CAVFORMAT_H
#define ROOMTAP_CAVFORMAT_H
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/log.h>

/// Loads libavformat (once; thread-safe). 0 on success, else -1 (see `roomtap_av_strerror`).
int roomtap_av_load(void);

/// AVERROR_EOF: the end of the input.
int roomtap_averror_eof(void);
/// AV_NOPTS_VALUE: no timestamp.
int64_t roomtap_av_nopts_value(void);
/// av_rescale_q with rounding to the nearest, halfway cases away from zero (what demuxers use).
int64_t roomtap_av_rescale(int64_t value, int from_num, int from_den, int to_num, int to_den);

// The calls, as libavformat/libavcodec/libavutil declare them. When the library cannot be loaded
// `roomtap_avformat_open_input` fails with AVERROR(ENOSYS) and `roomtap_av_strerror` says why.
void roomtap_av_log_set_level(int level);
int roomtap_avformat_open_input(AVFormatContext **context, const char *url);
void roomtap_avformat_close_input(AVFormatContext **context);
const char *roomtap_avcodec_get_name(enum AVCodecID id);
AVPacket *roomtap_av_packet_alloc(void);
void roomtap_av_packet_free(AVPacket **packet);
int roomtap_av_read_frame(AVFormatContext *context, AVPacket *packet);
void roomtap_av_packet_unref(AVPacket *packet);
uint8_t *roomtap_av_packet_get_side_data(const AVPacket *packet, enum AVPacketSideDataType type, size_t *size);
AVDictionaryEntry *roomtap_av_dict_get(const AVDictionary *dictionary, const char *key);
void roomtap_av_strerror(int code, char *buffer, size_t size);
#endif
