/*
 * hapticsd_interfaces.h: hapticsd's D-Bus interface tables (sd-bus vtables).
 *
 * The tables are C because sd-bus builds them with macros; they are the service's table of
 * contents (see hapticsd_interfaces.c and Docs/Daemon.md). Their handlers are implemented in Swift
 * (`@_cdecl`, in Sources/HapticsDaemon/Interfaces/), one per interface, dispatching on the member.
 */
#ifndef HAPTICSD_INTERFACES_H
#define HAPTICSD_INTERFACES_H

#include <systemd/sd-bus.h>

/** The service's own API, versioned: bus name, interface and object share the name. */
#define HAPTICSD_BUS_NAME "org.swifthaptics.Haptics1"
#define HAPTICSD_INTERFACE "org.swifthaptics.Haptics1"
#define HAPTICSD_OBJECT_PATH "/org/swifthaptics/Haptics1"
/** Players live below this path: /org/swifthaptics/Haptics1/player/N. */
#define HAPTICSD_PLAYER_PREFIX "/org/swifthaptics/Haptics1/player"
#define HAPTICSD_PLAYER_INTERFACE "org.swifthaptics.Haptics1.Player"

/** feedbackd's interfaces, served for compatibility. */
#define HAPTICSD_FEEDBACK_BUS_NAME "org.sigxcpu.Feedback"
#define HAPTICSD_FEEDBACK_INTERFACE "org.sigxcpu.Feedback"
#define HAPTICSD_FEEDBACK_HAPTIC_INTERFACE "org.sigxcpu.Feedback.Haptic"
#define HAPTICSD_FEEDBACK_OBJECT_PATH "/org/sigxcpu/Feedback"

/** org.swifthaptics.Haptics1 at /org/swifthaptics/Haptics1. */
const sd_bus_vtable *hapticsd_manager_vtable(void);
/** org.swifthaptics.Haptics1.Player at every /org/swifthaptics/Haptics1/player/N. */
const sd_bus_vtable *hapticsd_player_vtable(void);
/** org.sigxcpu.Feedback at /org/sigxcpu/Feedback. */
const sd_bus_vtable *hapticsd_feedback_vtable(void);
/** org.sigxcpu.Feedback.Haptic at /org/sigxcpu/Feedback. */
const sd_bus_vtable *hapticsd_feedback_haptic_vtable(void);

#endif
