// The C API of soxr for Swift. Variadic calls get typed static inline wrappers here.
#ifndef ROOMTAP_CSOXR_SHIM_H
#define ROOMTAP_CSOXR_SHIM_H
#include <soxr.h>
#endif
