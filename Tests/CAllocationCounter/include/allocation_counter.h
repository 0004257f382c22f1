// Counts heap allocations made by threads that opted in: the test for "nothing allocates per
// frame on the room clock's thread". Linked into the test binary only; it interposes malloc and
// friends (glibc exports __libc_* for exactly this) and adds one thread-local check per call.
#ifndef ROOMTAP_ALLOCATION_COUNTER_H
#define ROOMTAP_ALLOCATION_COUNTER_H
#include <stdint.h>

/// 1 when counting works (0 in sanitizer builds, where the sanitizer owns malloc).
int roomtap_allocation_counting_available(void);
/// Starts (1) or stops (0) counting allocations made by the calling thread.
void roomtap_count_allocations_on_this_thread(int enabled);
/// Allocations counted so far, across all opted-in threads.
uint64_t roomtap_counted_allocations(void);
/// Sets the count back to zero.
void roomtap_reset_counted_allocations(void);
#endif
