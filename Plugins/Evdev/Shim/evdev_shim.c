#define _GNU_SOURCE
#include "evdev_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

int haptics_evdev_open(const char *path)
{
    int fd;
    do {
        fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    return fd < 0 ? -errno : fd;
}

int haptics_evdev_ff_bits(int fd, uint8_t *bits, size_t size)
{
    memset(bits, 0, size);
    int n = ioctl(fd, EVIOCGBIT(EV_FF, size), bits);
    return n < 0 ? -errno : n;
}

int haptics_evdev_effect_slots(int fd)
{
    int slots = 0;
    return ioctl(fd, EVIOCGEFFECTS, &slots) < 0 ? -errno : slots;
}

int haptics_evdev_mask_input(int fd)
{
    /* Type 0 masks event types: an all-zero bitmap of EV_CNT bits lets none through. */
    uint8_t none[(EV_CNT + 7) / 8];
    memset(none, 0, sizeof none);
    struct input_mask mask = {
        .type = 0,
        .codes_size = sizeof none,
        .codes_ptr = (uint64_t)(uintptr_t)none,
    };
    return ioctl(fd, EVIOCSMASK, &mask) < 0 ? -errno : 0;
}

int haptics_evdev_upload(int fd, const haptics_evdev_effect *e)
{
    struct ff_effect effect;
    memset(&effect, 0, sizeof effect);
    effect.type = e->type;
    effect.id = e->id;
    effect.replay.length = e->length_ms;
    switch (e->type) {
    case FF_RUMBLE:
        effect.u.rumble.strong_magnitude = e->strong;
        effect.u.rumble.weak_magnitude = e->weak;
        break;
    case FF_PERIODIC:
        effect.u.periodic.waveform = FF_SINE;
        effect.u.periodic.period = e->period_ms;
        effect.u.periodic.magnitude = e->magnitude;
        break;
    case FF_CONSTANT:
        effect.u.constant.level = e->level;
        break;
    default:
        return -EINVAL;
    }
    if (ioctl(fd, EVIOCSFF, &effect) < 0)
        return -errno;
    return effect.id;
}

int haptics_evdev_erase(int fd, int id)
{
    return ioctl(fd, EVIOCRMFF, (unsigned long)id) < 0 ? -errno : 0;
}

int haptics_evdev_play(int fd, int id, int count)
{
    struct input_event event;
    memset(&event, 0, sizeof event);
    event.type = EV_FF;
    event.code = (uint16_t)id;
    event.value = count;
    for (;;) {
        ssize_t n = write(fd, &event, sizeof event);
        if (n == (ssize_t)sizeof event)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? -errno : -EIO;
    }
}
