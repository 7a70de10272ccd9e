/*
 * haptics_stop_guard.h: leaves no actuator running, whatever ends the process.
 *
 * One guard for every backend that drives hardware (the GPIO/PWM and HID plugins link this small C
 * library). Each open actuator registers its stop program once, precomputed: its GPIO lines and the
 * level that means "inactive", the sysfs writes that stop its PWM (`duty_cycle` <- 0, `enable` <- 0),
 * the output report that turns a controller's motors off, or the register writes that stop a driver
 * IC on I²C. Then:
 *
 * 1. **Signals the process can catch.** A handler stops every registered actuator and then lets the
 *    signal do what it would have done, for every signal whose default action ends the process:
 *    SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV, SIGUSR2,
 *    SIGPIPE, SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS
 *    (a Swift runtime trap is SIGILL on x86_64 and SIGTRAP on arm64). At installation:
 *    - a signal the process ignores stays ignored;
 *    - a signal at its default action gets the handler, which stops, restores the default and
 *      raises the signal again, so the process dies of it as it would have;
 *    - a signal with a handler already installed gets ours in front of it only when that handler
 *      belongs to a crash or an interruption (SIGINT, SIGTERM, SIGQUIT, SIGILL, SIGTRAP, SIGABRT,
 *      SIGBUS, SIGFPE, SIGSEGV, SIGSYS: the Swift runtime's backtracer, an app's Ctrl-C handler);
 *      we stop, then call it. The others (an app's SIGUSR1 or SIGHUP handler) are the app's own
 *      business: the process does not die of them, so nothing is stopped.
 *    The handler is async-signal-safe (atomics on a fixed table, open/write/close, one GPIO ioctl
 *    through the registered setter), runs on the alternate signal stack where the thread has one
 *    (haptics_stop_guard_prepare_thread), and waits at most 200 ms for another thread's hardware
 *    write section before it stops that actuator.
 * 2. **A normal exit** (atexit) runs the same stops.
 * 3. **Everything else** (SIGKILL, the OOM killer, a fault the kernel cannot deliver, a handler
 *    replaced by the app): a supervisor process, `haptics-stop-guard`, found beside the plugin that
 *    holds this library (dladdr), started at the first registration. It shares the table with the
 *    process (a memfd), holds a socket and a pidfd to it and nothing else, and when the process is
 *    gone (by whatever cause) it applies every stop still registered and exits. It is a small exec'd
 *    C program, so the OOM killer never picks it for the process's memory; it leaves the process
 *    group and ignores the terminal's signals (Ctrl-C, hang-up), so it outlives the process by
 *    exactly the stop. Its GPIO stop requests the lines itself with their inactive values (a line
 *    released by a dead process keeps its last level on most SoCs), retrying while the dead
 *    process's request is still being released; its PWM stop holds the channel's flock, and leaves
 *    a channel alone that a new owner has locked meanwhile.
 *
 * Starting the supervisor does not make the registration wait for it: a thread of the guard's
 * collects its answer (the supervisor holds the socket and the table from its start, so it covers
 * the process even before it answers). When the supervisor cannot run, registration still works and
 * (1) and (2) still hold; haptics_stop_guard_take_warning then returns a message naming what is not
 * guaranteed, for the plugin to log: at once when the executable is missing, at a later
 * registration when it could not start, refused the table or died. A supervisor that died is
 * replaced at the next registration.
 *
 * Registration: haptics_stop_guard_begin, then the parts (lines, writes, locks, report), then
 * haptics_stop_guard_arm. An actuator being registered is skipped by every stop (it was just opened
 * and is stopped). haptics_stop_guard_unregister takes it out synchronously: once it returns, nothing
 * stops that actuator any more (unregister before releasing the hardware, so a new owner is never
 * stopped by a stale program).
 *
 * Every function returning int returns 0 (or a documented non-negative value) on success and a
 * negative errno value on failure; nothing here prints or aborts. A process that forks keeps its
 * registrations in the parent: the child starts with none (and its own supervisor if it registers).
 *
 * Each copy of this library (each plugin that links it) has its own table and supervisor. A copy
 * recognises another copy's handler (the exported haptics_stop_guard_on_signal, found with dladdr)
 * and chains to it for every guarded signal, so one signal stops the actuators of every copy.
 */
#ifndef HAPTICS_STOP_GUARD_H
#define HAPTICS_STOP_GUARD_H

#include <stddef.h>

#if !defined(__clang__)
#define _Nullable
#define _Nonnull
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Most actuators registered at once (per plugin). */
#define HAPTICS_STOP_GUARD_MAX_SLOTS 64
/** Most GPIO lines in one stop program. */
#define HAPTICS_STOP_GUARD_MAX_LINES 8
/** Most sysfs writes in one stop program. */
#define HAPTICS_STOP_GUARD_MAX_WRITES 6
/** Most directories locked while the supervisor applies one stop program. */
#define HAPTICS_STOP_GUARD_MAX_LOCKS 2
/** Longest path, including the NUL. */
#define HAPTICS_STOP_GUARD_PATH_SIZE 256
/** Longest value written, including the NUL. */
#define HAPTICS_STOP_GUARD_VALUE_SIZE 24
/** Most register writes in one I²C stop. */
#define HAPTICS_STOP_GUARD_MAX_I2C_WRITES 4
/** Longest output report, in bytes. */
#define HAPTICS_STOP_GUARD_REPORT_SIZE 128
/** The supervisor's file name, looked up in the directory of the plugin that holds this library. */
#define HAPTICS_STOP_GUARD_SUPERVISOR "haptics-stop-guard"

/**
 * Sets a line request's lines to the logical `values` (1 = active, one per line). Must be
 * async-signal-safe: it runs in the signal handler. Returns 0 or a negative errno.
 */
typedef int (*haptics_stop_lines_setter)(void * _Nonnull request, const int * _Nonnull values);

/**
 * Starts registering an actuator (installs the handlers and starts the supervisor if this is the
 * first registration of the process).
 *
 * @param label the device id, for messages (cut to 127 bytes).
 * @return the slot (>= 0), or -ENOSPC when HAPTICS_STOP_GUARD_MAX_SLOTS are registered, -ENOMEM.
 */
int haptics_stop_guard_begin(const char * _Nonnull label);

/**
 * Adds the actuator's GPIO lines: the process stops them through `setter(request, all 0)`; the
 * supervisor requests `offsets` of `chip` as outputs at their inactive level (physical 1 where
 * `active_low`, else 0). The request must stay valid until the slot is unregistered.
 *
 * @return 0, or -EINVAL (count 0 or above HAPTICS_STOP_GUARD_MAX_LINES, lines already added),
 *         -ENAMETOOLONG.
 */
int haptics_stop_guard_add_lines(int slot, const char * _Nonnull chip, size_t count, const unsigned int * _Nonnull offsets,
                                 const int * _Nonnull active_low, haptics_stop_lines_setter _Nonnull setter, void * _Nonnull request);

/** Appends a sysfs write (copied). Returns 0, -ENOSPC (HAPTICS_STOP_GUARD_MAX_WRITES), -ENAMETOOLONG. */
int haptics_stop_guard_add_write(int slot, const char * _Nonnull path, const char * _Nonnull value);

/** Adds a directory the supervisor flocks while it applies the program (a PWM channel directory). */
int haptics_stop_guard_add_lock(int slot, const char * _Nonnull directory);

/**
 * Adds a controller's "motors off" report: the guard opens `node` (a hidraw node) for writing and
 * keeps that descriptor, so the handler can write `report` without opening anything.
 *
 * @return 0, or -ENAMETOOLONG, -EMSGSIZE (above HAPTICS_STOP_GUARD_REPORT_SIZE or empty), or the
 *         negative errno of open(2).
 */
int haptics_stop_guard_add_report(int slot, const char * _Nonnull node, const unsigned char * _Nonnull report, size_t length);

/**
 * Adds a driver IC's stop on I²C (a DRV2605L: RTP input to zero, then standby): the guard opens
 * `node` (`/dev/i2c-N`), points the descriptor at `address` (I2C_SLAVE, never forcing a chip a
 * kernel driver owns) and keeps it, so the handler writes without opening anything; the
 * supervisor opens the node itself. The writes come first in the program: before the lines (an
 * enable line going low) and the sysfs writes.
 *
 * @return 0, or -EINVAL (count 0 or above HAPTICS_STOP_GUARD_MAX_I2C_WRITES, address above 0x7f,
 *         I²C already added), -ENAMETOOLONG, or the negative errno of open(2) or ioctl(2) (-EBUSY: a
 *         kernel driver owns the chip).
 */
int haptics_stop_guard_add_i2c(int slot, const char * _Nonnull node, unsigned int address, size_t count,
                               const unsigned char * _Nonnull registers, const unsigned char * _Nonnull values);

/**
 * Replaces the slot's report (a controller whose reports carry a counter needs the next one).
 * Call it inside the slot's write section (haptics_stop_guard_enter), from the thread that writes.
 */
int haptics_stop_guard_set_report(int slot, const unsigned char * _Nonnull report, size_t length);

/**
 * Finishes the registration: from now on every stop applies the slot.
 * @param lines_first non-zero: the lines before the sysfs writes (an actuator with an enable line).
 */
int haptics_stop_guard_arm(int slot, int lines_first);

/**
 * Removes a registration (armed or not), waiting for a stop running on another thread to finish,
 * and closes the report descriptor. After it returns neither the handler nor the supervisor
 * touches that actuator. Negative slots are ignored.
 */
void haptics_stop_guard_unregister(int slot);

/**
 * Enters a hardware write section for `slot`: the handler does not run this actuator's stop
 * concurrently with the write (it waits at most 200 ms). Returns 0, or -ESHUTDOWN when the process
 * is being stopped (do not write then). Sections are short and do not nest. A negative slot only
 * reports the shutdown.
 */
int haptics_stop_guard_enter(int slot);

/** Leaves the write section entered with haptics_stop_guard_enter. */
void haptics_stop_guard_leave(int slot);

/**
 * Gives the calling thread an alternate signal stack (64 KiB, freed when the thread ends) if it has
 * none, so the handler also runs when the thread overflowed its stack. For threads that drive
 * hardware; haptics_stop_guard_begin does it for the thread that registers.
 */
void haptics_stop_guard_prepare_thread(void);

/**
 * Copies a warning not reported yet (the supervisor is missing, could not start, refused the table,
 * or died and was replaced) into `buffer` and returns 1; returns 0 when there is none. Each warning
 * is returned once.
 *
 * @param wait_ms while a supervisor's start is not settled yet, wait at most this long for it (0: do
 *        not wait). For a caller that registers once (opening a GPIO actuator) and would otherwise
 *        never hear of a supervisor that refused; a caller on a latency path passes 0.
 */
int haptics_stop_guard_take_warning(char * _Nonnull buffer, size_t size, int wait_ms);

/** The supervisor's process id, or 0 when there is none. */
int haptics_stop_guard_supervisor_pid(void);

#ifdef __cplusplus
}
#endif

#endif /* HAPTICS_STOP_GUARD_H */
