/*
 * gpiod_shim.h: the few GPIO operations the swift-haptics GPIO backend needs, over libgpiod.
 *
 * The same API compiles against libgpiod 1.x (the v1 API: Debian 12 ships 1.6.3) and libgpiod 2.x
 * (the v2 API: gpiod_chip_request_lines, gpiod_line_settings, ...). Which one is chosen at compile
 * time, by the header itself:
 *
 *     GPIOD_LINE_BULK_MAX_LINES defined by <gpiod.h>  ->  the v1 branch
 *     otherwise                                       ->  the v2 branch
 *
 * GPIOD_LINE_BULK_MAX_LINES is part of v1's public struct gpiod_line_bulk and was removed with the
 * bulk API in 2.0. gpiod_shim_api_version() reports the branch compiled in. Nothing else in the
 * backend depends on the libgpiod version.
 *
 * Every function returning int returns 0 (or a documented non-negative value) on success and a
 * negative errno value on failure; nothing here prints or aborts.
 *
 * Values are logical: 1 = active, 0 = inactive. A line requested active-low is inverted by the shim
 * itself (the same on both APIs, and v1 cannot mix active-low and active-high lines in one request).
 */
#ifndef GPIOD_SHIM_H
#define GPIOD_SHIM_H

#include <stddef.h>

#if !defined(__clang__)
#define _Nullable
#define _Nonnull
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Most lines one request holds. */
#define GPIOD_SHIM_MAX_LINES 8
/** Size of label and consumer buffers, including the NUL (the kernel's limit is 32). */
#define GPIOD_SHIM_NAME_SIZE 32

/** A set of output lines of one chip, requested together. Owned by the caller until released. */
typedef struct gpiod_shim_request gpiod_shim_request;

/** The libgpiod API this shim was compiled against: 1 or 2. */
int gpiod_shim_api_version(void);

/**
 * Opens the chip at `path` (e.g. "/dev/gpiochip0") and reports its number of lines and label.
 * Returns 0, or -ENOENT (no such chip), -EACCES (permission denied), -ENODEV/-ENOTTY (not a GPIO chip).
 */
int gpiod_shim_chip_info(const char * _Nonnull path, unsigned int * _Nonnull num_lines,
                         char * _Nonnull label, size_t label_size);

/** The offset of the line named `name` on the chip at `path`; -ENOENT if the chip has no such line. */
int gpiod_shim_find_line(const char * _Nonnull path, const char * _Nonnull name);

/**
 * Whether line `offset` of the chip at `path` is in use: 1 (and its consumer copied, possibly
 * empty), 0 if free, or a negative errno.
 */
int gpiod_shim_line_consumer(const char * _Nonnull path, unsigned int offset,
                             char * _Nonnull consumer, size_t consumer_size);

/**
 * Requests `count` (1...GPIOD_SHIM_MAX_LINES) lines of the chip at `path` as outputs labelled
 * `consumer`, driven at once to the logical `initial_values`; `active_low[i]` non-zero inverts
 * line i. On success stores the request in `*out` and returns 0. Fails with -EBUSY when a line is
 * in use, -EINVAL for a bad offset, -EACCES without permission.
 */
int gpiod_shim_request_outputs(const char * _Nonnull path, const char * _Nonnull consumer,
                               const unsigned int * _Nonnull offsets, const int * _Nonnull active_low,
                               const int * _Nonnull initial_values, size_t count,
                               gpiod_shim_request * _Nullable * _Nonnull out);

/**
 * Sets every line of the request to the logical `values` (one per line, in request order).
 *
 * Async-signal-safe: no allocation, no locking, one ioctl (libgpiod 1.6's
 * gpiod_line_set_value_bulk and 2.x's gpiod_line_request_set_values build the ioctl argument on
 * the stack), so the stop guard may call it from a signal handler (through
 * gpiod_shim_set_values_untyped).
 */
int gpiod_shim_set_values(gpiod_shim_request * _Nonnull request, const int * _Nonnull values);

/**
 * gpiod_shim_set_values with the request untyped: the line setter the stop guard calls
 * (haptics_stop_lines_setter), async-signal-safe like gpiod_shim_set_values.
 */
int gpiod_shim_set_values_untyped(void * _Nonnull request, const int * _Nonnull values);

/** The number of lines in the request. */
size_t gpiod_shim_line_count(const gpiod_shim_request * _Nonnull request);

/** Releases the lines (the kernel returns them to their default) and frees the request. */
void gpiod_shim_release(gpiod_shim_request * _Nullable request);

#ifdef __cplusplus
}
#endif

#endif /* GPIOD_SHIM_H */
