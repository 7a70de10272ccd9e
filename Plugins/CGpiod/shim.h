/* libgpiod (Debian 12: 1.6, the v1 API; newer distributions: 2.x). Only the GPIO backend plugin and the VM rig link it. */
#include <gpiod.h>
