/* libudev (Debian: libudev-dev). Only the evdev backend plugin links it; the core never does. */
#include <libudev.h>
