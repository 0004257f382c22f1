// The C API of wslay for Swift. Variadic calls get typed static inline wrappers here.
#ifndef ROOMTAP_CWSLAY_SHIM_H
#define ROOMTAP_CWSLAY_SHIM_H
#include <wslay/wslay.h>
#endif
