/* Small Linux calls the Swift core cannot reach through Glibc's module (GNU extensions). */
#ifndef HAPTICS_SYSTEM_H
#define HAPTICS_SYSTEM_H

/**
 * Tunes the calling thread for deadline work: names it (15 characters kept), sets its timer
 * slack to 1 ns, and with `realtime` asks for SCHED_FIFO at `priority`.
 * Returns 1 if the thread now runs SCHED_FIFO, 0 otherwise.
 */
int haptics_tune_scheduler_thread(const char *name, int realtime, int priority);

#endif
