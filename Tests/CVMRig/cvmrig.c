#define _GNU_SOURCE
#include "cvmrig.h"

#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static int write_event(int fd, const struct uhid_event *ev)
{
    for (;;) {
        ssize_t n = write(fd, ev, sizeof *ev);
        if (n == (ssize_t)sizeof *ev)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? -errno : -EIO;
    }
}

static void copy_string(uint8_t *dst, size_t cap, const char *src)
{
    if (src == NULL)
        return;
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

int cvmrig_uhid_create2(int fd, const char *name, const char *phys, const char *uniq,
                        const uint8_t *descriptor, size_t descriptor_size, uint16_t bus,
                        uint32_t vendor, uint32_t product, uint32_t version, uint32_t country)
{
    if (descriptor_size == 0 || descriptor_size > HID_MAX_DESCRIPTOR_SIZE)
        return -EINVAL;
    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_CREATE2;
    copy_string(ev.u.create2.name, sizeof ev.u.create2.name, name);
    copy_string(ev.u.create2.phys, sizeof ev.u.create2.phys, phys);
    copy_string(ev.u.create2.uniq, sizeof ev.u.create2.uniq, uniq);
    memcpy(ev.u.create2.rd_data, descriptor, descriptor_size);
    ev.u.create2.rd_size = (uint16_t)descriptor_size;
    ev.u.create2.bus = bus;
    ev.u.create2.vendor = vendor;
    ev.u.create2.product = product;
    ev.u.create2.version = version;
    ev.u.create2.country = country;
    return write_event(fd, &ev);
}

int cvmrig_uhid_input2(int fd, const uint8_t *data, size_t size)
{
    if (size > UHID_DATA_MAX)
        return -EINVAL;
    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_INPUT2;
    ev.u.input2.size = (uint16_t)size;
    if (size)
        memcpy(ev.u.input2.data, data, size);
    return write_event(fd, &ev);
}

int cvmrig_uhid_destroy(int fd)
{
    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_DESTROY;
    return write_event(fd, &ev);
}

int cvmrig_uhid_get_report_reply(int fd, uint32_t id, uint16_t err, const uint8_t *data, size_t size)
{
    if (size > UHID_DATA_MAX)
        return -EINVAL;
    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_GET_REPORT_REPLY;
    ev.u.get_report_reply.id = id;
    ev.u.get_report_reply.err = err;
    ev.u.get_report_reply.size = (uint16_t)size;
    if (size)
        memcpy(ev.u.get_report_reply.data, data, size);
    return write_event(fd, &ev);
}

int cvmrig_uhid_set_report_reply(int fd, uint32_t id, uint16_t err)
{
    struct uhid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = UHID_SET_REPORT_REPLY;
    ev.u.set_report_reply.id = id;
    ev.u.set_report_reply.err = err;
    return write_event(fd, &ev);
}

int cvmrig_uhid_read(int fd, cvmrig_uhid_event *event, uint8_t *buf, size_t cap)
{
    struct uhid_event ev;
    ssize_t n;
    do {
        n = read(fd, &ev, sizeof ev);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if ((size_t)n < sizeof ev.type)
        return -EIO;
    memset(event, 0, sizeof *event);
    event->type = ev.type;
    size_t size = 0;
    const uint8_t *data = NULL;
    switch (ev.type) {
    case UHID_START:
        event->dev_flags = ev.u.start.dev_flags;
        break;
    case UHID_OUTPUT:
        event->rtype = ev.u.output.rtype;
        size = ev.u.output.size;
        data = ev.u.output.data;
        break;
    case UHID_GET_REPORT:
        event->id = ev.u.get_report.id;
        event->rnum = ev.u.get_report.rnum;
        event->rtype = ev.u.get_report.rtype;
        break;
    case UHID_SET_REPORT:
        event->id = ev.u.set_report.id;
        event->rnum = ev.u.set_report.rnum;
        event->rtype = ev.u.set_report.rtype;
        size = ev.u.set_report.size;
        data = ev.u.set_report.data;
        break;
    default:
        break;
    }
    if (size > UHID_DATA_MAX)
        size = UHID_DATA_MAX;
    if (size > cap)
        size = cap;
    if (size && buf)
        memcpy(buf, data, size);
    event->size = (uint16_t)size;
    return 0;
}

int cvmrig_wait_readable(int fd, int wake_fd, int timeout_ms)
{
    struct pollfd fds[2] = {
        { .fd = fd, .events = POLLIN },
        { .fd = wake_fd, .events = POLLIN },
    };
    int n = poll(fds, wake_fd >= 0 ? 2 : 1, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    if (n == 0)
        return 0;
    if (wake_fd >= 0 && (fds[1].revents & (POLLIN | POLLERR | POLLHUP)))
        return 2;
    if (fds[0].revents & (POLLERR | POLLNVAL))
        return -EIO;
    return 1;
}

int cvmrig_eventfd(void)
{
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

int cvmrig_eventfd_signal(int fd)
{
    uint64_t one = 1;
    return write(fd, &one, sizeof one) == (ssize_t)sizeof one ? 0 : -errno;
}

int cvmrig_pipe_cloexec(int fds[2])
{
    return pipe2(fds, O_CLOEXEC) == 0 ? 0 : -errno;
}

uint64_t cvmrig_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
