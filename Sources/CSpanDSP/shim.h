// The parts of libspandsp (Debian libspandsp-dev) roomtap uses, for Swift: the G.711 (ITU-T
// G.711) and G.722 (ITU-T G.722) decoders and G.711 packet-loss concealment. spandsp's headers
// expect the C99 integer types and telephony.h before the codec headers.
#ifndef ROOMTAP_CSPANDSP_SHIM_H
#define ROOMTAP_CSPANDSP_SHIM_H
#include <inttypes.h>
#include <stdint.h>
#include <spandsp/telephony.h>
#include <spandsp/g711.h>
#include <spandsp/g722.h>
#include <spandsp/plc.h>
#endif
