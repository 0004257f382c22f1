// Swift cannot call C variadic functions, so each opus_*_ctl request roomtap uses gets a typed
// static inline wrapper here. https://opus-codec.org/docs/opus_api-1.3.1/group__opus__ctlvalues.html
#ifndef ROOMTAP_COPUS_SHIM_H
#define ROOMTAP_COPUS_SHIM_H
#include <opus/opus.h>

/// Output gain in Q7.8 dB applied by the decoder (RFC 7845 §5.1 "Output Gain").
static inline int roomtap_opus_decoder_set_gain(OpusDecoder *st, int q8_db) {
    return opus_decoder_ctl(st, OPUS_SET_GAIN(q8_db));
}
static inline int roomtap_opus_decoder_get_last_packet_duration(OpusDecoder *st, int *samples) {
    return opus_decoder_ctl(st, OPUS_GET_LAST_PACKET_DURATION(samples));
}
static inline int roomtap_opus_decoder_reset(OpusDecoder *st) {
    return opus_decoder_ctl(st, OPUS_RESET_STATE);
}
static inline int roomtap_opus_encoder_set_bitrate(OpusEncoder *st, int bps) {
    return opus_encoder_ctl(st, OPUS_SET_BITRATE(bps));
}
static inline int roomtap_opus_encoder_set_complexity(OpusEncoder *st, int complexity) {
    return opus_encoder_ctl(st, OPUS_SET_COMPLEXITY(complexity));
}
static inline int roomtap_opus_encoder_set_inband_fec(OpusEncoder *st, int on) {
    return opus_encoder_ctl(st, OPUS_SET_INBAND_FEC(on));
}
static inline int roomtap_opus_encoder_set_packet_loss_perc(OpusEncoder *st, int percent) {
    return opus_encoder_ctl(st, OPUS_SET_PACKET_LOSS_PERC(percent));
}
static inline int roomtap_opus_encoder_get_lookahead(OpusEncoder *st, int *samples) {
    return opus_encoder_ctl(st, OPUS_GET_LOOKAHEAD(samples));
}
#endif
