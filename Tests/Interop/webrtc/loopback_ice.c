/* An LD_PRELOAD shim for Janus in tests: getifaddrs() reports no interface as loopback.
 *
 * Janus gathers ICE host candidates only on interfaces without IFF_LOOPBACK (src/ice.c,
 * janus_ice_setup_local: "Skip loopback interfaces"; no setting changes that), so on a machine
 * whose tests may only use 127.0.0.0/8 it would offer no usable candidate. With this shim and
 * `nat: { ice_enforce_list = "127.0.0.1" }` in janus.jcfg, Janus gathers one host candidate,
 * 127.0.0.1, and nothing else. Built and loaded by JanusTestServer and janus_loopback.sh:
 *   cc -shared -fPIC -O2 -o loopback_ice.so loopback_ice.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stddef.h>

int getifaddrs(struct ifaddrs **list) {
    int (*real)(struct ifaddrs **) = (int (*)(struct ifaddrs **))dlsym(RTLD_NEXT, "getifaddrs");
    int result = real(list);
    if (result == 0) {
        for (struct ifaddrs *entry = *list; entry != NULL; entry = entry->ifa_next) {
            entry->ifa_flags &= ~IFF_LOOPBACK;
        }
    }
    return result;
}
