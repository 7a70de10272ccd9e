/* libsystemd's sd-bus, sd-event and sd-daemon (Debian: libsystemd-dev). Only hapticsd, its client
 * plugin and haptics-bench link it; the core never does. */
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
