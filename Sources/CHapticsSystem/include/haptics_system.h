/* Small Linux calls the Swift core cannot reach through Glibc's module (GNU extensions). */
#ifndef HAPTICS_SYSTEM_H
#define HAPTICS_SYSTEM_H

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

#endif
