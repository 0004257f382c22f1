// libebur128: EBU R 128 loudness and true peak (https://github.com/jiixyj/libebur128).
#ifndef ROOMTAP_CEBUR128_SHIM_H
#define ROOMTAP_CEBUR128_SHIM_H
#include <ebur128.h>
#endif
