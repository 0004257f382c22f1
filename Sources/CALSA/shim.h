// The C API of asound for Swift. Variadic calls get typed static inline wrappers here.
#ifndef ROOMTAP_CALSA_SHIM_H
#define ROOMTAP_CALSA_SHIM_H
#include <alsa/asoundlib.h>

// alsa-lib prints its own diagnostics ("ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM x")
// to stderr through a variadic handler; roomtap reports each failure as one line of its own instead.
static void roomtap_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

// Installs the quiet handler (process-wide). Call before the first ALSA call that may fail.
static inline void roomtap_alsa_silence_library_messages(void) {
    snd_lib_error_set_handler(roomtap_alsa_quiet_handler);
}
#endif
