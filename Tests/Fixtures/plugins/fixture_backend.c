/*
 * A complete backend in plain C (one device, "fixture:c"), compiled by the loader tests into
 * variants that each break one rule of the contract:
 *   (none)                      a good plugin
 *   -DFIXTURE_BAD_ABI           fills abi_version 2
 *   -DFIXTURE_SHORT_TABLE       reports a struct_size smaller than ABI v1's table
 *   -DFIXTURE_MISSING_SUBMIT    leaves the required `submit` pointer NULL
 *   -DFIXTURE_NO_ENTRY          exports no haptics_backend_fill_v1
 *   -DFIXTURE_INIT_FAILS        returns -ENODEV from the entry point after logging why
 *   -DFIXTURE_NEEDS_DEP         calls into libfixturedep.so (deleted before loading)
 *   -DFIXTURE_FUTURE            a plugin from a later ABI 1.x: its table has one more function
 *                               appended after `describe` and says so in struct_size
 * Built against Tests/Fixtures/abi/haptics_backend_1_0.h (-DFIXTURE_ABI_1_0) it is a plugin of
 * ABI 1.0, which knows nothing of `describe`. Every variant fills only the `out_size` bytes the
 * host has room for, as the header asks. The device's name carries the host's answer to
 * get_config("plugin.path").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef FIXTURE_ABI_1_0
#include "haptics_backend_1_0.h"
#else
#include "haptics_backend.h"
#endif

#ifdef FIXTURE_NEEDS_DEP
int fixture_dep_answer(void);
#endif

struct device { float amplitude; };


#ifdef FIXTURE_FUTURE
/* What a later 1.x header would declare: today's table plus one appended function. */
typedef struct {
    haptics_backend_v1 today;
    int (*later)(void *instance);
} fixture_future_table;
#define FIXTURE_TABLE fixture_future_table
#else
#define FIXTURE_TABLE haptics_backend_v1
#endif

#ifdef FIXTURE_ABI_1_0
#define FIXTURE_MIN_SIZE sizeof(haptics_backend_v1)
#else
#define FIXTURE_MIN_SIZE HAPTICS_BACKEND_V1_MIN_SIZE
#endif

/* The no-entry variant references none of these. */
#define FIXTURE_FN static __attribute__((unused))

/* The instance is the host table it was made with, valid until the instance is destroyed: no
 * globals, so instances made for parallel tests never see one another's (freed) hosts. */
FIXTURE_FN int enumerate(void *instance, haptics_device_v1 *devices, uint32_t capacity, uint32_t *count) {
    const haptics_host_v1 *the_host = instance;
    *count = 1;
    if (capacity < 1 || devices == NULL) return 0;
    memset(&devices[0], 0, sizeof devices[0]);
    snprintf(devices[0].id, sizeof devices[0].id, "fixture:c");
    const char *path = the_host && the_host->get_config ? the_host->get_config(the_host->context, "plugin.path") : NULL;
    snprintf(devices[0].name, sizeof devices[0].name, "C fixture device (%s)", path ? path : "no plugin.path");
    devices[0].actuator = HAPTICS_ACTUATOR_ERM;
    devices[0].channel_count = 1;
    snprintf(devices[0].channels[0].name, sizeof devices[0].channels[0].name, "main");
    devices[0].channels[0].actuator = HAPTICS_ACTUATOR_ERM;
    devices[0].channels[0].capabilities = HAPTICS_CAP_AMPLITUDE;
    devices[0].channels[0].amplitude_steps = 256;
    devices[0].min_update_interval_ns = 1000000;
    return 0;
}

FIXTURE_FN int open_device(void *instance, const char *id, void **device) {
    (void)instance;
    if (strcmp(id, "fixture:c") != 0) return -ENODEV;
    *device = calloc(1, sizeof(struct device));
    return *device ? 0 : -ENOMEM;
}

FIXTURE_FN void close_device(void *device) { free(device); }
FIXTURE_FN int wake(void *device) { (void)device; return 0; }
FIXTURE_FN int sleep_device(void *device) { (void)device; return 0; }
FIXTURE_FN int submit(void *device, const haptics_frame_v1 *frame) {
    ((struct device *)device)->amplitude = frame->channels[0].amplitude;
    return 0;
}
FIXTURE_FN int stop(void *device) { ((struct device *)device)->amplitude = 0; return 0; }
FIXTURE_FN size_t last_error(void *instance, void *device, char *buffer, size_t size) {
    (void)instance; (void)device;
    if (size) buffer[0] = '\0';
    return 0;
}
FIXTURE_FN void destroy(void *instance) { (void)instance; }

#ifndef FIXTURE_ABI_1_0
/* Says where the fixture device is, writing only what the host's struct has room for. */
FIXTURE_FN int describe(void *instance, const char *id, haptics_device_info_v1 *info) {
    (void)instance;
    if (strcmp(id, "fixture:c") != 0) return -ENODEV;
    haptics_device_info_v1 mine;
    memset(&mine, 0, sizeof mine);
    mine.flags = HAPTICS_DEVICE_HAS_ENVELOPE;
    mine.preference = 7;
    mine.amplitude_offset = 0.25f;
    mine.rated_level = 0.5f;
    mine.kick_level = 1.0f;
    mine.kick_max_ns = 30000000;
    mine.max_continuous_ns = 5000000000ull;
    mine.rest_ns = 20000000;
    snprintf(mine.physical_id, sizeof mine.physical_id, "fixture:physical");
    mine.period_step_ns = 2000000;
    uint32_t host_size = info->struct_size;
    memcpy(info, &mine, host_size < sizeof mine ? host_size : sizeof mine);
    info->struct_size = host_size;
    return 0;
}
#endif

#ifdef FIXTURE_FUTURE
FIXTURE_FN int later(void *instance) { (void)instance; return 0; }
#endif

#ifndef FIXTURE_NO_ENTRY
int haptics_backend_fill_v1(const haptics_host_v1 *host, haptics_backend_v1 *out, size_t out_size) {
    if (out_size < FIXTURE_MIN_SIZE) return -EINVAL;
#ifdef FIXTURE_INIT_FAILS
    host->log(host->context, HAPTICS_LOG_ERROR, "fixture: no hardware found on /dev/fixture0");
    return -ENODEV;
#endif
#ifdef FIXTURE_NEEDS_DEP
    if (fixture_dep_answer() != 42) return -EIO;
#endif
    FIXTURE_TABLE table;
    memset(&table, 0, sizeof table);
    haptics_backend_v1 *filled = (haptics_backend_v1 *)&table;
    filled->abi_version = HAPTICS_ABI_VERSION;
    filled->struct_size = sizeof table;
    snprintf(filled->name, sizeof filled->name, "%s", FIXTURE_NAME);
    filled->enumerate = enumerate;
    filled->open = open_device;
    filled->close = close_device;
    filled->wake = wake;
    filled->sleep = sleep_device;
    filled->submit = submit;
    filled->stop = stop;
    filled->last_error = last_error;
    filled->destroy = destroy;
    filled->instance = (void *)host;
#ifndef FIXTURE_ABI_1_0
    filled->describe = describe;
#endif
#ifdef FIXTURE_FUTURE
    table.later = later;
#endif
#ifdef FIXTURE_BAD_ABI
    filled->abi_version = 2;
#endif
#ifdef FIXTURE_SHORT_TABLE
    filled->struct_size = 16;
#endif
#ifdef FIXTURE_MISSING_SUBMIT
    filled->submit = NULL;
#endif
    memcpy(out, &table, out_size < sizeof table ? out_size : sizeof table);
    return 0;
}
#else
int haptics_backend_fill_v2(void) { return 0; }
#endif
