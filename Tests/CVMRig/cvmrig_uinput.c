#define _GNU_SOURCE
#include "cvmrig_uinput.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int xioctl(int fd, unsigned long request, unsigned long argument)
{
    int result;
    do {
        result = ioctl(fd, request, argument);
    } while (result < 0 && errno == EINTR);
    return result < 0 ? -errno : result;
}

int cvmrig_uinput_create(int fd, const cvmrig_uinput_spec *spec)
{
    int error;
    if (spec->ff_count) {
        if ((error = xioctl(fd, UI_SET_EVBIT, EV_FF)) < 0)
            return error;
        for (size_t i = 0; i < spec->ff_count; i++)
            if ((error = xioctl(fd, UI_SET_FFBIT, spec->ff_bits[i])) < 0)
                return error;
    }
    if (spec->key_count) {
        if ((error = xioctl(fd, UI_SET_EVBIT, EV_KEY)) < 0)
            return error;
        for (size_t i = 0; i < spec->key_count; i++)
            if ((error = xioctl(fd, UI_SET_KEYBIT, spec->keys[i])) < 0)
                return error;
    }
    if (spec->axis_count) {
        if ((error = xioctl(fd, UI_SET_EVBIT, EV_ABS)) < 0)
            return error;
        for (size_t i = 0; i < spec->axis_count; i++) {
            if ((error = xioctl(fd, UI_SET_ABSBIT, spec->axes[i])) < 0)
                return error;
            struct uinput_abs_setup abs;
            memset(&abs, 0, sizeof abs);
            abs.code = spec->axes[i];
            abs.absinfo.minimum = -32768;
            abs.absinfo.maximum = 32767;
            if ((error = xioctl(fd, UI_ABS_SETUP, (unsigned long)&abs)) < 0)
                return error;
        }
    }
    if (spec->phys && (error = xioctl(fd, UI_SET_PHYS, (unsigned long)spec->phys)) < 0)
        return error;
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.id.bustype = spec->bus;
    setup.id.vendor = spec->vendor;
    setup.id.product = spec->product;
    setup.id.version = spec->version;
    strncpy(setup.name, spec->name, UINPUT_MAX_NAME_SIZE - 1);
    setup.ff_effects_max = spec->ff_effects_max;
    if ((error = xioctl(fd, UI_DEV_SETUP, (unsigned long)&setup)) < 0)
        return error;
    error = xioctl(fd, UI_DEV_CREATE, 0);
    return error < 0 ? error : 0;
}

int cvmrig_uinput_sysname(int fd, char *name, size_t size)
{
    memset(name, 0, size);
    int result = xioctl(fd, UI_GET_SYSNAME(size), (unsigned long)name);
    return result < 0 ? result : 0;
}

int cvmrig_uinput_destroy(int fd)
{
    int result = xioctl(fd, UI_DEV_DESTROY, 0);
    return result < 0 ? result : 0;
}

int cvmrig_uinput_read(int fd, cvmrig_uinput_event *event)
{
    struct input_event raw;
    ssize_t n;
    do {
        n = read(fd, &raw, sizeof raw);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if ((size_t)n != sizeof raw)
        return -EIO;
    event->type = raw.type;
    event->code = raw.code;
    event->value = raw.value;
    return 0;
}

static void flatten(const struct ff_effect *in, cvmrig_ff_effect *out)
{
    memset(out, 0, sizeof *out);
    out->type = in->type;
    out->id = in->id;
    out->direction = in->direction;
    out->replay_length = in->replay.length;
    out->replay_delay = in->replay.delay;
    switch (in->type) {
    case FF_RUMBLE:
        out->strong = in->u.rumble.strong_magnitude;
        out->weak = in->u.rumble.weak_magnitude;
        break;
    case FF_PERIODIC:
        out->waveform = in->u.periodic.waveform;
        out->period = in->u.periodic.period;
        out->magnitude = in->u.periodic.magnitude;
        out->offset = in->u.periodic.offset;
        out->phase = in->u.periodic.phase;
        out->attack_length = in->u.periodic.envelope.attack_length;
        out->attack_level = in->u.periodic.envelope.attack_level;
        out->fade_length = in->u.periodic.envelope.fade_length;
        out->fade_level = in->u.periodic.envelope.fade_level;
        break;
    case FF_CONSTANT:
        out->level = in->u.constant.level;
        out->attack_length = in->u.constant.envelope.attack_length;
        out->attack_level = in->u.constant.envelope.attack_level;
        out->fade_length = in->u.constant.envelope.fade_length;
        out->fade_level = in->u.constant.envelope.fade_level;
        break;
    default:
        break;
    }
}

int cvmrig_uinput_begin_upload(int fd, uint32_t request_id, cvmrig_ff_effect *effect, cvmrig_ff_effect *old)
{
    struct uinput_ff_upload upload;
    memset(&upload, 0, sizeof upload);
    upload.request_id = request_id;
    int result = xioctl(fd, UI_BEGIN_FF_UPLOAD, (unsigned long)&upload);
    if (result < 0)
        return result;
    flatten(&upload.effect, effect);
    flatten(&upload.old, old);
    return 0;
}

int cvmrig_uinput_end_upload(int fd, uint32_t request_id, int32_t retval)
{
    struct uinput_ff_upload upload;
    memset(&upload, 0, sizeof upload);
    upload.request_id = request_id;
    upload.retval = retval;
    int result = xioctl(fd, UI_END_FF_UPLOAD, (unsigned long)&upload);
    return result < 0 ? result : 0;
}

int cvmrig_uinput_begin_erase(int fd, uint32_t request_id, uint32_t *effect_id)
{
    struct uinput_ff_erase erase;
    memset(&erase, 0, sizeof erase);
    erase.request_id = request_id;
    int result = xioctl(fd, UI_BEGIN_FF_ERASE, (unsigned long)&erase);
    if (result < 0)
        return result;
    *effect_id = erase.effect_id;
    return 0;
}

int cvmrig_uinput_end_erase(int fd, uint32_t request_id, int32_t retval)
{
    struct uinput_ff_erase erase;
    memset(&erase, 0, sizeof erase);
    erase.request_id = request_id;
    erase.retval = retval;
    int result = xioctl(fd, UI_END_FF_ERASE, (unsigned long)&erase);
    return result < 0 ? result : 0;
}

int cvmrig_evdev_set_gain(const char *node, uint16_t gain)
{
    int fd = open(node, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct input_event event;
    memset(&event, 0, sizeof event);
    event.type = EV_FF;
    event.code = FF_GAIN;
    event.value = gain;
    ssize_t n = write(fd, &event, sizeof event);
    int error = n == (ssize_t)sizeof event ? 0 : (n < 0 ? -errno : -EIO);
    close(fd);
    return error;
}
