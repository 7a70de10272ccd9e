/*
 * haptics-play: plays a vocabulary effect through hapticsd, from C with sd-bus (libsystemd).
 *
 *   cc -o haptics-play haptics-play.c $(pkg-config --cflags --libs libsystemd)
 *   ./haptics-play                          list the devices, then play impact.medium on the default device
 *   ./haptics-play EFFECT [INTENSITY] [DEVICE]
 *
 * It waits for hapticsd's Ended signal (sent to this client only) and prints its reason.
 * Exit status: 0 when the effect played, 1 on an error (printed with its D-Bus error name).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define BUS_NAME "org.swifthaptics.Haptics1"
#define PATH "/org/swifthaptics/Haptics1"
#define INTERFACE "org.swifthaptics.Haptics1"

struct wait_for_end {
    const char *player;
    char reason[64];
    int ended;
};

static int on_ended(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    struct wait_for_end *wait = userdata;
    const char *player = NULL, *reason = NULL;
    (void)error;
    if (sd_bus_message_read(message, "os", &player, &reason) < 0)
        return 0;
    if (strcmp(player, wait->player) == 0) {
        snprintf(wait->reason, sizeof wait->reason, "%s", reason);
        wait->ended = 1;
    }
    return 0;
}

/* Prints every device: id, name, and whether it is the default one. */
static int list_devices(sd_bus *bus) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus, BUS_NAME, PATH, INTERFACE, "ListDevices", &error, &reply, "");
    if (r < 0) {
        fprintf(stderr, "error: %s: %s\n", error.name, error.message);
        sd_bus_error_free(&error);
        return r;
    }
    r = sd_bus_message_enter_container(reply, 'a', "(sa{sv})");
    while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "sa{sv}")) > 0) {
        const char *id = NULL, *name = "";
        int is_default = 0;
        sd_bus_message_read(reply, "s", &id);
        sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
            const char *key = NULL;
            sd_bus_message_read(reply, "s", &key);
            if (strcmp(key, "name") == 0)
                sd_bus_message_read(reply, "v", "s", &name);
            else if (strcmp(key, "default") == 0)
                sd_bus_message_read(reply, "v", "b", &is_default);
            else
                sd_bus_message_skip(reply, "v");
            sd_bus_message_exit_container(reply);
        }
        sd_bus_message_exit_container(reply);
        sd_bus_message_exit_container(reply);
        printf("%s: %s%s\n", id, name, is_default ? " [default]" : "");
    }
    sd_bus_message_unref(reply);
    return r < 0 ? r : 0;
}

int main(int argc, char **argv) {
    const char *effect = argc > 1 ? argv[1] : "impact.medium";
    double intensity = argc > 2 ? strtod(argv[2], NULL) : 1.0;
    const char *device = argc > 3 ? argv[3] : "";
    sd_bus *bus = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    struct wait_for_end wait = {0};
    const char *player = NULL, *disposition = NULL;
    int status = 1;

    int r = sd_bus_open_user(&bus);
    if (r < 0) {
        fprintf(stderr, "error: cannot connect to the session bus: %s\n", strerror(-r));
        return 1;
    }
    if (argc == 1 && list_devices(bus) < 0)
        goto out;
    /* Ended comes to this connection only: match it before playing, so it cannot be missed. */
    r = sd_bus_match_signal(bus, NULL, NULL, PATH, INTERFACE, "Ended", on_ended, &wait);
    if (r < 0) {
        fprintf(stderr, "error: cannot match Ended: %s\n", strerror(-r));
        goto out;
    }
    r = sd_bus_call_method(bus, BUS_NAME, PATH, INTERFACE, "PlayEffect", &error, &reply, "sssd",
                           "org.swifthaptics.examples.C", device, effect, intensity);
    if (r < 0) {
        fprintf(stderr, "error: %s: %s\n", error.name, error.message);
        goto out;
    }
    if (sd_bus_message_read(reply, "os", &player, &disposition) < 0)
        goto out;
    printf("%s: %s as %s\n", effect, disposition, player);
    fflush(stdout);
    if (strcmp(player, "/") != 0) {
        wait.player = player;
        while (!wait.ended) {
            r = sd_bus_process(bus, NULL);
            if (r < 0)
                goto out;
            if (r == 0 && sd_bus_wait(bus, 5 * 1000000ULL) <= 0) {
                fprintf(stderr, "error: no Ended signal within 5 s\n");
                goto out;
            }
        }
        printf("ended: %s\n", wait.reason);
    }
    status = 0;
out:
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    sd_bus_flush_close_unref(bus);
    return status;
}
