// The C API of asound for Swift. Variadic calls get typed static inline wrappers here.
#ifndef ROOMTAP_CALSA_SHIM_H
#define ROOMTAP_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
