/*
 * uinput with force feedback, for the VM rig: a test becomes the "driver" of an input device,
 * answers the kernel's UI_FF_UPLOAD / UI_FF_ERASE requests and reads the EV_FF plays, stops and
 * gain changes clients send (include/uapi/linux/uinput.h, Documentation/input/uinput.rst).
 *
 * Every helper takes an fd it does not own and returns 0 (or a count) on success, -errno on failure.
 */
#ifndef CVMRIG_UINPUT_H
#define CVMRIG_UINPUT_H

#include <stddef.h>
#include <stdint.h>

/** What a virtual device is made of. */
typedef struct {
    const char *name;        /**< the input device's name */
    const char *phys;        /**< its phys string (UI_SET_PHYS), or NULL */
    uint16_t bus, vendor, product, version;
    const uint16_t *ff_bits; /**< FF_* codes to declare (UI_SET_FFBIT) */
    size_t ff_count;
    const uint16_t *keys;    /**< KEY_/BTN_* codes (UI_SET_KEYBIT); a game pad has BTN_SOUTH … */
    size_t key_count;
    const uint16_t *axes;    /**< ABS_* codes (UI_ABS_SETUP, range -32768 … 32767) */
    size_t axis_count;
    uint32_t ff_effects_max; /**< effect slots */
} cvmrig_uinput_spec;

/** Declares and creates the device on an open /dev/uinput fd (UI_DEV_SETUP, UI_DEV_CREATE). */
int cvmrig_uinput_create(int fd, const cvmrig_uinput_spec *spec);

/** UI_GET_SYSNAME: the input device's sysfs name ("input7") into `name` (`size` bytes). */
int cvmrig_uinput_sysname(int fd, char *name, size_t size);

/** UI_DEV_DESTROY: the device disappears as if unplugged. */
int cvmrig_uinput_destroy(int fd);

/** One event read from the uinput fd: EV_UINPUT requests and EV_FF plays/stops/gain. */
typedef struct {
    uint16_t type;  /**< EV_UINPUT (0x0101), EV_FF (0x15), … */
    uint16_t code;  /**< UI_FF_UPLOAD (1) / UI_FF_ERASE (2), or the effect id, or FF_GAIN */
    int32_t value;  /**< the request id, or the repeat count (0: stop), or the gain */
} cvmrig_uinput_event;

/** Reads one event (-EAGAIN on a non-blocking fd with nothing pending). */
int cvmrig_uinput_read(int fd, cvmrig_uinput_event *event);

/** The parts of a `struct ff_effect` the tests look at. */
typedef struct {
    uint16_t type;
    int16_t id;
    uint16_t direction;
    uint16_t replay_length, replay_delay;
    uint16_t strong, weak;                        /**< FF_RUMBLE */
    uint16_t waveform, period;                    /**< FF_PERIODIC */
    int16_t magnitude, offset;
    uint16_t phase;
    int16_t level;                                /**< FF_CONSTANT */
    uint16_t attack_length, attack_level, fade_length, fade_level; /**< the periodic or constant envelope */
} cvmrig_ff_effect;

/** UI_BEGIN_FF_UPLOAD for `request_id`: the new effect and the one it replaces (all zero for a new effect). */
int cvmrig_uinput_begin_upload(int fd, uint32_t request_id, cvmrig_ff_effect *effect, cvmrig_ff_effect *old);

/** UI_END_FF_UPLOAD: answers the upload with `retval` (0, or -errno to refuse it). */
int cvmrig_uinput_end_upload(int fd, uint32_t request_id, int32_t retval);

/** UI_BEGIN_FF_ERASE: the effect id to erase. */
int cvmrig_uinput_begin_erase(int fd, uint32_t request_id, uint32_t *effect_id);

/** UI_END_FF_ERASE with `retval`. */
int cvmrig_uinput_end_erase(int fd, uint32_t request_id, int32_t retval);

/** Opens an event node O_RDWR | O_CLOEXEC and writes EV_FF FF_GAIN `gain` (what a user's settings tool does). */
int cvmrig_evdev_set_gain(const char *node, uint16_t gain);

#endif
