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
#endif
