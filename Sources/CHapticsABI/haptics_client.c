/*
 * Compiles the client transport header and pins the layout of client ABI version 1.
 */
#include "haptics_client.h"

#define HAPTICS_CLIENT_PIN(cond) _Static_assert(cond, #cond ": the client ABI v1 layout changed; bump HAPTICS_CLIENT_ABI_VERSION")

HAPTICS_CLIENT_PIN(sizeof(haptics_client_error_v1) == 640);
HAPTICS_CLIENT_PIN(sizeof(haptics_client_daemon_v1) == 8 + 2 * HAPTICS_SHORT_NAME_SIZE + HAPTICS_PATH_SIZE);
HAPTICS_CLIENT_PIN(sizeof(haptics_client_device_v1) == sizeof(haptics_device_v1) + 8 + HAPTICS_SHORT_NAME_SIZE + 2 * HAPTICS_PATH_SIZE);
HAPTICS_CLIENT_PIN(sizeof(haptics_client_host_v1) == 8 + 5 * sizeof(void *));
/* 18 pointers: `describe_device`, then `register_audio` and `unregister_audio`, then
   `set_triggers` were appended (additive: the table carries struct_size). */
HAPTICS_CLIENT_PIN(sizeof(haptics_client_v1) == 8 + 18 * sizeof(void *));
