/*
 * CVMRig: kernel UAPI the VM rig's Swift helpers need, plus a few small C helpers for what
 * Swift cannot express comfortably (the packed `struct uhid_event` union of ~4.4 KB).
 *
 * Every helper takes an fd it does not own and returns 0 / a byte count on success or
 * -errno on failure; none of them keeps state.
 */
#ifndef CVMRIG_H
#define CVMRIG_H

#include <linux/uhid.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/types.h>

/// UHID_DATA_MAX: the largest report uhid carries.
static const size_t cvmrig_uhid_data_max = UHID_DATA_MAX;
/// HID_MAX_DESCRIPTOR_SIZE: the largest report descriptor UHID_CREATE2 takes.
static const size_t cvmrig_uhid_descriptor_max = HID_MAX_DESCRIPTOR_SIZE;

/// Writes UHID_CREATE2. Strings are truncated to their fields (name 127, phys/uniq 63 bytes).
int cvmrig_uhid_create2(int fd, const char *name, const char *phys, const char *uniq,
                        const uint8_t *descriptor, size_t descriptor_size, uint16_t bus,
                        uint32_t vendor, uint32_t product, uint32_t version, uint32_t country);

/// Writes UHID_INPUT2 (an input report, report id first if the device numbers its reports).
int cvmrig_uhid_input2(int fd, const uint8_t *data, size_t size);

/// Writes UHID_DESTROY (the device disappears as if unplugged).
int cvmrig_uhid_destroy(int fd);

/// Writes UHID_GET_REPORT_REPLY for request `id` (err 0 with data, or an errno with no data).
int cvmrig_uhid_get_report_reply(int fd, uint32_t id, uint16_t err, const uint8_t *data, size_t size);

/// Writes UHID_SET_REPORT_REPLY for request `id`.
int cvmrig_uhid_set_report_reply(int fd, uint32_t id, uint16_t err);

/// One event read from /dev/uhid, flattened.
typedef struct {
    uint32_t type;     ///< enum uhid_event_type
    uint32_t id;       ///< request id (UHID_GET_REPORT, UHID_SET_REPORT)
    uint8_t rnum;      ///< report number (GET/SET_REPORT)
    uint8_t rtype;     ///< enum uhid_report_type (OUTPUT, GET/SET_REPORT)
    uint16_t size;     ///< bytes copied to the caller's buffer (OUTPUT, SET_REPORT)
    uint64_t dev_flags;///< UHID_START flags
} cvmrig_uhid_event;

/// Reads one event (blocking unless the fd is non-blocking); copies report data into `buf`
/// (up to `cap` bytes). Returns 0 or -errno (-EAGAIN when nothing is pending).
int cvmrig_uhid_read(int fd, cvmrig_uhid_event *event, uint8_t *buf, size_t cap);

/// Waits until `fd` is readable or `wake_fd` (an eventfd) is, or `timeout_ms` passes.
/// Returns 1 if `fd` is readable, 2 if `wake_fd` fired, 0 on timeout, -errno on failure.
int cvmrig_wait_readable(int fd, int wake_fd, int timeout_ms);

/// A non-blocking, close-on-exec eventfd for waking a poll; returns the fd or -errno.
int cvmrig_eventfd(void);

/// Signals an eventfd made by cvmrig_eventfd. Returns 0 or -errno.
int cvmrig_eventfd_signal(int fd);

/// pipe2(fds, O_CLOEXEC) (atomic, so concurrent spawns never inherit the pipe). 0 or -errno.
int cvmrig_pipe_cloexec(int fds[2]);

/// CLOCK_MONOTONIC in nanoseconds.
uint64_t cvmrig_monotonic_ns(void);

#endif
