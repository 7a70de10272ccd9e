/*
 * gpio_stop_guard.h: stops every open GPIO/PWM actuator of the process when it is interrupted
 * (SIGINT, SIGTERM) or exits normally (atexit), from code that is async-signal-safe.
 *
 * Each open actuator registers its stop sequence once, precomputed: the line request and the
 * logical values that mean "stopped" (all inactive), and up to GPIO_STOP_GUARD_MAX_WRITES sysfs
 * writes (a path and a value: `duty_cycle` <- "0", then `enable` <- "0"). The handler only reads
 * that fixed table and calls open(2)/write(2)/close(2), clock_gettime(2), one GPIO ioctl
 * (gpiod_shim_set_values) and, at the end, sigaction(2) and raise(3): nothing allocates or locks.
 *
 * What the SIGINT/SIGTERM handler does:
 *   1. marks the process halted, so no hardware write section can start any more
 *      (gpio_stop_guard_enter fails with -ESHUTDOWN);
 *   2. for each registered actuator, waits (at most 200 ms) for a write section another thread
 *      is in to end, then runs the stop sequence: lines first when the actuator has an enable
 *      line (the driver stops at once), else the PWM writes first;
 *   3. chains to the handler that was installed before, if there was one (and clears the halt:
 *      that handler decides whether the process lives on), or else restores the default action
 *      and raises the signal again, so the process dies of it as it would have.
 * A signal that was ignored when the guard was installed stays ignored (no handler is installed
 * for it). The handlers are installed once per process, at the first registration; the atexit
 * hook runs the same stop sequence (without the signal part).
 *
 * Processes killed with SIGKILL run nothing: the kernel releases their GPIO lines, and the next
 * process to open the actuator forces it stopped first (the backend's open does).
 */
#ifndef GPIO_STOP_GUARD_H
#define GPIO_STOP_GUARD_H

#include <stddef.h>

#include "gpiod_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most actuators registered at once. */
#define GPIO_STOP_GUARD_MAX_SLOTS 64
/** Most sysfs writes in one stop sequence. */
#define GPIO_STOP_GUARD_MAX_WRITES 6
/** Longest sysfs path, including the NUL. */
#define GPIO_STOP_GUARD_PATH_SIZE 256
/** Longest value written, including the NUL. */
#define GPIO_STOP_GUARD_VALUE_SIZE 24

/**
 * Registers an actuator's stop sequence and installs the handlers if this is the first one.
 *
 * @param lines the actuator's line request, or NULL; it must stay valid until unregistered.
 * @param stopped_values the logical line values that stop it (one per line of `lines`).
 * @param lines_first non-zero to set the lines before the sysfs writes.
 * @param paths, values `write_count` sysfs writes, in order (copied).
 * @return the slot (>= 0), or -ENOSPC (table full), -ENAMETOOLONG, -EINVAL.
 */
int gpio_stop_guard_register(gpiod_shim_request * _Nullable lines, const int * _Nullable stopped_values, int lines_first,
                             const char * _Nonnull const * _Nullable paths, const char * _Nonnull const * _Nullable values,
                             size_t write_count);

/** Removes a registration (waiting for a stop sequence running on another thread to finish). */
void gpio_stop_guard_unregister(int slot);

/**
 * Enters a hardware write section for `slot`: the handler will not run this actuator's stop
 * sequence concurrently with another thread's writes. Returns 0, or -ESHUTDOWN when the process
 * is being stopped (do not write then). Sections must be short and not nest.
 */
int gpio_stop_guard_enter(int slot);

/** Leaves the write section entered with gpio_stop_guard_enter. */
void gpio_stop_guard_leave(int slot);

#ifdef __cplusplus
}
#endif

#endif /* GPIO_STOP_GUARD_H */
