/* Small Linux calls the Swift core cannot reach through Glibc's module (GNU extensions). */
#ifndef HAPTICS_SYSTEM_H
#define HAPTICS_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

/**
 * Tunes the calling thread for deadline work: names it (15 characters kept), sets its timer
 * slack to 1 ns, and with `realtime` asks for SCHED_FIFO at `priority`.
 * Returns 1 if the thread now runs SCHED_FIFO, 0 otherwise.
 */
int haptics_tune_scheduler_thread(const char *name, int realtime, int priority);

/**
 * `secure_getenv(3)`: the variable's value, or NULL when it is unset or the process runs
 * set-user-ID, set-group-ID or with file capabilities (AT_SECURE).
 */
const char *haptics_secure_getenv(const char *name);

/**
 * `timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)`: a disarmed timer's descriptor, or -errno.
 * (Glibc's Swift module leaves <sys/timerfd.h> out.)
 */
int haptics_timerfd_create(void);

/**
 * Arms timer `fd` for the absolute CLOCK_MONOTONIC time `deadline_ns` (`timerfd_settime` with
 * TFD_TIMER_ABSTIME): UINT64_MAX disarms it; 0 is taken as 1 ns (an all-zero time would disarm),
 * so a time already past fires at once. Returns 0 or -errno.
 */
int haptics_timerfd_arm(int fd, uint64_t deadline_ns);

/**
 * Blocks until timer `fd` fires (returns at once if it fired since it was last armed), retrying
 * on EINTR. Returns the number of expirations read, or -errno.
 */
int64_t haptics_timerfd_wait(int fd);

/**
 * `malloc_trim(0)`: gives the heap's free memory back to the system. Returns 1 if some was
 * released. (Glibc's Swift module leaves <malloc.h> out.)
 */
int haptics_malloc_trim(void);

/**
 * `mallopt(M_MMAP_THRESHOLD, bytes)`: allocations of at least `bytes` are mapped on their own and
 * unmapped when freed, and glibc no longer raises the threshold by itself (after each such free it
 * otherwise does, up to 32 MiB, and later blocks that size come from the heaps, where a freed one
 * stays resident). Returns 0, or -EINVAL.
 */
int haptics_malloc_fix_mmap_threshold(size_t bytes);

/**
 * Sets the calling thread's nice value (`setpriority(PRIO_PROCESS, gettid(), nice)`): a thread
 * that should only take what others leave of the CPU. Returns 0 or -errno.
 */
int haptics_set_thread_nice(int nice);

#endif
