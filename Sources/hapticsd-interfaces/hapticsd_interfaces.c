/*
 * hapticsd's D-Bus interfaces, one table per interface: every method with its argument names and
 * its own handler, every property with its own getter (and setter where it is writable), every
 * signal. Read as the API's table of contents (as systemd's timedated.c is); Docs/Daemon.md
 * describes each entry. The handlers are Swift functions exported under these names (@_cdecl, in
 * Sources/HapticsDaemon/Interfaces/Handlers.swift): an entry whose handler is missing fails the link.
 */
#include "hapticsd_interfaces.h"

#define METHOD(name) int name(sd_bus_message *message, void *userdata, sd_bus_error *error)
#define GETTER(name)                                                                                  \
    int name(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply, \
             void *userdata, sd_bus_error *error)
#define SETTER(name)                                                                                  \
    int name(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *value, \
             void *userdata, sd_bus_error *error)

/* org.swifthaptics.Haptics1 */
GETTER(hapticsd_manager_get_version);
GETTER(hapticsd_manager_get_enabled);
SETTER(hapticsd_manager_set_enabled);
GETTER(hapticsd_manager_get_intensity_scale);
SETTER(hapticsd_manager_set_intensity_scale);
GETTER(hapticsd_manager_get_minimum_intervals);
SETTER(hapticsd_manager_set_minimum_intervals);
GETTER(hapticsd_manager_get_default_device);
SETTER(hapticsd_manager_set_default_device);
GETTER(hapticsd_manager_get_devices);
GETTER(hapticsd_manager_get_app_policies);
METHOD(hapticsd_manager_list_devices);
METHOD(hapticsd_manager_get_device);
METHOD(hapticsd_manager_list_effects);
METHOD(hapticsd_manager_get_capabilities);
METHOD(hapticsd_manager_prepare);
METHOD(hapticsd_manager_play_effect);
METHOD(hapticsd_manager_play_pattern);
METHOD(hapticsd_manager_create_player);
METHOD(hapticsd_manager_stop_all);
METHOD(hapticsd_manager_register_audio);
METHOD(hapticsd_manager_unregister_audio);
METHOD(hapticsd_manager_set_triggers);
METHOD(hapticsd_manager_listen);
METHOD(hapticsd_manager_stop_listening);
METHOD(hapticsd_manager_set_app_policy);
METHOD(hapticsd_manager_get_app_policy);
METHOD(hapticsd_manager_get_statistics);

/* org.swifthaptics.Haptics1.Player */
GETTER(hapticsd_player_get_device);
GETTER(hapticsd_player_get_app_id);
GETTER(hapticsd_player_get_one_shot);
GETTER(hapticsd_player_get_duration);
GETTER(hapticsd_player_get_state);
GETTER(hapticsd_player_get_position);
GETTER(hapticsd_player_get_loop);
SETTER(hapticsd_player_set_loop);
GETTER(hapticsd_player_get_loop_end);
SETTER(hapticsd_player_set_loop_end);
GETTER(hapticsd_player_get_rate);
SETTER(hapticsd_player_set_rate);
GETTER(hapticsd_player_get_muted);
SETTER(hapticsd_player_set_muted);
GETTER(hapticsd_player_get_intensity);
SETTER(hapticsd_player_set_intensity);
METHOD(hapticsd_player_start);
METHOD(hapticsd_player_stop);
METHOD(hapticsd_player_pause);
METHOD(hapticsd_player_resume);
METHOD(hapticsd_player_seek);
METHOD(hapticsd_player_send_parameters);
METHOD(hapticsd_player_schedule_parameter_curve);
METHOD(hapticsd_player_cancel);
METHOD(hapticsd_player_release);

/* org.sigxcpu.Feedback and org.sigxcpu.Feedback.Haptic */
GETTER(hapticsd_feedback_get_profile);
SETTER(hapticsd_feedback_set_profile);
METHOD(hapticsd_feedback_trigger_feedback);
METHOD(hapticsd_feedback_end_feedback);
METHOD(hapticsd_feedback_haptic_vibrate);

#define UNPRIVILEGED SD_BUS_VTABLE_UNPRIVILEGED
#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define CONST SD_BUS_VTABLE_PROPERTY_CONST

static const sd_bus_vtable manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Version", "s", hapticsd_manager_get_version, 0, CONST),
    SD_BUS_WRITABLE_PROPERTY("Enabled", "b", hapticsd_manager_get_enabled, hapticsd_manager_set_enabled, 0,
                             EMITS | UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("IntensityScale", "d", hapticsd_manager_get_intensity_scale,
                             hapticsd_manager_set_intensity_scale, 0, EMITS | UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("MinimumIntervals", "a{sd}", hapticsd_manager_get_minimum_intervals,
                             hapticsd_manager_set_minimum_intervals, 0, EMITS | UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("DefaultDevice", "s", hapticsd_manager_get_default_device,
                             hapticsd_manager_set_default_device, 0, EMITS | UNPRIVILEGED),
    SD_BUS_PROPERTY("Devices", "as", hapticsd_manager_get_devices, 0, EMITS),
    /* Announced as invalidated, not re-sent whole on every change (up to 1,024 apps' settings). */
    SD_BUS_PROPERTY("AppPolicies", "a{sa{sv}}", hapticsd_manager_get_app_policies, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),

    SD_BUS_METHOD_WITH_ARGS("ListDevices", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sa{sv})", devices),
                            hapticsd_manager_list_devices, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetDevice", SD_BUS_ARGS("s", device), SD_BUS_RESULT("a{sv}", details),
                            hapticsd_manager_get_device, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ListEffects", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sss)", effects),
                            hapticsd_manager_list_effects, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetCapabilities", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", capabilities),
                            hapticsd_manager_get_capabilities, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Prepare", SD_BUS_ARGS("s", app_id, "s", device), SD_BUS_NO_RESULT,
                            hapticsd_manager_prepare, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("PlayEffect", SD_BUS_ARGS("s", app_id, "s", device, "s", effect, "d", intensity),
                            SD_BUS_RESULT("o", player, "s", disposition), hapticsd_manager_play_effect, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("PlayPattern",
                            SD_BUS_ARGS("s", app_id, "s", device, "s", ahap, "d", intensity, "a{sv}", options),
                            SD_BUS_RESULT("o", player), hapticsd_manager_play_pattern, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("CreatePlayer", SD_BUS_ARGS("s", app_id, "s", device, "s", ahap),
                            SD_BUS_RESULT("o", player), hapticsd_manager_create_player, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("StopAll", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, hapticsd_manager_stop_all, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("RegisterAudio",
                            SD_BUS_ARGS("s", app_id, "s", name, "u", rate_hz, "u", channels, "ay", samples),
                            SD_BUS_RESULT("t", id), hapticsd_manager_register_audio, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("UnregisterAudio", SD_BUS_ARGS("t", id), SD_BUS_NO_RESULT, hapticsd_manager_unregister_audio,
                            UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("SetTriggers", SD_BUS_ARGS("s", app_id, "s", device, "a{sv}", right, "a{sv}", left), SD_BUS_NO_RESULT,
                            hapticsd_manager_set_triggers, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Listen", SD_BUS_ARGS("s", app_id, "s", device, "s", source, "a{sv}", options), SD_BUS_RESULT("t", id),
                            hapticsd_manager_listen, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("StopListening", SD_BUS_ARGS("t", id), SD_BUS_RESULT("a{sv}", report), hapticsd_manager_stop_listening,
                            UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("SetAppPolicy", SD_BUS_ARGS("s", app_id, "a{sv}", policy), SD_BUS_NO_RESULT,
                            hapticsd_manager_set_app_policy, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetAppPolicy", SD_BUS_ARGS("s", app_id), SD_BUS_RESULT("a{sv}", policy),
                            hapticsd_manager_get_app_policy, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetStatistics", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", statistics),
                            hapticsd_manager_get_statistics, UNPRIVILEGED),

    SD_BUS_SIGNAL_WITH_ARGS("DeviceAdded", SD_BUS_ARGS("s", device, "a{sv}", details), 0),
    SD_BUS_SIGNAL_WITH_ARGS("DeviceRemoved", SD_BUS_ARGS("s", device), 0),
    SD_BUS_SIGNAL_WITH_ARGS("Ended", SD_BUS_ARGS("o", player, "s", reason), 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable player_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Device", "s", hapticsd_player_get_device, 0, CONST),
    SD_BUS_PROPERTY("AppId", "s", hapticsd_player_get_app_id, 0, CONST),
    SD_BUS_PROPERTY("OneShot", "b", hapticsd_player_get_one_shot, 0, CONST),
    SD_BUS_PROPERTY("Duration", "d", hapticsd_player_get_duration, 0, CONST),
    SD_BUS_PROPERTY("State", "s", hapticsd_player_get_state, 0, 0),
    SD_BUS_PROPERTY("Position", "d", hapticsd_player_get_position, 0, 0),
    SD_BUS_WRITABLE_PROPERTY("Loop", "b", hapticsd_player_get_loop, hapticsd_player_set_loop, 0, UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("LoopEnd", "d", hapticsd_player_get_loop_end, hapticsd_player_set_loop_end, 0,
                             UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("Rate", "d", hapticsd_player_get_rate, hapticsd_player_set_rate, 0, UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("Muted", "b", hapticsd_player_get_muted, hapticsd_player_set_muted, 0, UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("Intensity", "d", hapticsd_player_get_intensity, hapticsd_player_set_intensity, 0,
                             UNPRIVILEGED),

    SD_BUS_METHOD_WITH_ARGS("Start", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_start, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_stop, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Pause", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_pause, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Resume", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_resume,
                            UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Seek", SD_BUS_ARGS("d", offset), SD_BUS_NO_RESULT, hapticsd_player_seek, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("SendParameters", SD_BUS_ARGS("a(sdd)", parameters, "t", at_usec), SD_BUS_NO_RESULT,
                            hapticsd_player_send_parameters, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ScheduleParameterCurve", SD_BUS_ARGS("s", parameter, "a(dd)", points, "t", at_usec),
                            SD_BUS_NO_RESULT, hapticsd_player_schedule_parameter_curve, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, hapticsd_player_cancel, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Release", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, hapticsd_player_release, UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable feedback_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_WRITABLE_PROPERTY("Profile", "s", hapticsd_feedback_get_profile, hapticsd_feedback_set_profile, 0,
                             EMITS | UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("TriggerFeedback", SD_BUS_ARGS("s", app_id, "s", event, "a{sv}", hints, "i", timeout),
                            SD_BUS_RESULT("u", id), hapticsd_feedback_trigger_feedback, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("EndFeedback", SD_BUS_ARGS("u", id), SD_BUS_NO_RESULT, hapticsd_feedback_end_feedback,
                            UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("FeedbackEnded", SD_BUS_ARGS("u", id, "u", reason), 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable feedback_haptic_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("Vibrate", SD_BUS_ARGS("s", app_id, "a(du)", pattern), SD_BUS_RESULT("b", success),
                            hapticsd_feedback_haptic_vibrate, UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

const sd_bus_vtable *hapticsd_manager_vtable(void) { return manager_vtable; }
const sd_bus_vtable *hapticsd_player_vtable(void) { return player_vtable; }
const sd_bus_vtable *hapticsd_feedback_vtable(void) { return feedback_vtable; }
const sd_bus_vtable *hapticsd_feedback_haptic_vtable(void) { return feedback_haptic_vtable; }
