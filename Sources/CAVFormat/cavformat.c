// libavformat loaded at first use: see include/cavformat.h.
#include "cavformat.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define ROOMTAP_STR2(x) #x
#define ROOMTAP_STR(x) ROOMTAP_STR2(x)
#define ROOMTAP_AVFORMAT_SONAME "libavformat.so." ROOMTAP_STR(LIBAVFORMAT_VERSION_MAJOR)

static struct {
    int loaded;
    char error[256];
    void (*log_set_level)(int);
    int (*open_input)(AVFormatContext **, const char *, const AVInputFormat *, AVDictionary **);
    void (*close_input)(AVFormatContext **);
    const char *(*codec_get_name)(enum AVCodecID);
    AVPacket *(*packet_alloc)(void);
    void (*packet_free)(AVPacket **);
    int (*read_frame)(AVFormatContext *, AVPacket *);
    void (*packet_unref)(AVPacket *);
    uint8_t *(*packet_get_side_data)(const AVPacket *, enum AVPacketSideDataType, size_t *);
    AVDictionaryEntry *(*dict_get)(const AVDictionary *, const char *, const AVDictionaryEntry *, int);
    int (*strerror)(int, char *, size_t);
    int64_t (*rescale_q_rnd)(int64_t, AVRational, AVRational, enum AVRounding);
} api;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // dlsym on the handle also finds libavcodec's and libavutil's calls (its dependencies).
    void *handle = dlopen(ROOMTAP_AVFORMAT_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(api.error, sizeof api.error, "%s cannot be loaded (%s); install it (make deps)",
                 ROOMTAP_AVFORMAT_SONAME, why ? why : "unknown error");
        return;
    }
#define ROOMTAP_LOAD(field, name)                                                                   \
    if (!(*(void **)&api.field = dlsym(handle, name))) {                                            \
        snprintf(api.error, sizeof api.error, "%s has no %s; install libavformat-dev's version",     \
                 ROOMTAP_AVFORMAT_SONAME, name);                                                     \
        return;                                                                                     \
    }
    ROOMTAP_LOAD(log_set_level, "av_log_set_level")
    ROOMTAP_LOAD(open_input, "avformat_open_input")
    ROOMTAP_LOAD(close_input, "avformat_close_input")
    ROOMTAP_LOAD(codec_get_name, "avcodec_get_name")
    ROOMTAP_LOAD(packet_alloc, "av_packet_alloc")
    ROOMTAP_LOAD(packet_free, "av_packet_free")
    ROOMTAP_LOAD(read_frame, "av_read_frame")
    ROOMTAP_LOAD(packet_unref, "av_packet_unref")
    ROOMTAP_LOAD(packet_get_side_data, "av_packet_get_side_data")
    ROOMTAP_LOAD(dict_get, "av_dict_get")
    ROOMTAP_LOAD(strerror, "av_strerror")
    ROOMTAP_LOAD(rescale_q_rnd, "av_rescale_q_rnd")
#undef ROOMTAP_LOAD
    api.loaded = 1;
}

int roomtap_av_load(void) {
    pthread_once(&once, load);
    return api.loaded ? 0 : -1;
}

int roomtap_averror_eof(void) { return AVERROR_EOF; }
int64_t roomtap_av_nopts_value(void) { return AV_NOPTS_VALUE; }

int64_t roomtap_av_rescale(int64_t value, int from_num, int from_den, int to_num, int to_den) {
    if (roomtap_av_load() != 0) return 0;
    return api.rescale_q_rnd(value, (AVRational){from_num, from_den}, (AVRational){to_num, to_den},
                             AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
}

void roomtap_av_log_set_level(int level) {
    if (roomtap_av_load() == 0) api.log_set_level(level);
}

int roomtap_avformat_open_input(AVFormatContext **context, const char *url) {
    if (roomtap_av_load() != 0) return AVERROR(ENOSYS);
    return api.open_input(context, url, NULL, NULL);
}

void roomtap_avformat_close_input(AVFormatContext **context) {
    if (roomtap_av_load() == 0) api.close_input(context);
}

const char *roomtap_avcodec_get_name(enum AVCodecID id) {
    return roomtap_av_load() == 0 ? api.codec_get_name(id) : "unknown";
}

AVPacket *roomtap_av_packet_alloc(void) { return roomtap_av_load() == 0 ? api.packet_alloc() : NULL; }

void roomtap_av_packet_free(AVPacket **packet) {
    if (roomtap_av_load() == 0) api.packet_free(packet);
}

int roomtap_av_read_frame(AVFormatContext *context, AVPacket *packet) {
    return roomtap_av_load() == 0 ? api.read_frame(context, packet) : AVERROR(ENOSYS);
}

void roomtap_av_packet_unref(AVPacket *packet) {
    if (roomtap_av_load() == 0) api.packet_unref(packet);
}

uint8_t *roomtap_av_packet_get_side_data(const AVPacket *packet, enum AVPacketSideDataType type, size_t *size) {
    return roomtap_av_load() == 0 ? api.packet_get_side_data(packet, type, size) : NULL;
}

AVDictionaryEntry *roomtap_av_dict_get(const AVDictionary *dictionary, const char *key) {
    return roomtap_av_load() == 0 ? api.dict_get(dictionary, key, NULL, 0) : NULL;
}

void roomtap_av_strerror(int code, char *buffer, size_t size) {
    if (size == 0) return;
    if (roomtap_av_load() != 0) {
        snprintf(buffer, size, "%s", api.error);
    } else if (api.strerror(code, buffer, size) < 0) {
        snprintf(buffer, size, "error %d", code);
    }
}
