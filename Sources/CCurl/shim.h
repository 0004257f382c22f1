// The C API of curl for Swift. Variadic calls get typed static inline wrappers here.
#ifndef ROOMTAP_CCURL_SHIM_H
#define ROOMTAP_CCURL_SHIM_H
#include <curl/curl.h>
#endif
