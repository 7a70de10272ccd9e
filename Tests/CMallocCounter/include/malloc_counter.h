#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

#include <stdint.h>

/// Starts counting the heap allocations (malloc, calloc, realloc, the aligned allocators) made by
/// the calling thread, from zero. Other threads are never counted.
void malloc_counter_begin(void);

/// Stops counting on the calling thread and returns how many allocations it made since
/// `malloc_counter_begin`.
uint64_t malloc_counter_end(void);

#endif
