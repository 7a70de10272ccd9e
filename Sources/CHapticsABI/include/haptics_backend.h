/*
 * haptics_backend.h: the swift-haptics backend contract, ABI version 1.
 *
 * This header is the whole interface between the swift-haptics core and a
 * backend plugin. A backend is a shared library named `libhaptics-NAME.so`
 * that exports one symbol, `haptics_backend_fill_v1`. It can be written in
 * any language that can export a C function: the bundled backends are Swift,
 * a third-party backend may be C or Rust.
 *
 * Loading. The host finds plugins on `$HAPTICS_PLUGIN_PATH` (a colon list),
 * then in the running executable's directory, then in `PREFIX/lib/haptics`.
 * It opens each with `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)` and never
 * unloads it, so a plugin may keep threads and static data for the life of
 * the process. A plugin is loaded only if the file is no symbolic link, is owned
 * by root or the user running the host, and is writable by no one else, and the
 * same holds for every directory above it (a root-owned sticky directory such as
 * /tmp excepted); the file is opened once and loaded through that descriptor.
 * The host answers `get_config("plugin.path")` with the plugin's real path (a
 * plugin finds files installed beside it that way, not through dladdr).
 *
 * Instances. The host calls the entry point once per backend *instance* it
 * wants (a process may create several, for example one per test). The entry
 * point fills a host-owned `haptics_backend_v1`; everything the instance
 * needs lives behind its `instance` pointer, so a plugin needs no globals.
 *
 * Threads. The host serialises every call that names one device; calls for
 * different devices, and `enumerate`/`open`/`last_error`, may arrive at the
 * same time from different threads. A backend must be safe under that.
 *
 * Errors. Every function returning `int` returns 0 on success or a negative
 * errno value on failure (-ENODEV: device gone, -EACCES: permission denied,
 * -EBUSY: in use, -EINVAL: bad argument, -EIO: transport error, -ETIMEDOUT).
 * After a failure the host may call `last_error` for a one-line message that
 * names the node, path or line involved and, where there is one, the fix.
 *
 * Safety. A device must be left stopped (no output, lowest power) after
 * `stop`, after `sleep`, after `close`, and when the instance is destroyed.
 * Adaptive-trigger effects (1.6) are not drive output: `stop` leaves them (the
 * host stops the channels at the end of every playback); `sleep`, `close` and
 * the instance's destruction release them, and so must a process death.
 *
 * Versioning. Adding a field at the end of a struct that carries a
 * `struct_size` keeps the version; any other change bumps HAPTICS_ABI_VERSION
 * and the entry point's name (`haptics_backend_fill_v2`). Both sides read a
 * field only if it ends within the size the other side declared, so:
 *   - a host passes `out_size` = sizeof(haptics_backend_v1) as it was built; a
 *     plugin accepts any `out_size` >= HAPTICS_BACKEND_V1_MIN_SIZE, writes only
 *     the first `out_size` bytes, and sets `struct_size` to its own size;
 *   - a host accepts any `struct_size` >= HAPTICS_BACKEND_V1_MIN_SIZE and uses
 *     an appended function only if it lies within `struct_size` and is set;
 *   - a plugin uses an appended field of `haptics_host_v1` only if it lies
 *     within the host's `struct_size`.
 * `haptics_device_v1` is written in arrays by `enumerate` and never grows: what
 * a device says beyond it travels in `haptics_device_info_v1` (`describe`).
 *
 * History of ABI version 1:
 *   1.0  the nine required functions.
 *   1.1  `describe` appended to `haptics_backend_v1` (optional), with
 *        `haptics_device_info_v1`: the physical device behind a listing, the
 *        backend's preference for it, why it is unavailable, and the drive
 *        envelope (offset, rated and kick levels, kick window, continuous limit).
 *   1.2  `period_step_ns` appended to `haptics_device_info_v1`: frequencies
 *        played as whole periods.
 *   1.3  `haptics_frame_v1.reserved` (always zero before) became `flags`, with
 *        HAPTICS_FRAME_LEVELS; a device that honours it says so with
 *        HAPTICS_DEVICE_ACCEPTS_LEVELS. A host sets the flag only for such a
 *        device, so an older backend never sees it.
 *   1.4  the sample path, for devices that follow an audio-rate waveform (voice
 *        coils, tactile transducers): HAPTICS_DEVICE_TAKES_SAMPLES and the
 *        `sample_*` fields appended to `haptics_device_info_v1`, `write_samples`
 *        appended to `haptics_backend_v1`, and `haptics_samples_v1`. The host
 *        renders patterns into samples for such a device and never calls its
 *        `submit`; a host older than 1.4 drives it with frames, which a sample
 *        backend may refuse with -EOPNOTSUPP.
 *   1.5  `wait_samples` appended to `haptics_backend_v1` (optional): the host
 *        waits for room in the device's buffer, then renders and writes a block
 *        that does not block, so a stream wakes once per period. A host that
 *        does not call it, a backend that lacks it, and a device that refuses it
 *        (-EOPNOTSUPP) work as in 1.4.
 *   1.6  adaptive triggers: HAPTICS_DEVICE_ADAPTIVE_TRIGGERS, `haptics_trigger_effect_v1`, and
 *        `set_triggers` appended to `haptics_backend_v1` (optional).
 *   1.7  devices with effects and a calibration of their own (a haptic driver IC's ROM library
 *        and auto-calibration): HAPTICS_DEVICE_NATIVE_EFFECTS and HAPTICS_DEVICE_SELF_CALIBRATION,
 *        and `play_native`, `self_calibrate` and `restore_calibration` appended to
 *        `haptics_backend_v1` (optional).
 *   1.8  the feedback vocabulary on a device's own effects: `native_feedback` (which stored
 *        effect plays a vocabulary effect) and `start_native` (a stored effect started without
 *        waiting for its end) appended to `haptics_backend_v1` (optional).
 *   1.9  audio capture, for haptics that follow live audio: `haptics_capture_format_v1`,
 *        `haptics_capture_block_v1`, and `capture_open`, `capture_read` and `capture_close`
 *        appended to `haptics_backend_v1` (optional). A capture is no device: the backend that
 *        links a sound library (alsa) opens it, so the host never links one.
 */
#ifndef HAPTICS_BACKEND_H
#define HAPTICS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__clang__)
#define _Nullable
#define _Nonnull
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. */
#define HAPTICS_ABI_VERSION 1u
/** The one symbol a backend plugin exports. */
#define HAPTICS_BACKEND_ENTRY "haptics_backend_fill_v1"

/** Most channels one device can describe. */
#define HAPTICS_MAX_CHANNELS 4
/** Size of the id and name buffers, including the terminating NUL. */
#define HAPTICS_ID_SIZE 128
#define HAPTICS_NAME_SIZE 128
/** Size of a channel name and a backend name, including the NUL. */
#define HAPTICS_SHORT_NAME_SIZE 32
/** Size of a physical-device path and of a message in `haptics_device_info_v1`, including the NUL. */
#define HAPTICS_PATH_SIZE 256

/** What kind of actuator a device or channel is. */
enum haptics_actuator_kind {
    HAPTICS_ACTUATOR_UNKNOWN = 0,
    /** Eccentric rotating mass: amplitude only, slow to start (50-100 ms). */
    HAPTICS_ACTUATOR_ERM = 1,
    /** Linear resonant actuator: sharp, fast (15-30 ms), resonates at 150-235 Hz. */
    HAPTICS_ACTUATOR_LRA = 2,
    /** Game-controller rumble: a strong low-frequency and a weak high-frequency motor. */
    HAPTICS_ACTUATOR_DUAL_RUMBLE = 3,
    /** Motors behind a controller's triggers. */
    HAPTICS_ACTUATOR_TRIGGER = 4,
    /** Voice coil / wideband actuator. */
    HAPTICS_ACTUATOR_VOICE_COIL = 5,
};

/** Bits of `haptics_channel_v1.capabilities`. */
enum haptics_capability {
    /** The channel renders amplitudes between off and full scale. */
    HAPTICS_CAP_AMPLITUDE = 1u << 0,
    /** The channel's drive frequency can be chosen, within [frequency_min_hz, frequency_max_hz]. */
    HAPTICS_CAP_FREQUENCY = 1u << 1,
};

/** Events a backend may report through `haptics_host_v1.notify`. */
enum haptics_event {
    /** A device appeared; `enumerate` now lists it. */
    HAPTICS_EVENT_DEVICE_ADDED = 1,
    /** A device disappeared; an open handle for it now fails with -ENODEV. */
    HAPTICS_EVENT_DEVICE_REMOVED = 2,
};

/** Severity of a message sent through `haptics_host_v1.log`. */
enum haptics_log_level {
    HAPTICS_LOG_DEBUG = 0,
    HAPTICS_LOG_INFO = 1,
    HAPTICS_LOG_WARNING = 2,
    HAPTICS_LOG_ERROR = 3,
};

/** One output channel of a device: a motor, or one side of a controller. */
typedef struct haptics_channel_v1 {
    /** Short name: "main", "strong", "weak", "left-trigger". NUL-terminated. */
    char name[HAPTICS_SHORT_NAME_SIZE];
    /** A `haptics_actuator_kind`. */
    uint32_t actuator;
    /** `haptics_capability` bits. */
    uint32_t capabilities;
    /** Distinct amplitude levels the hardware renders, including off (256 for a byte, 101 for 0-100, 2 for on/off). */
    uint32_t amplitude_steps;
    /** Lowest drive frequency in Hz (with HAPTICS_CAP_FREQUENCY), else 0. */
    float frequency_min_hz;
    /** Highest drive frequency in Hz (with HAPTICS_CAP_FREQUENCY), else 0. */
    float frequency_max_hz;
    /** Resonant frequency in Hz, 0 if unknown or not applicable. */
    float resonant_frequency_hz;
    /** Frequency in Hz the channel vibrates at when it cannot be chosen (an ERM at full speed), 0 if unknown. */
    float nominal_frequency_hz;
} haptics_channel_v1;

/** What a backend says about one device it found. */
typedef struct haptics_device_v1 {
    /** Stable id, unique across backends, the same after a replug or a reboot: "recording:lra", "hid:054c:0ce6:usb:SERIAL". */
    char id[HAPTICS_ID_SIZE];
    /** Human-readable name: "DualSense Wireless Controller (USB)". */
    char name[HAPTICS_NAME_SIZE];
    /** The device's primary `haptics_actuator_kind`. */
    uint32_t actuator;
    /** Number of valid entries in `channels`, 1...HAPTICS_MAX_CHANNELS. */
    uint32_t channel_count;
    /** The device's channels. */
    haptics_channel_v1 channels[HAPTICS_MAX_CHANNELS];
    /** Shortest interval between two frames the device tolerates, in nanoseconds. */
    uint64_t min_update_interval_ns;
    /** Time from `wake` returning to the device rendering a frame at full strength, in nanoseconds. */
    uint64_t wake_latency_ns;
} haptics_device_v1;

/** Bits of `haptics_device_info_v1.flags`. */
enum haptics_device_flag {
    /** The device is listed but cannot be used now; `unavailable_reason` says why and how to fix it. */
    HAPTICS_DEVICE_UNAVAILABLE = 1u << 0,
    /** The envelope fields (`amplitude_offset` ... `rest_ns`) are set. */
    HAPTICS_DEVICE_HAS_ENVELOPE = 1u << 1,
    /**
     * (1.3) The device honours HAPTICS_FRAME_LEVELS: it can be driven at any level from 0, below
     * its `amplitude_offset` too (which calibration measures from zero, `haptic-cal calibrate`).
     */
    HAPTICS_DEVICE_ACCEPTS_LEVELS = 1u << 2,
    /**
     * (1.4) The device takes samples, not frames: the `sample_*` fields say its stream, and the
     * host writes blocks of samples with `write_samples` between `wake` and `sleep`.
     */
    HAPTICS_DEVICE_TAKES_SAMPLES = 1u << 3,
    /** (1.6) The device has adaptive triggers: `set_triggers` sets their effects. */
    HAPTICS_DEVICE_ADAPTIVE_TRIGGERS = 1u << 4,
    /** (1.7) The device plays effects stored in it, by name: `play_native`. */
    HAPTICS_DEVICE_NATIVE_EFFECTS = 1u << 5,
    /** (1.7) The device calibrates itself: `self_calibrate` and `restore_calibration`. */
    HAPTICS_DEVICE_SELF_CALIBRATION = 1u << 6,
};

/**
 * What a backend says about a device beyond `haptics_device_v1` (ABI 1.1, through `describe`).
 *
 * The host zeroes it and sets `struct_size` to its size as the host was built; the plugin
 * writes only fields that end within `struct_size` bytes and leaves `struct_size` alone.
 * Fields a plugin does not know stay zero, which always means "not stated".
 */
typedef struct haptics_device_info_v1 {
    /** Set by the host: sizeof(haptics_device_info_v1) as the host was built. */
    uint32_t struct_size;
    /** `haptics_device_flag` bits. */
    uint32_t flags;
    /**
     * When two backends list the same `physical_id`, the host lists the device once and serves it
     * through the available listing with the highest preference (ties: the backend found first).
     * The bundled backends use 200 for hidraw (it does more: HD rumble frequencies, DualSense
     * modes), 100 for evdev force feedback, and 300 for a DualSense's voice coils through alsa
     * (its rumble is the firmware's emulation on those same coils), which give the pad's HID
     * device as their physical id.
     */
    int32_t preference;
    /** Drive envelope: a non-zero amplitude `a` reaches the hardware as `offset + a * (1 - offset)`. */
    float amplitude_offset;
    /** Drive envelope: the highest level (0...1, after the offset) the backend holds steadily. */
    float rated_level;
    /** Drive envelope: the highest level allowed during the first `kick_max_ns` of a drive (>= rated_level). */
    float kick_level;
    /** Drive envelope: how long a kick may last, in nanoseconds (0: no kick). */
    uint64_t kick_max_ns;
    /** Drive envelope: a drive longer than this is cut to zero, in nanoseconds (0: never cut). */
    uint64_t max_continuous_ns;
    /** Drive envelope: how long the drive must be off to end a drive (re-arming the kick, lifting a cut), in nanoseconds. */
    uint64_t rest_ns;
    /**
     * The physical device this listing is a view of, the same string in every backend that can
     * reach it (for a HID device: the sysfs path of the HID device that both its hidraw node and
     * its input node hang off, "/sys/devices/.../0003:054C:0CE6.0001"). Empty: not shared.
     */
    char physical_id[HAPTICS_PATH_SIZE];
    /** With HAPTICS_DEVICE_UNAVAILABLE: why the device cannot be used and the fix. NUL-terminated. */
    char unavailable_reason[HAPTICS_PATH_SIZE];
    /**
     * (1.2) The device plays a channel's frequency as a period in whole multiples of this many
     * nanoseconds (evdev's FF_PERIODIC: 1 ms, so 166.7 Hz and 200 Hz but nothing between), and the
     * host sends only such frequencies. 0: any frequency within the channel's range.
     */
    uint64_t period_step_ns;
    /**
     * (1.4, with HAPTICS_DEVICE_TAKES_SAMPLES) The stream the device takes: frames per second
     * (48000 for a sound card, 3000 inside the DualSense's Bluetooth reports). Every frame holds one
     * sample per channel of the device, in the order `haptics_device_v1` lists them.
     */
    uint32_t sample_rate_hz;
    /** (1.4) Frames the device takes at a time (one ALSA period): the size of the host's blocks. */
    uint32_t sample_period_frames;
    /** (1.4) Frames the device holds queued at most (one ALSA buffer): written but not yet played. */
    uint32_t sample_buffer_frames;
    /** (1.4) Always zero (alignment). */
    uint32_t sample_reserved;
    /**
     * (1.4) Time from a sample leaving the device's buffer to the actuator moving, in nanoseconds
     * (a USB transfer, a Bluetooth report interval), beyond the buffer itself; 0 if unknown.
     */
    uint64_t sample_latency_ns;
} haptics_device_info_v1;

/** The drive state of one channel. */
typedef struct haptics_channel_drive_v1 {
    /** Output level, 0 (off) ... 1 (the channel's rated full scale). */
    float amplitude;
    /** Drive frequency in Hz for channels with HAPTICS_CAP_FREQUENCY; 0 means the channel's default. */
    float frequency_hz;
} haptics_channel_drive_v1;

/** Bits of `haptics_frame_v1.flags` (1.3). */
enum haptics_frame_flag {
    /**
     * The amplitudes are levels (0...1 of full scale) as they are: the backend does not lift a
     * non-zero amplitude over its `amplitude_offset`. Its rated and kick limits still apply. Sent
     * only to a device that states HAPTICS_DEVICE_ACCEPTS_LEVELS, by a host whose calibration
     * profile for it was measured in levels.
     */
    HAPTICS_FRAME_LEVELS = 1u << 0,
};

/** One drive frame: the state every channel holds until the next frame. */
typedef struct haptics_frame_v1 {
    /** CLOCK_MONOTONIC time, in nanoseconds, at which the host means this frame to take effect. */
    uint64_t time_ns;
    /** Number of valid entries in `channels`; equals the device's channel_count. */
    uint32_t channel_count;
    /** `haptics_frame_flag` bits (1.3; zero from an older host). */
    uint32_t flags;
    /** Per-channel drive, in the order the device described its channels. */
    haptics_channel_drive_v1 channels[HAPTICS_MAX_CHANNELS];
} haptics_frame_v1;

/**
 * (1.4) A block of samples for a device with HAPTICS_DEVICE_TAKES_SAMPLES.
 *
 * Samples are floats, -1 ... 1 of each channel's rated full scale (the backend converts them to its
 * hardware's format and clips what lies outside), interleaved frame by frame, one sample per
 * channel in the device's channel order.
 */
typedef struct haptics_samples_v1 {
    /** CLOCK_MONOTONIC time, in nanoseconds, at which the host means the first frame to be felt. */
    uint64_t time_ns;
    /** Number of frames in `samples`. */
    uint32_t frame_count;
    /** Samples per frame; equals the device's channel_count. */
    uint32_t channel_count;
    /** `frame_count * channel_count` samples. */
    const float * _Nonnull samples;
    /**
     * Set by the backend before `write_samples` returns (the host sets -1): the frames queued in the
     * device and not yet played, this block's included (ALSA's delay), or -1 when it cannot tell.
     * The host maps its clock onto the stream with it, so every frame is felt the same time after
     * it was meant however late the host's thread ran.
     */
    int64_t delay_frames;
} haptics_samples_v1;

/** (1.6) The effects of `haptics_trigger_effect_v1.mode`, as Apple's `GCDualSenseAdaptiveTrigger` modes. */
enum haptics_trigger_mode {
    /** The trigger moves freely. */
    HAPTICS_TRIGGER_OFF = 0,
    /** Resistance `strength` from `start_position` to the end of the travel. */
    HAPTICS_TRIGGER_FEEDBACK = 1,
    /** Resistance per zone: `zones`. */
    HAPTICS_TRIGGER_MULTIPLE_POSITION_FEEDBACK = 2,
    /** Resistance from `strength` at `start_position` to `end_strength` at `end_position`, held to the end. */
    HAPTICS_TRIGGER_SLOPE_FEEDBACK = 3,
    /** Resistance `strength` from `start_position` that gives way with a click at `end_position`. */
    HAPTICS_TRIGGER_WEAPON = 4,
    /** Vibration of amplitude `strength` at `frequency_hz` from `start_position` to the end. */
    HAPTICS_TRIGGER_VIBRATION = 5,
    /** Vibration at `frequency_hz`, an amplitude per zone: `zones`. */
    HAPTICS_TRIGGER_MULTIPLE_POSITION_VIBRATION = 6,
};

/** (1.6) Discrete positions along a trigger's travel (Apple's `GCDualSenseAdaptiveTriggerDiscretePositionCount`). */
#define HAPTICS_TRIGGER_ZONES 10

/**
 * (1.6) One trigger's effect. Positions are fractions of the travel (0 at rest, 1 fully pulled),
 * strengths and amplitudes fractions of the strongest, 0...1; fields a mode does not use are zero.
 * A backend checks them as its hardware needs (the DualSense: zone and step rules, 1...255 Hz)
 * and refuses what it cannot play with -EINVAL and a message naming the field and its range.
 */
typedef struct haptics_trigger_effect_v1 {
    /** A `haptics_trigger_mode`. */
    uint32_t mode;
    /** Where the effect starts, 0...1. */
    float start_position;
    /** Where it ends (slope, weapon), 0...1. */
    float end_position;
    /** The strength (feedback, weapon), the start strength (slope), or the amplitude (vibration), 0...1. */
    float strength;
    /** The end strength (slope), 0...1. */
    float end_strength;
    /** The vibration's frequency in Hz. */
    float frequency_hz;
    /** Per zone (the multiple-position modes): strengths or amplitudes, 0...1. */
    float zones[HAPTICS_TRIGGER_ZONES];
} haptics_trigger_effect_v1;

/**
 * (1.9) The stream an audio capture delivers. The host zeroes it, sets `struct_size` and what it
 * asks for; the backend opens the nearest its source takes and writes back what it opened (the
 * plugin writes only fields that end within `struct_size`).
 */
typedef struct haptics_capture_format_v1 {
    /** Set by the host: sizeof(haptics_capture_format_v1) as the host was built. */
    uint32_t struct_size;
    /** In: the rate the host asks for, in frames per second (0: the source's own). Out: the rate opened. */
    uint32_t rate_hz;
    /** In: the channels the host asks for (0: the source's own). Out: the channels opened, 1...32. */
    uint32_t channel_count;
    /** In: the frames the host would read at a time (0: the backend's choice). Out: the period opened. */
    uint32_t period_frames;
    /** Out: frames the source holds at most before it overruns (one ALSA buffer). */
    uint32_t buffer_frames;
    /** Always zero (alignment). */
    uint32_t reserved;
} haptics_capture_format_v1;

/** (1.9) One read from an audio capture: the host's buffer, and what the backend put there. */
typedef struct haptics_capture_block_v1 {
    /** Host-owned room for `frame_capacity` frames of floats, -1 ... 1, interleaved per the format's channels. */
    float * _Nonnull samples;
    /** Frames `samples` has room for. */
    uint32_t frame_capacity;
    /** Set by the backend: the frames read, 0 ... `frame_capacity` (0: the timeout passed first). */
    uint32_t frame_count;
    /**
     * Set by the backend: the CLOCK_MONOTONIC time, in nanoseconds, at which the first frame read
     * entered the source (the sound card's clock mapped onto the monotonic clock: the read's time
     * less the frames the source still held), so the host can tell each sample's age.
     */
    uint64_t time_ns;
    /** Set by the backend: the overruns it recovered from since the last read (frames were lost). */
    uint32_t overruns;
    /** Always zero (alignment). */
    uint32_t reserved;
} haptics_capture_block_v1;

/** What the host offers a backend instance. Valid until the instance is destroyed. */
typedef struct haptics_host_v1 {
    /** HAPTICS_ABI_VERSION of the host. */
    uint32_t abi_version;
    /** sizeof(haptics_host_v1) as the host was built. */
    uint32_t struct_size;
    /** Passed back to every host function. */
    void * _Nullable context;
    /**
     * A configuration value for this instance ("recording.output", "gpio.boards"),
     * or NULL if unset. The string stays valid until the instance is destroyed.
     */
    const char * _Nullable (* _Nullable get_config)(void * _Nullable context, const char * _Nonnull key);
    /** A message for the host's log; `level` is a `haptics_log_level`. Any thread. */
    void (* _Nullable log)(void * _Nullable context, int32_t level, const char * _Nonnull message);
    /** A `haptics_event` about the device `device_id`. Any thread; must not call back into the backend. */
    void (* _Nullable notify)(void * _Nullable context, uint32_t event, const char * _Nonnull device_id);
} haptics_host_v1;

/** The table a backend fills. Every function pointer is required. */
typedef struct haptics_backend_v1 {
    /** Set to HAPTICS_ABI_VERSION. */
    uint32_t abi_version;
    /** Set to sizeof(haptics_backend_v1) as the plugin was built. */
    uint32_t struct_size;
    /** Short backend name ("recording", "hid", "gpio"), NUL-terminated. */
    char name[HAPTICS_SHORT_NAME_SIZE];
    /** The instance, passed to `enumerate`, `open`, `last_error` and `destroy`. */
    void * _Nullable instance;

    /**
     * Lists devices: writes up to `capacity` descriptions to `devices` and sets
     * `*count` to how many exist (which may exceed `capacity`; call again with more room).
     */
    int (* _Nullable enumerate)(void * _Nullable instance, haptics_device_v1 * _Nullable devices,
                                uint32_t capacity, uint32_t * _Nonnull count);
    /** Opens the device `device_id` and returns its handle in `*device`. The device starts asleep and stopped. */
    int (* _Nullable open)(void * _Nullable instance, const char * _Nonnull device_id, void * _Nullable * _Nonnull device);
    /** Stops the device, puts it to sleep and releases the handle. Called exactly once per successful `open`. */
    void (* _Nullable close)(void * _Nullable device);
    /** Leaves the lowest-power state so the next frame renders with minimum latency (enable line high, handshake done). */
    int (* _Nullable wake)(void * _Nullable device);
    /** Returns to the lowest-power state; output stops. */
    int (* _Nullable sleep)(void * _Nullable device);
    /** Drives the channels as `frame` says until the next frame. The device is awake. */
    int (* _Nullable submit)(void * _Nullable device, const haptics_frame_v1 * _Nonnull frame);
    /** Stops all output now (amplitude 0 everywhere); the device stays awake. */
    int (* _Nullable stop)(void * _Nullable device);
    /**
     * Copies the message of the last failure on `device` (a device or, from 1.9, a capture
     * handle; with NULL, of the last failed `enumerate`, `open` or `capture_open`) into `buffer`, NUL-terminated, truncated to `size`.
     * Returns the message's full length; 0 when there is none.
     */
    size_t (* _Nullable last_error)(void * _Nullable instance, void * _Nullable device, char * _Nonnull buffer, size_t size);
    /** Releases the instance. Every device has been closed before. */
    void (* _Nullable destroy)(void * _Nullable instance);

    /* ---- ABI 1.1: optional, present when struct_size covers it and it is not NULL. ---- */

    /**
     * Fills `*info` for the device `device_id` as the last `enumerate` listed it (see
     * `haptics_device_info_v1` for the size rule). Must not touch the hardware. Returns 0,
     * -ENODEV for an unknown id, or another negative errno value.
     */
    int (* _Nullable describe)(void * _Nullable instance, const char * _Nonnull device_id,
                               haptics_device_info_v1 * _Nonnull info);

    /* ---- ABI 1.4: optional, present when struct_size covers it and it is not NULL. ---- */

    /**
     * Queues `block` for playback on an awake device that takes samples, blocking while its buffer
     * is full (the device's own clock paces the host: at most about one period's wait). A device
     * with no clock of its own (a file) is paced by the backend at its nominal rate. `stop` drops
     * what is queued, so the device is silent at once. Returns the number of underruns the device
     * recovered from since the last call (0 normally; the block is queued either way), or a
     * negative errno value (-EOPNOTSUPP: the device takes frames). Sets `block->delay_frames`.
     */
    int (* _Nullable write_samples)(void * _Nullable device, haptics_samples_v1 * _Nonnull block);

    /* ---- ABI 1.5: optional, present when struct_size covers it and it is not NULL. ---- */

    /**
     * Blocks until an awake device that takes samples can queue `frame_count` frames without
     * blocking (a device the backend paces itself, with no clock of its own, is paced here instead
     * of in `write_samples`), or until `timeout_ns` nanoseconds have passed. Returns the frames
     * that can be queued at once (fewer than `frame_count` after the timeout), or a negative errno
     * value. -EOPNOTSUPP: the device does not wait this way (it takes frames, or its writes wait
     * better on their own); the host then renders by its own clock, just before a period frees,
     * and lets `write_samples` block for the rest, as with a 1.4 backend.
     */
    int (* _Nullable wait_samples)(void * _Nullable device, uint32_t frame_count, uint64_t timeout_ns);

    /* ---- ABI 1.6: optional, present when struct_size covers it and it is not NULL. ---- */

    /**
     * Sets the adaptive triggers of an awake device with HAPTICS_DEVICE_ADAPTIVE_TRIGGERS: `right`
     * and `left` are the new effects, NULL leaves that trigger as it is. The effects hold until set
     * again, `sleep`, `close`, the instance's destruction or the process's death, each of which
     * releases them to HAPTICS_TRIGGER_OFF; `stop` leaves them. Returns 0, -EINVAL (an effect the
     * device cannot play: nothing was changed), -EOPNOTSUPP (no adaptive triggers), or another
     * negative errno value.
     */
    int (* _Nullable set_triggers)(void * _Nullable device, const haptics_trigger_effect_v1 * _Nullable right,
                                   const haptics_trigger_effect_v1 * _Nullable left);

    /* ---- ABI 1.7: optional, present when struct_size covers it and it is not NULL. ---- */

    /**
     * Plays `sequence`, effects stored in a device with HAPTICS_DEVICE_NATIVE_EFFECTS, in the
     * backend's text form (a DRV2605L's ROM library: "strong-click-100,wait:100ms,sharp-click-60"),
     * on an awake device, and returns when the device has played it (a few seconds at most), with
     * the device awake and stopped. Returns 0, -EINVAL (a step the device does not have:
     * `last_error` names it; nothing was played), -ETIMEDOUT (the device did not finish: it was
     * stopped), -EOPNOTSUPP, or another negative errno value.
     */
    int (* _Nullable play_native)(void * _Nullable device, const char * _Nonnull sequence);

    /**
     * Runs the calibration of a device with HAPTICS_DEVICE_SELF_CALIBRATION (a driver IC's
     * auto-calibration), blocking until it ends (seconds at most), and writes what it measured to
     * `result` as NUL-terminated "key=value" lines, each value a decimal number, for the host to
     * store and give back to `restore_calibration` at each later open. The device is left idle and
     * stopped. Returns 0, -EIO (the calibration failed: `last_error` says why, such as an actuator
     * that is missing or shorted), -ETIMEDOUT, -ENOSPC (`size` too small), or another negative
     * errno value.
     */
    int (* _Nullable self_calibrate)(void * _Nullable device, char * _Nonnull result, size_t size);

    /**
     * Gives an open device with HAPTICS_DEVICE_SELF_CALIBRATION the results of an earlier
     * `self_calibrate` ("key=value" lines) instead of calibrating again; they hold until `close`.
     * Returns 0, -EINVAL (a key or value the device does not take: `last_error` names it), or another
     * negative errno value.
     */
    int (* _Nullable restore_calibration)(void * _Nullable device, const char * _Nonnull stored);

    /* ---- ABI 1.8: optional, present when struct_size covers it and it is not NULL. ---- */

    /**
     * Says which of its stored effects a device with HAPTICS_DEVICE_NATIVE_EFFECTS plays for the
     * feedback vocabulary's effect `effect` ("impact.heavy") at `scale` (0...1] of its strength:
     * writes the sequence, in the text form `play_native` and `start_native` take, NUL-terminated
     * to `sequence`. Touches no hardware, and gives the same answer for the same arguments while
     * the device is open. Returns 0, -ENOENT (no stored effect fits: the host renders the effect
     * with frames), -ENOSPC (`size` too small), or another negative errno value.
     */
    int (* _Nullable native_feedback)(void * _Nullable device, const char * _Nonnull effect, double scale,
                                      char * _Nonnull sequence, size_t size);

    /**
     * Starts `sequence` (as `play_native` takes it) on a device with HAPTICS_DEVICE_NATIVE_EFFECTS
     * and returns without waiting for its end. It plays on through `stop` and frames of zero
     * amplitude; a frame with any amplitude, another `start_native` or `play_native`, and
     * `close` end it at once; `sleep` lets it finish, then idles the device. The process's death
     * ends it (the stop guard). Returns 0, -EINVAL (a step the device does not have: `last_error`
     * names it; nothing was played), -EOPNOTSUPP, or another negative errno value.
     */
    int (* _Nullable start_native)(void * _Nullable device, const char * _Nonnull sequence);

    /* ---- ABI 1.9: optional, present when struct_size covers it and it is not NULL. ---- */

    /**
     * Opens the audio source `source` for capture, in the backend's own naming (for alsa a PCM:
     * "default", "hw:Loopback,1,0", "pulse"), as `format` asks (see `haptics_capture_format_v1`),
     * and returns its handle in `*capture`. Capture starts with the first `capture_read`. Returns 0,
     * -ENOENT (no such source), -EBUSY, -EACCES, -EINVAL (a format the source cannot give:
     * `last_error` with the instance names what it takes), or another negative errno value.
     */
    int (* _Nullable capture_open)(void * _Nullable instance, const char * _Nonnull source,
                                   haptics_capture_format_v1 * _Nonnull format, void * _Nullable * _Nonnull capture);

    /**
     * Reads what the source has captured into `block`: blocks until at least one period is there or
     * `timeout_ns` nanoseconds have passed, then reads what is there, up to `frame_capacity` frames.
     * An overrun is recovered from and counted in `block->overruns`. Returns 0 (with `frame_count`
     * set, 0 after the timeout) or a negative errno value (-ENODEV: the source is gone);
     * `last_error(instance, capture, ...)` gives the message. One thread at a time per capture.
     */
    int (* _Nullable capture_read)(void * _Nullable capture, haptics_capture_block_v1 * _Nonnull block, uint64_t timeout_ns);

    /** Stops the capture and releases the handle. Called exactly once per successful `capture_open`. */
    void (* _Nullable capture_close)(void * _Nullable capture);
} haptics_backend_v1;

/** The size of the backend table of ABI 1.0 (the nine required functions): the least a host passes and a plugin fills. */
#define HAPTICS_BACKEND_V1_MIN_SIZE offsetof(haptics_backend_v1, describe)

/**
 * The entry point every plugin exports. Fills the first `out_size` bytes of `*out` (zeroed by the
 * host; `out_size` >= HAPTICS_BACKEND_V1_MIN_SIZE, else return -EINVAL) with a new instance. Returns 0, or a negative errno value; on failure the plugin may report
 * the reason through `host->log` and must not leave an instance behind.
 */
typedef int (*haptics_backend_fill_v1_fn)(const haptics_host_v1 * _Nonnull host,
                                          haptics_backend_v1 * _Nonnull out, size_t out_size);

int haptics_backend_fill_v1(const haptics_host_v1 * _Nonnull host, haptics_backend_v1 * _Nonnull out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* HAPTICS_BACKEND_H */
