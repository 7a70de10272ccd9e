/*
 * hapticsd's D-Bus interfaces, one table per interface: every method with its argument names,
 * every property and every signal. Docs/Daemon.md describes each entry; the handlers are in Swift.
 */
#include "hapticsd_interfaces.h"

/* Implemented in Swift, in the files of Sources/HapticsDaemon/Interfaces/. */
int hapticsd_manager_call(sd_bus_message *message, void *userdata, sd_bus_error *error);
int hapticsd_player_call(sd_bus_message *message, void *userdata, sd_bus_error *error);
int hapticsd_feedback_call(sd_bus_message *message, void *userdata, sd_bus_error *error);
int hapticsd_get_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error);
int hapticsd_set_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *value, void *userdata, sd_bus_error *error);

#define UNPRIVILEGED SD_BUS_VTABLE_UNPRIVILEGED
#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define CONST SD_BUS_VTABLE_PROPERTY_CONST

static const sd_bus_vtable manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Version", "s", hapticsd_get_property, 0, CONST),
    SD_BUS_WRITABLE_PROPERTY("Enabled", "b", hapticsd_get_property, hapticsd_set_property, 0, EMITS | UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("IntensityScale", "d", hapticsd_get_property, hapticsd_set_property, 0, EMITS | UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("MinimumIntervals", "a{sd}", hapticsd_get_property, hapticsd_set_property, 0, EMITS | UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("DefaultDevice", "s", hapticsd_get_property, hapticsd_set_property, 0, EMITS | UNPRIVILEGED),
    SD_BUS_PROPERTY("Devices", "as", hapticsd_get_property, 0, EMITS),
    /* Announced as invalidated, not re-sent whole on every change (up to 1,024 apps' settings). */
    SD_BUS_PROPERTY("AppPolicies", "a{sa{sv}}", hapticsd_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),

    SD_BUS_METHOD_WITH_ARGS("ListDevices", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sa{sv})", devices),
                            hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetDevice", SD_BUS_ARGS("s", device), SD_BUS_RESULT("a{sv}", details),
                            hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ListEffects", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sss)", effects),
                            hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Prepare", SD_BUS_ARGS("s", app_id, "s", device), SD_BUS_NO_RESULT,
                            hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("PlayEffect", SD_BUS_ARGS("s", app_id, "s", device, "s", effect, "d", intensity),
                            SD_BUS_RESULT("o", player, "s", disposition), hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("PlayPattern",
                            SD_BUS_ARGS("s", app_id, "s", device, "s", ahap, "d", intensity, "a{sv}", options),
                            SD_BUS_RESULT("o", player), hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("CreatePlayer", SD_BUS_ARGS("s", app_id, "s", device, "s", ahap),
                            SD_BUS_RESULT("o", player), hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("StopAll", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("SetAppPolicy", SD_BUS_ARGS("s", app_id, "a{sv}", policy), SD_BUS_NO_RESULT,
                            hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetAppPolicy", SD_BUS_ARGS("s", app_id), SD_BUS_RESULT("a{sv}", policy),
                            hapticsd_manager_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetStatistics", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", statistics),
                            hapticsd_manager_call, UNPRIVILEGED),

    SD_BUS_SIGNAL_WITH_ARGS("DeviceAdded", SD_BUS_ARGS("s", device, "a{sv}", details), 0),
    SD_BUS_SIGNAL_WITH_ARGS("DeviceRemoved", SD_BUS_ARGS("s", device), 0),
    SD_BUS_SIGNAL_WITH_ARGS("Ended", SD_BUS_ARGS("o", player, "s", reason), 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable player_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Device", "s", hapticsd_get_property, 0, CONST),
    SD_BUS_PROPERTY("AppId", "s", hapticsd_get_property, 0, CONST),
    SD_BUS_PROPERTY("OneShot", "b", hapticsd_get_property, 0, CONST),
    SD_BUS_PROPERTY("Duration", "d", hapticsd_get_property, 0, CONST),
    SD_BUS_PROPERTY("State", "s", hapticsd_get_property, 0, 0),
    SD_BUS_PROPERTY("Position", "d", hapticsd_get_property, 0, 0),
    SD_BUS_WRITABLE_PROPERTY("Loop", "b", hapticsd_get_property, hapticsd_set_property, 0, UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("LoopEnd", "d", hapticsd_get_property, hapticsd_set_property, 0, UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("Rate", "d", hapticsd_get_property, hapticsd_set_property, 0, UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("Muted", "b", hapticsd_get_property, hapticsd_set_property, 0, UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("Intensity", "d", hapticsd_get_property, hapticsd_set_property, 0, UNPRIVILEGED),

    SD_BUS_METHOD_WITH_ARGS("Start", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Pause", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Resume", SD_BUS_ARGS("t", at_usec), SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Seek", SD_BUS_ARGS("d", offset), SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("SendParameters", SD_BUS_ARGS("a(sdd)", parameters, "t", at_usec), SD_BUS_NO_RESULT,
                            hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ScheduleParameterCurve", SD_BUS_ARGS("s", parameter, "a(dd)", points, "t", at_usec),
                            SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Release", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, hapticsd_player_call, UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable feedback_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_WRITABLE_PROPERTY("Profile", "s", hapticsd_get_property, hapticsd_set_property, 0, EMITS | UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("TriggerFeedback", SD_BUS_ARGS("s", app_id, "s", event, "a{sv}", hints, "i", timeout),
                            SD_BUS_RESULT("u", id), hapticsd_feedback_call, UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("EndFeedback", SD_BUS_ARGS("u", id), SD_BUS_NO_RESULT, hapticsd_feedback_call, UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("FeedbackEnded", SD_BUS_ARGS("u", id, "u", reason), 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable feedback_haptic_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("Vibrate", SD_BUS_ARGS("s", app_id, "a(du)", pattern), SD_BUS_RESULT("b", success),
                            hapticsd_feedback_call, UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

const sd_bus_vtable *hapticsd_manager_vtable(void) { return manager_vtable; }
const sd_bus_vtable *hapticsd_player_vtable(void) { return player_vtable; }
const sd_bus_vtable *hapticsd_feedback_vtable(void) { return feedback_vtable; }
const sd_bus_vtable *hapticsd_feedback_haptic_vtable(void) { return feedback_haptic_vtable; }
