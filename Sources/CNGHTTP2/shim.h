// The C API of libnghttp2 (HTTP/2 framing, HPACK, flow control; RFC 9113, RFC 7541) for Swift.
// Sora's audio streaming reaches roomtap over it (RoomTapSora). No variadic calls are needed.
#ifndef ROOMTAP_CNGHTTP2_SHIM_H
#define ROOMTAP_CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif
