/*
 * abi_host.c: a minimal host of the backend ABI, written in C, for the tests that prove appended
 * fields keep the version in both directions.
 *
 * Built against Tests/Fixtures/abi/haptics_backend_1_0.h (-DHOST_ABI_1_0) it is a host of ABI 1.0:
 * it passes the 1.0 table size to the entry point and knows nothing of `describe`. Built against
 * the live header it is a host of a *later* 1.x: it passes a table larger than today's and
 * `describe` structs both larger (a later host) and smaller (an earlier 1.1 host) than today's,
 * with canary bytes after what the plugin may write.
 *
 * usage: abi_host PLUGIN.so DEVICE_ID
 * Loads the plugin, lists its devices, opens DEVICE_ID, wakes it, submits one frame, stops,
 * sleeps, closes and destroys; prints one line per step; exits 0 when every step succeeded
 * and the plugin wrote nothing outside what the host gave it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HOST_ABI_1_0
#include "haptics_backend_1_0.h"
#else
#include "haptics_backend.h"
#endif

#define CANARY 0xA5
#define SLACK 64

static const char *config(void *context, const char *key) { (void)context; (void)key; return NULL; }
static void log_line(void *context, int32_t level, const char *message) { (void)context; fprintf(stderr, "plugin log %d: %s\n", level, message); }
static void notify(void *context, uint32_t event, const char *id) { (void)context; (void)event; (void)id; }

static int untouched(const unsigned char *bytes, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (bytes[i] != CANARY) return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: abi_host PLUGIN.so DEVICE_ID\n"); return 2; }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    haptics_backend_fill_v1_fn fill = (haptics_backend_fill_v1_fn)dlsym(library, HAPTICS_BACKEND_ENTRY);
    if (!fill) { printf("no entry point\n"); return 1; }

    haptics_host_v1 host;
    memset(&host, 0, sizeof host);
    host.abi_version = HAPTICS_ABI_VERSION;
    host.struct_size = sizeof host;
    host.get_config = config;
    host.log = log_line;
    host.notify = notify;

    /* The table the host owns: its own size, then canaries the plugin must leave alone. */
#ifdef HOST_ABI_1_0
    size_t table_size = sizeof(haptics_backend_v1);
#else
    size_t table_size = sizeof(haptics_backend_v1) + 16; /* a later 1.x host: two more pointers */
#endif
    unsigned char *storage = malloc(table_size + SLACK);
    memset(storage, 0, table_size);
    memset(storage + table_size, CANARY, SLACK);
    haptics_backend_v1 *table = (haptics_backend_v1 *)storage;
    int rc = fill(&host, table, table_size);
    printf("fill: %d, abi %u, struct_size %u (host table %zu)\n", rc, table->abi_version, table->struct_size, table_size);
    if (rc != 0 || table->abi_version != HAPTICS_ABI_VERSION) return 1;
    if (!untouched(storage + table_size, SLACK)) { printf("the plugin wrote past the host's table\n"); return 1; }
    if (!table->enumerate || !table->open || !table->close || !table->wake || !table->sleep || !table->submit || !table->stop
        || !table->last_error || !table->destroy) { printf("a required function is missing\n"); return 1; }

    uint32_t count = 0;
    haptics_device_v1 devices[8];
    rc = table->enumerate(table->instance, devices, 8, &count);
    printf("enumerate: %d, %u device(s)\n", rc, count);
    if (rc != 0) return 1;
    int found = -1;
    for (uint32_t i = 0; i < count && i < 8; i++) {
        printf("device %s: %s, %u channel(s)\n", devices[i].id, devices[i].name, devices[i].channel_count);
        if (strcmp(devices[i].id, argv[2]) == 0) found = (int)i;
    }
    if (found < 0) { printf("no device %s\n", argv[2]); return 1; }

#ifndef HOST_ABI_1_0
    /* describe, when the plugin's table holds it: through a larger struct (a later host) and a
     * smaller one (an earlier 1.1 host that ended at rest_ns); canaries after each. */
    if (table->struct_size >= HAPTICS_BACKEND_V1_MIN_SIZE + sizeof(void *) && table->describe) {
        size_t sizes[2] = {sizeof(haptics_device_info_v1) + 32, offsetof(haptics_device_info_v1, physical_id)};
        for (int i = 0; i < 2; i++) {
            unsigned char *info_storage = malloc(sizes[i] + SLACK);
            memset(info_storage, 0, sizes[i]);
            memset(info_storage + sizes[i], CANARY, SLACK);
            haptics_device_info_v1 *info = (haptics_device_info_v1 *)info_storage;
            info->struct_size = (uint32_t)sizes[i];
            rc = table->describe(table->instance, argv[2], info);
            printf("describe (%zu bytes): %d, struct_size %u, flags %u, preference %d, rated %.2f\n", sizes[i], rc, info->struct_size,
                   info->flags, info->preference, info->rated_level);
            if (sizes[i] > offsetof(haptics_device_info_v1, physical_id)) printf("physical id: '%s'\n", info->physical_id);
            int bad = rc != 0 || info->struct_size != sizes[i] || !untouched(info_storage + sizes[i], SLACK);
            if (sizes[i] > sizeof(haptics_device_info_v1) && !bad) {
                for (size_t b = sizeof(haptics_device_info_v1); b < sizes[i]; b++)
                    if (info_storage[b] != 0) bad = 1; /* fields the plugin does not know stay zero */
            }
            free(info_storage);
            if (bad) { printf("describe wrote outside the host's struct or failed\n"); return 1; }
        }
    } else {
        printf("describe: not offered\n");
    }
#endif

    void *device = NULL;
    rc = table->open(table->instance, argv[2], &device);
    printf("open: %d\n", rc);
    if (rc != 0) return 1;
    haptics_frame_v1 frame;
    memset(&frame, 0, sizeof frame);
    frame.channel_count = devices[found].channel_count;
    frame.channels[0].amplitude = 0.5f;
    int steps[4];
    steps[0] = table->wake(device);
    steps[1] = table->submit(device, &frame);
    steps[2] = table->stop(device);
    steps[3] = table->sleep(device);
    printf("wake %d, submit %d, stop %d, sleep %d\n", steps[0], steps[1], steps[2], steps[3]);
    table->close(device);
    table->destroy(table->instance);
    printf("closed and destroyed\n");
    free(storage);
    return steps[0] || steps[1] || steps[2] || steps[3];
}
