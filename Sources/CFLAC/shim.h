// libFLAC: the FLAC stream encoder and metadata objects (https://xiph.org/flac/api/).
// The encoder's I/O callbacks write to a file descriptor here, in C, so Swift hands libFLAC a plain
// struct instead of closures: roomtap_flac_init_fd.
#ifndef ROOMTAP_CFLAC_SHIM_H
#define ROOMTAP_CFLAC_SHIM_H
#include <FLAC/metadata.h>
#include <FLAC/stream_encoder.h>
#include <errno.h>
#include <unistd.h>

/// Where an encoder writes: a descriptor, and the errno of the first failed write (0: none).
typedef struct {
    int fd;
    int error;
} roomtap_flac_output;

static FLAC__StreamEncoderWriteStatus roomtap_flac_write(
    const FLAC__StreamEncoder *encoder, const FLAC__byte buffer[], size_t bytes, uint32_t samples,
    uint32_t current_frame, void *client_data) {
    (void)encoder; (void)samples; (void)current_frame;
    roomtap_flac_output *out = (roomtap_flac_output *)client_data;
    size_t done = 0;
    while (done < bytes) {
        ssize_t n = write(out->fd, buffer + done, bytes - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            out->error = errno;
            return FLAC__STREAM_ENCODER_WRITE_STATUS_FATAL_ERROR;
        }
        done += (size_t)n;
    }
    return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
}

static FLAC__StreamEncoderSeekStatus roomtap_flac_seek(
    const FLAC__StreamEncoder *encoder, FLAC__uint64 offset, void *client_data) {
    (void)encoder;
    roomtap_flac_output *out = (roomtap_flac_output *)client_data;
    if (lseek(out->fd, (off_t)offset, SEEK_SET) < 0) {
        out->error = errno;
        return FLAC__STREAM_ENCODER_SEEK_STATUS_ERROR;
    }
    return FLAC__STREAM_ENCODER_SEEK_STATUS_OK;
}

static FLAC__StreamEncoderTellStatus roomtap_flac_tell(
    const FLAC__StreamEncoder *encoder, FLAC__uint64 *offset, void *client_data) {
    (void)encoder;
    roomtap_flac_output *out = (roomtap_flac_output *)client_data;
    off_t at = lseek(out->fd, 0, SEEK_CUR);
    if (at < 0) {
        out->error = errno;
        return FLAC__STREAM_ENCODER_TELL_STATUS_ERROR;
    }
    *offset = (FLAC__uint64)at;
    return FLAC__STREAM_ENCODER_TELL_STATUS_OK;
}

/// Starts `encoder` writing to `out->fd` (seekable: libFLAC rewrites STREAMINFO in finish).
static inline FLAC__StreamEncoderInitStatus roomtap_flac_init_fd(FLAC__StreamEncoder *encoder, roomtap_flac_output *out) {
    return FLAC__stream_encoder_init_stream(
        encoder, roomtap_flac_write, roomtap_flac_seek, roomtap_flac_tell, NULL, out);
}

/// Appends NAME=value to a VORBIS_COMMENT block (copied). Returns 0 on failure.
static inline int roomtap_flac_add_comment(FLAC__StreamMetadata *block, const char *name, const char *value) {
    FLAC__StreamMetadata_VorbisComment_Entry entry;
    if (!FLAC__metadata_object_vorbiscomment_entry_from_name_value_pair(&entry, name, value)) return 0;
    return FLAC__metadata_object_vorbiscomment_append_comment(block, entry, false) ? 1 : 0;
}

#include <FLAC/stream_decoder.h>

/// What a counting decode found: samples per channel in the frames decoded, errors reported.
typedef struct {
    uint64_t samples;
    unsigned sample_rate;
    int errors;
} roomtap_flac_count;

static FLAC__StreamDecoderWriteStatus roomtap_flac_count_write(
    const FLAC__StreamDecoder *decoder, const FLAC__Frame *frame, const FLAC__int32 *const buffer[],
    void *client_data) {
    (void)decoder; (void)buffer;
    roomtap_flac_count *count = (roomtap_flac_count *)client_data;
    count->samples += frame->header.blocksize;
    count->sample_rate = frame->header.sample_rate;
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

static void roomtap_flac_count_error(
    const FLAC__StreamDecoder *decoder, FLAC__StreamDecoderErrorStatus status, void *client_data) {
    (void)decoder; (void)status;
    ((roomtap_flac_count *)client_data)->errors += 1;
}

/// Starts `decoder` on the file at `path`, counting into `count` (no MD5 check, no metadata).
static inline FLAC__StreamDecoderInitStatus roomtap_flac_init_count(
    FLAC__StreamDecoder *decoder, const char *path, roomtap_flac_count *count) {
    return FLAC__stream_decoder_init_file(
        decoder, path, roomtap_flac_count_write, NULL, roomtap_flac_count_error, count);
}

#include <openssl/evp.h>

/// The MD5 of a FLAC stream's decoded audio as STREAMINFO states it
/// (https://xiph.org/flac/format.html#metadata_block_streaminfo): every sample, channels
/// interleaved, little-endian, in (bits per sample + 7) / 8 bytes. libFLAC computes it only to
/// check it, so repair computes it here with libcrypto.
typedef struct {
    EVP_MD_CTX *md5;
    int errors;
} roomtap_flac_md5_state;

static FLAC__StreamDecoderWriteStatus roomtap_flac_md5_write(
    const FLAC__StreamDecoder *decoder, const FLAC__Frame *frame, const FLAC__int32 *const buffer[],
    void *client_data) {
    (void)decoder;
    roomtap_flac_md5_state *state = (roomtap_flac_md5_state *)client_data;
    unsigned bytes = (frame->header.bits_per_sample + 7) / 8;
    unsigned char chunk[4096];
    size_t n = 0;
    for (unsigned i = 0; i < frame->header.blocksize; i++) {
        for (unsigned c = 0; c < frame->header.channels; c++) {
            FLAC__int32 v = buffer[c][i];
            for (unsigned b = 0; b < bytes; b++) chunk[n++] = (unsigned char)(((uint32_t)v >> (8 * b)) & 0xFF);
            if (n > sizeof chunk - 32) {
                EVP_DigestUpdate(state->md5, chunk, n);
                n = 0;
            }
        }
    }
    if (n > 0) EVP_DigestUpdate(state->md5, chunk, n);
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

static void roomtap_flac_md5_error(
    const FLAC__StreamDecoder *decoder, FLAC__StreamDecoderErrorStatus status, void *client_data) {
    (void)decoder; (void)status;
    ((roomtap_flac_md5_state *)client_data)->errors += 1;
}

/// Decodes the whole file at `path` into `digest` (16 bytes). Returns 0, or -1 when it cannot be
/// opened or decoded without errors.
static inline int roomtap_flac_md5(const char *path, unsigned char digest[16]) {
    FLAC__StreamDecoder *decoder = FLAC__stream_decoder_new();
    if (!decoder) return -1;
    roomtap_flac_md5_state state = {EVP_MD_CTX_new(), 0};
    int result = -1;
    if (state.md5 && EVP_DigestInit_ex(state.md5, EVP_md5(), NULL) == 1
        && FLAC__stream_decoder_init_file(
               decoder, path, roomtap_flac_md5_write, NULL, roomtap_flac_md5_error, &state)
               == FLAC__STREAM_DECODER_INIT_STATUS_OK) {
        if (FLAC__stream_decoder_process_until_end_of_stream(decoder) && state.errors == 0) {
            unsigned length = 0;
            if (EVP_DigestFinal_ex(state.md5, digest, &length) == 1 && length == 16) result = 0;
        }
        FLAC__stream_decoder_finish(decoder);
    }
    if (state.md5) EVP_MD_CTX_free(state.md5);
    FLAC__stream_decoder_delete(decoder);
    return result;
}
/// A decode to 16-bit PCM (`FLACFileReader`): STREAMINFO's layout from the metadata callback, then
/// each frame's samples interleaved into `pcm` (room for `capacity` samples, set by the caller after
/// the metadata), shifted to 16 bits. A frame that does not fit, or whose channel count differs
/// from STREAMINFO's, aborts the decode (`refused`).
typedef struct {
    int16_t *pcm;
    size_t capacity;
    size_t filled;
    unsigned channels;
    unsigned bits;
    unsigned sample_rate;
    unsigned max_blocksize;
    uint64_t total_samples;
    int errors;
    int refused;
} roomtap_flac_pcm;

static FLAC__StreamDecoderWriteStatus roomtap_flac_pcm_write(
    const FLAC__StreamDecoder *decoder, const FLAC__Frame *frame, const FLAC__int32 *const buffer[],
    void *client_data) {
    (void)decoder;
    roomtap_flac_pcm *state = (roomtap_flac_pcm *)client_data;
    unsigned channels = frame->header.channels;
    unsigned count = frame->header.blocksize;
    unsigned bits = frame->header.bits_per_sample;
    if (channels != state->channels || (size_t)count * channels > state->capacity || bits == 0 || bits > 32) {
        state->refused = 1;
        return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
    }
    for (unsigned i = 0; i < count; i++) {
        for (unsigned c = 0; c < channels; c++) {
            FLAC__int32 v = buffer[c][i];
            if (bits > 16) v >>= (bits - 16);
            else if (bits < 16) v = (FLAC__int32)((uint32_t)v << (16 - bits));
            state->pcm[(size_t)i * channels + c] = (int16_t)v;
        }
    }
    state->filled = (size_t)count * channels;
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

static void roomtap_flac_pcm_metadata(
    const FLAC__StreamDecoder *decoder, const FLAC__StreamMetadata *metadata, void *client_data) {
    (void)decoder;
    if (metadata->type != FLAC__METADATA_TYPE_STREAMINFO) return;
    roomtap_flac_pcm *state = (roomtap_flac_pcm *)client_data;
    state->channels = metadata->data.stream_info.channels;
    state->bits = metadata->data.stream_info.bits_per_sample;
    state->sample_rate = metadata->data.stream_info.sample_rate;
    state->max_blocksize = metadata->data.stream_info.max_blocksize;
    state->total_samples = metadata->data.stream_info.total_samples;
}

static void roomtap_flac_pcm_error(
    const FLAC__StreamDecoder *decoder, FLAC__StreamDecoderErrorStatus status, void *client_data) {
    (void)decoder; (void)status;
    ((roomtap_flac_pcm *)client_data)->errors += 1;
}

/// Starts `decoder` on the file at `path`, decoding into `state` (STREAMINFO only among metadata).
static inline FLAC__StreamDecoderInitStatus roomtap_flac_init_pcm(
    FLAC__StreamDecoder *decoder, const char *path, roomtap_flac_pcm *state) {
    return FLAC__stream_decoder_init_file(
        decoder, path, roomtap_flac_pcm_write, roomtap_flac_pcm_metadata, roomtap_flac_pcm_error, state);
}
#endif
