/*
 * evdev_shim: the kernel force-feedback calls the evdev backend makes, in C because their ioctl
 * numbers are function-like macros and `struct ff_effect` holds a union (linux/input.h).
 *
 * Every function takes an fd it does not own and returns 0 (or a count, an id) on success, or
 * -errno; none keeps state. The policy (which effect, when to upload, play or refresh) is the
 * backend's, in Swift.
 */
#ifndef HAPTICS_EVDEV_SHIM_H
#define HAPTICS_EVDEV_SHIM_H

#include <stddef.h>
#include <stdint.h>

/** Effect types and waveforms of `struct ff_effect`, as linux/input.h numbers them. */
enum haptics_evdev_effect_type {
    HAPTICS_EVDEV_RUMBLE = 0x50,
    HAPTICS_EVDEV_PERIODIC = 0x51,
    HAPTICS_EVDEV_CONSTANT = 0x52,
};

/** The one effect the backend uploads, flattened (the fields it sets; the rest of `struct ff_effect` is zero). */
typedef struct haptics_evdev_effect {
    /** A `haptics_evdev_effect_type`. */
    uint16_t type;
    /** The kernel's effect id, or -1 to create a new effect. */
    int16_t id;
    /** `replay.length`, in milliseconds: the kernel (or the driver) stops the effect this long after a play. */
    uint16_t length_ms;
    /** FF_RUMBLE: `strong_magnitude` and `weak_magnitude`, 0...0xFFFF. */
    uint16_t strong;
    uint16_t weak;
    /** FF_PERIODIC (waveform FF_SINE): `magnitude`, 0...0x7FFF, and `period` in milliseconds. */
    int16_t magnitude;
    uint16_t period_ms;
    /** FF_CONSTANT: `level`, 0...0x7FFF. */
    int16_t level;
} haptics_evdev_effect;

/** open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK): the fd, or -errno. Close-on-exec: a helper the host
 *  starts must never keep the node (and with it the effects) alive after the host dies. */
int haptics_evdev_open(const char *path);

/** EVIOCGBIT(EV_FF): the effect-type bits (FF_CNT bits, little-endian bit order) into `bits`. Returns the byte count or -errno. */
int haptics_evdev_ff_bits(int fd, uint8_t *bits, size_t size);

/** EVIOCGEFFECTS: how many effects the device can hold at once, or -errno. */
int haptics_evdev_effect_slots(int fd);

/** EVIOCSMASK on event type 0 with an empty mask: the kernel queues no input events to this client
 *  (the backend never reads them). 0 or -errno (-EINVAL before Linux 4.4). */
int haptics_evdev_mask_input(int fd);

/** EVIOCSFF: uploads `effect` (creates it when `effect->id` is -1, else updates it in place).
 *  Returns the effect's id, or -errno. */
int haptics_evdev_upload(int fd, const haptics_evdev_effect *effect);

/** EVIOCRMFF: erases (and so stops) the effect `id`. 0 or -errno. */
int haptics_evdev_erase(int fd, int id);

/** Writes one EV_FF event: code `id`, value `count` (a play: the repeat count; 0: stop). 0 or -errno. */
int haptics_evdev_play(int fd, int id, int count);

#endif
