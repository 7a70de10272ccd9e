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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "haptics_backend.h"

#ifdef FIXTURE_NEEDS_DEP
int fixture_dep_answer(void);
#endif

struct device { float amplitude; };

/* The no-entry variant references none of these. */
#define FIXTURE_FN static __attribute__((unused))

FIXTURE_FN int enumerate(void *instance, haptics_device_v1 *devices, uint32_t capacity, uint32_t *count) {
    (void)instance;
    *count = 1;
    if (capacity < 1 || devices == NULL) return 0;
    memset(&devices[0], 0, sizeof devices[0]);
    snprintf(devices[0].id, sizeof devices[0].id, "fixture:c");
    snprintf(devices[0].name, sizeof devices[0].name, "C fixture device");
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

#ifndef FIXTURE_NO_ENTRY
int haptics_backend_fill_v1(const haptics_host_v1 *host, haptics_backend_v1 *out, size_t out_size) {
    if (out_size < sizeof *out) return -EINVAL;
#ifdef FIXTURE_INIT_FAILS
    host->log(host->context, HAPTICS_LOG_ERROR, "fixture: no hardware found on /dev/fixture0");
    return -ENODEV;
#else
    (void)host;
#endif
#ifdef FIXTURE_NEEDS_DEP
    if (fixture_dep_answer() != 42) return -EIO;
#endif
    memset(out, 0, out_size);
    out->abi_version = HAPTICS_ABI_VERSION;
    out->struct_size = sizeof *out;
    snprintf(out->name, sizeof out->name, "%s", FIXTURE_NAME);
    out->enumerate = enumerate;
    out->open = open_device;
    out->close = close_device;
    out->wake = wake;
    out->sleep = sleep_device;
    out->submit = submit;
    out->stop = stop;
    out->last_error = last_error;
    out->destroy = destroy;
#ifdef FIXTURE_BAD_ABI
    out->abi_version = 2;
#endif
#ifdef FIXTURE_SHORT_TABLE
    out->struct_size = 16;
#endif
#ifdef FIXTURE_MISSING_SUBMIT
    out->submit = NULL;
#endif
    return 0;
}
#else
int haptics_backend_fill_v2(void) { return 0; }
#endif
