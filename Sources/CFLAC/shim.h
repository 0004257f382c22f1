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
#endif
