// libogg: Ogg page and packet framing (RFC 3533). https://xiph.org/ogg/doc/libogg/reference.html
#ifndef ROOMTAP_COGG_SHIM_H
#define ROOMTAP_COGG_SHIM_H
#include <ogg/ogg.h>
#endif
