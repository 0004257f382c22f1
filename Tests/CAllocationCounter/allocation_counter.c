#include "allocation_counter.h"
#include <stddef.h>
#include <errno.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ROOMTAP_SANITIZER 1
#endif
#endif

#ifdef ROOMTAP_SANITIZER
// A sanitizer owns malloc; counting is not available in such builds.
int roomtap_allocation_counting_available(void) { return 0; }
void roomtap_count_allocations_on_this_thread(int enabled) { (void)enabled; }
uint64_t roomtap_counted_allocations(void) { return 0; }
void roomtap_reset_counted_allocations(void) {}
#else
int roomtap_allocation_counting_available(void) { return 1; }

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting;
static uint64_t counted;

void roomtap_count_allocations_on_this_thread(int enabled) { counting = enabled; }
uint64_t roomtap_counted_allocations(void) { return __atomic_load_n(&counted, __ATOMIC_SEQ_CST); }
void roomtap_reset_counted_allocations(void) { __atomic_store_n(&counted, 0, __ATOMIC_SEQ_CST); }

static inline void note(void) {
    if (counting) __atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { note(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { note(); return __libc_realloc(p, size); }
void free(void *p) {
    if (p) note();
    __libc_free(p);
}
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    note();
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
#endif
