/* Placeholder until the libgpiod shim lands. */
#include <gpiod.h>
