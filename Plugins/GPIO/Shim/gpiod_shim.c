#include "gpiod_shim.h"
