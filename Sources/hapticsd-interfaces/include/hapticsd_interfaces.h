/*
 * hapticsd_interfaces.h: hapticsd's D-Bus interface tables (sd-bus vtables).
 *
 * The tables are C because sd-bus builds them with macros; they are the service's table of
 * contents (see hapticsd_interfaces.c and Docs/Daemon.md). Each method, property read and property
 * write names its own handler, implemented in Swift (`@_cdecl`, Sources/HapticsDaemon/Interfaces/).
 */
#ifndef HAPTICSD_INTERFACES_H
#define HAPTICSD_INTERFACES_H

#include <systemd/sd-bus.h>

/* The bus names, interfaces and paths are Swift constants (HapticsBus: HapticsServiceName,
 * FeedbackdServiceName), shared by the service, its client plugin and the benchmarks. */

/** org.swifthaptics.Haptics1 at /org/swifthaptics/Haptics1. */
const sd_bus_vtable *hapticsd_manager_vtable(void);
/** org.swifthaptics.Haptics1.Player at every /org/swifthaptics/Haptics1/player/N. */
const sd_bus_vtable *hapticsd_player_vtable(void);
/** org.sigxcpu.Feedback at /org/sigxcpu/Feedback. */
const sd_bus_vtable *hapticsd_feedback_vtable(void);
/** org.sigxcpu.Feedback.Haptic at /org/sigxcpu/Feedback. */
const sd_bus_vtable *hapticsd_feedback_haptic_vtable(void);

#endif
