// Counts heap allocations per thread, for tests that pin "no allocation on this path".
//
// The test executable defines the allocator's entry points, so the dynamic linker binds every
// library's calls to them (an executable's definitions come first in symbol lookup); each one
// counts when its thread asked to and forwards to glibc's own implementation (`__libc_malloc` and
// friends, exported for exactly this use). `free` and `malloc_usable_size` stay glibc's: the
// memory is glibc's. The counters are thread-local (initial-exec TLS in the executable), so
// counting allocates nothing and other threads' allocations never show.
#include "malloc_counter.h"

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Thread_local int counting;
static _Thread_local uint64_t counted;

static inline void count(void) {
    if (counting) counted++;
}

void malloc_counter_begin(void) {
    counted = 0;
    counting = 1;
}

uint64_t malloc_counter_end(void) {
    counting = 0;
    return counted;
}

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count();
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    count();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}
