/*
 * haptics_client.h: how the swift-haptics core plays through hapticsd, version 1.
 *
 * The core links no D-Bus library. When hapticsd may run, the core loads a *client transport*
 * plugin, `libhapticsd-client.so`, from the plugin search path with the same checks as backends
 * (haptics_backend.h) and talks to the service through this table. The table works at the level
 * of the service's API: devices, effects, AHAP patterns and players. Drive frames never cross it:
 * the service renders them with each device's calibration profile.
 *
 * Threads. Every function may be called from any thread; the plugin serialises its connection.
 * The host's callbacks (`player_ended`, `notify`) are called on the plugin's own thread or on the
 * caller's thread after its call has returned its result, never while the plugin holds its lock,
 * so a callback may call back into the plugin.
 *
 * Errors. Functions return 0 or a negative errno value. Those taking a `haptics_client_error_v1`
 * fill it (when not NULL) with the D-Bus error name and message, e.g.
 * "org.swifthaptics.Haptics1.Error.UnknownEffect" / "effect: no effect 'x' …".
 *
 * Versioning follows haptics_backend.h: fields appended to a struct carrying `struct_size` keep
 * the version, and each side reads only what the other's size covers.
 */
#ifndef HAPTICS_CLIENT_H
#define HAPTICS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "haptics_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The client ABI version this header describes. */
#define HAPTICS_CLIENT_ABI_VERSION 1u
/** The one symbol a client transport plugin exports. */
#define HAPTICS_CLIENT_ENTRY "haptics_client_fill_v1"
/** The client transport's file name, searched on the plugin search path. */
#define HAPTICS_CLIENT_PLUGIN_NAME "libhapticsd-client.so"

/** Events a client reports through `haptics_client_host_v1.notify`. */
enum haptics_client_event {
    /** The service added a device. */
    HAPTICS_CLIENT_DEVICE_ADDED = 1,
    /** The service lost a device. */
    HAPTICS_CLIENT_DEVICE_REMOVED = 2,
    /** The service left the bus (it stopped or crashed): every device and player is gone. */
    HAPTICS_CLIENT_DISCONNECTED = 3,
};

/** What happened to a `play_effect` call (the service's overuse guard). */
enum haptics_client_disposition {
    /** Playing now. */
    HAPTICS_CLIENT_PLAYED = 1,
    /** Will play when the kind's minimum interval has passed. */
    HAPTICS_CLIENT_DEFERRED = 2,
    /** Absorbed into a play already deferred. */
    HAPTICS_CLIENT_COALESCED = 3,
};

/** Player commands (`player_command`). */
enum haptics_client_command {
    HAPTICS_CLIENT_START = 1,
    HAPTICS_CLIENT_STOP = 2,
    HAPTICS_CLIENT_PAUSE = 3,
    HAPTICS_CLIENT_RESUME = 4,
    /** Stops now and drops commands not yet carried out. */
    HAPTICS_CLIENT_CANCEL = 5,
    /** Forgets the player (a playing one is stopped). */
    HAPTICS_CLIENT_RELEASE = 6,
};

/** Player properties (`player_set`, `player_get`). */
enum haptics_client_property {
    /** 0 or 1. */
    HAPTICS_CLIENT_LOOP = 1,
    /** Seconds; 0: the pattern's end. */
    HAPTICS_CLIENT_LOOP_END = 2,
    /** Playback rate, 0.01…100. */
    HAPTICS_CLIENT_RATE = 3,
    /** 0 or 1. */
    HAPTICS_CLIENT_MUTED = 4,
    /** 0…1, multiplies the pattern's intensities. */
    HAPTICS_CLIENT_INTENSITY = 5,
    /** Seconds into the pattern (get); set: seek there. */
    HAPTICS_CLIENT_POSITION = 6,
};

/** A D-Bus error: name and message, NUL-terminated (truncated to fit). */
typedef struct haptics_client_error_v1 {
    char name[128];
    char message[512];
} haptics_client_error_v1;

/** The service a client is connected to. */
typedef struct haptics_client_daemon_v1 {
    /** Set by the host: sizeof(haptics_client_daemon_v1) as it was built. */
    uint32_t struct_size;
    /** The service's process id. */
    uint32_t pid;
    /** Its unique bus name (":1.42"). */
    char unique_name[HAPTICS_SHORT_NAME_SIZE];
    /** The interface version it reports ("1.0"). */
    char version[HAPTICS_SHORT_NAME_SIZE];
    /** Which bus: "session", "system" or the address. */
    char bus[HAPTICS_PATH_SIZE];
} haptics_client_daemon_v1;

/** One device the service owns. Travels in arrays: never grows (a later version adds a function). */
typedef struct haptics_client_device_v1 {
    /** The device as a backend would describe it. */
    haptics_device_v1 device;
    /** `haptics_device_flag` bits (HAPTICS_DEVICE_UNAVAILABLE). */
    uint32_t flags;
    /** The process that owns it (the service). */
    uint32_t owner_pid;
    /** The backend in the service that serves it ("hid", "gpio", "recording"). */
    char backend[HAPTICS_SHORT_NAME_SIZE];
    /** The physical device (see haptics_device_info_v1), empty when not shared. */
    char physical_id[HAPTICS_PATH_SIZE];
    /** With HAPTICS_DEVICE_UNAVAILABLE: why. */
    char unavailable_reason[HAPTICS_PATH_SIZE];
} haptics_client_device_v1;

/** A dynamic parameter for `send_parameters`. */
typedef struct haptics_client_parameter_v1 {
    /** Core Haptics name: "HapticIntensityControl", "HapticSharpnessControl", … */
    const char * _Nonnull id;
    double value;
    /** Seconds after the command's time. */
    double relative_time;
} haptics_client_parameter_v1;

/** A control point for `schedule_curve`. */
typedef struct haptics_client_point_v1 {
    double time;
    double value;
} haptics_client_point_v1;

/** What the host offers a client instance. Valid until the instance is destroyed. */
typedef struct haptics_client_host_v1 {
    uint32_t abi_version;
    uint32_t struct_size;
    void * _Nullable context;
    /** A configuration value ("daemon.bus": session, system or an address; "daemon.app-id"), or NULL. */
    const char * _Nullable (* _Nullable get_config)(void * _Nullable context, const char * _Nonnull key);
    /** A message for the host's log (`haptics_log_level`). */
    void (* _Nullable log)(void * _Nullable context, int32_t level, const char * _Nonnull message);
    /** Player `player` ended; `reason` is the service's word ("finished", "stopped", "device-lost", …). */
    void (* _Nullable player_ended)(void * _Nullable context, uint64_t player, const char * _Nonnull reason);
    /** A `haptics_client_event`; `device_id` is empty for HAPTICS_CLIENT_DISCONNECTED. */
    void (* _Nullable notify)(void * _Nullable context, uint32_t event, const char * _Nonnull device_id);
} haptics_client_host_v1;

/** The table a client transport fills. Every function pointer is required. */
typedef struct haptics_client_v1 {
    /** Set to HAPTICS_CLIENT_ABI_VERSION. */
    uint32_t abi_version;
    /** Set to sizeof(haptics_client_v1) as the plugin was built. */
    uint32_t struct_size;
    /** The instance, passed to every function. */
    void * _Nullable instance;

    /**
     * Connects to the service: 0 when it runs (or bus activation started it), -ENOENT when no
     * process owns its name and none can be activated, -ECONNREFUSED (or another errno) when there
     * is no bus. Fills `*daemon`.
     */
    int (* _Nullable connect)(void * _Nullable instance, haptics_client_daemon_v1 * _Nonnull daemon,
                              haptics_client_error_v1 * _Nullable error);
    /** Lists the service's devices like `enumerate` (haptics_backend.h): `*count` may exceed `capacity`. */
    int (* _Nullable list_devices)(void * _Nullable instance, haptics_client_device_v1 * _Nullable devices, uint32_t capacity,
                                   uint32_t * _Nonnull count, haptics_client_error_v1 * _Nullable error);
    /** Wakes `device_id` for minimum latency (the power model's prepare). */
    int (* _Nullable prepare)(void * _Nullable instance, const char * _Nonnull device_id, haptics_client_error_v1 * _Nullable error);
    /** Plays vocabulary effect `effect` at `intensity` (0…1); `*player` 0 when coalesced into nothing. */
    int (* _Nullable play_effect)(void * _Nullable instance, const char * _Nonnull device_id, const char * _Nonnull effect, double intensity,
                                  uint64_t * _Nonnull player, uint32_t * _Nonnull disposition, haptics_client_error_v1 * _Nullable error);
    /** Plays the AHAP document `ahap` once, now, at `intensity` (0…1); the player goes when it ends. */
    int (* _Nullable play_pattern)(void * _Nullable instance, const char * _Nonnull device_id, const char * _Nonnull ahap, double intensity,
                                   uint64_t * _Nonnull player, haptics_client_error_v1 * _Nullable error);
    /** Makes a player for the AHAP document `ahap` (not started). */
    int (* _Nullable create_player)(void * _Nullable instance, const char * _Nonnull device_id, const char * _Nonnull ahap,
                                    uint64_t * _Nonnull player, haptics_client_error_v1 * _Nullable error);
    /** A `haptics_client_command` at `at_ns` (CLOCK_MONOTONIC nanoseconds; 0: now). */
    int (* _Nullable player_command)(void * _Nullable instance, uint64_t player, uint32_t command, uint64_t at_ns,
                                     haptics_client_error_v1 * _Nullable error);
    /** Sets a `haptics_client_property`. */
    int (* _Nullable player_set)(void * _Nullable instance, uint64_t player, uint32_t property, double value,
                                 haptics_client_error_v1 * _Nullable error);
    /** Reads a `haptics_client_property`. */
    int (* _Nullable player_get)(void * _Nullable instance, uint64_t player, uint32_t property, double * _Nonnull value,
                                 haptics_client_error_v1 * _Nullable error);
    /** Sends dynamic parameters taking effect at `at_ns` (0: now). */
    int (* _Nullable send_parameters)(void * _Nullable instance, uint64_t player, const haptics_client_parameter_v1 * _Nullable parameters,
                                      uint32_t count, uint64_t at_ns, haptics_client_error_v1 * _Nullable error);
    /** Moves parameter `parameter` along `points` from `at_ns` (0: now). */
    int (* _Nullable schedule_curve)(void * _Nullable instance, uint64_t player, const char * _Nonnull parameter,
                                     const haptics_client_point_v1 * _Nullable points, uint32_t count, uint64_t at_ns,
                                     haptics_client_error_v1 * _Nullable error);
    /** Stops every player this client started. */
    int (* _Nullable stop_all)(void * _Nullable instance, haptics_client_error_v1 * _Nullable error);
    /** Disconnects and releases the instance (the service stops what it started). */
    void (* _Nullable destroy)(void * _Nullable instance);
    /**
     * Appended after `destroy` (a host built with this header refuses a table whose `struct_size`
     * does not reach it): fills `*info`, whose
     * `struct_size` the host set, with what the service says of `device_id` beyond its listing, as
     * the backend that serves it said it to `describe` (haptics_backend.h): physical device,
     * preference, why it is unavailable, drive envelope, period step, the sample stream of a device
     * that takes samples. Writes only what `info->struct_size` covers. So a client's description of
     * a device is the same as an in-process one's.
     */
    int (* _Nullable describe_device)(void * _Nullable instance, const char * _Nonnull device_id, haptics_device_info_v1 * _Nonnull info,
                                      haptics_client_error_v1 * _Nullable error);
    /**
     * Appended after `describe_device` (required likewise): registers a clip for this connection's
     * AHAP `AudioCustom` events, which name it as their `EventWaveformPath` (`name`); the service
     * plays it on waveform devices. `samples` holds `frame_count` frames of `channels` (1 or 2)
     * interleaved floats at `rate_hz` (1000…384000), at most 60 s. Replaces the connection's clip of
     * that name; the service drops them all when the connection closes. Fills `*id`.
     */
    int (* _Nullable register_audio)(void * _Nullable instance, const char * _Nonnull name, const float * _Nonnull samples, uint64_t frame_count,
                                     uint32_t channels, uint32_t rate_hz, uint64_t * _Nonnull id, haptics_client_error_v1 * _Nullable error);
    /** Forgets clip `id` of this connection's (players made before keep playing it). */
    int (* _Nullable unregister_audio)(void * _Nullable instance, uint64_t id, haptics_client_error_v1 * _Nullable error);
    /**
     * Appended after `unregister_audio` (required likewise): sets the adaptive triggers of
     * `device_id` (HAPTICS_DEVICE_ADAPTIVE_TRIGGERS in what `describe_device` gives) as the backend
     * contract's `set_triggers` does: NULL leaves that trigger as it is. This connection holds the
     * device's triggers until it sets both off or closes; another connection is refused meanwhile.
     */
    int (* _Nullable set_triggers)(void * _Nullable instance, const char * _Nonnull device_id, const haptics_trigger_effect_v1 * _Nullable right,
                                   const haptics_trigger_effect_v1 * _Nullable left, haptics_client_error_v1 * _Nullable error);
} haptics_client_v1;

/**
 * The entry point a client transport exports. Fills the first `out_size` bytes of `*out`.
 * Returns 0 or a negative errno value (no instance is left behind on failure).
 */
typedef int (*haptics_client_fill_v1_fn)(const haptics_client_host_v1 * _Nonnull host, haptics_client_v1 * _Nonnull out, size_t out_size);

int haptics_client_fill_v1(const haptics_client_host_v1 * _Nonnull host, haptics_client_v1 * _Nonnull out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* HAPTICS_CLIENT_H */
