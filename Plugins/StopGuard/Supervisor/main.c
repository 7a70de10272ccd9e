/*
 * haptics-stop-guard: stops a process's actuators once the process is gone, by whatever cause
 * (SIGKILL, the OOM killer, a crash its handlers could not see). Started by the stop guard
 * (haptics_stop_guard.h) at a process's first registration, never by hand:
 *
 *     haptics-stop-guard --supervise VERSION PID
 *
 * with its socket to the process on descriptor 3, the process's stop table (a memfd) on 4 and,
 * where the kernel has pidfds, the process's pidfd on 5. It
 *   1. forks and lets the started process exit (the process reaps it: the supervisor is nobody's
 *      child there), leaves the process group and session (a terminal's Ctrl-C, Ctrl-Z or hang-up
 *      reaches the process, not its supervisor) and ignores the job-control and termination signals
 *      a group or a shell may still send;
 *   2. closes every other descriptor, so it holds nothing the process or a later owner needs (no
 *      line request, no PWM lock, no hidraw node), and maps the table, checking its magic, version,
 *      size and owner; answers "R <pid>" (ready) or "E <reason>" on the socket;
 *   3. sleeps until the socket hangs up or the pidfd says the process ended, then waits (at most 2 s)
 *      until the pidfd confirms the process is entirely gone, so its line requests and PWM locks
 *      are released;
 *   4. applies every stop program still registered (see stop_table.h), GPIO actuators first (they
 *      are fast), then rumble reports, and exits.
 * It prints only problems, and one line per actuator the process left registered without stopping
 * it itself (the process was killed), to the process's standard error.
 */
#define _GNU_SOURCE
#include "../Library/stop_table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long to wait for the dead process's resources: its pidfd, its line requests, its locks. */
#define GONE_TIMEOUT_MS 2000
#define RELEASE_TIMEOUT_NS 1000000000LL

static int owner;
static int have_pidfd;

static void say(const char *format, ...)
{
    char text[1024];
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(text, sizeof(text) - 1, format, arguments);
    va_end(arguments);
    if (length < 0)
        return;
    if ((size_t)length > sizeof(text) - 2)
        length = (int)sizeof(text) - 2;
    text[length++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, text, (size_t)length);
    (void)ignored;
}

static void answer(const char *format, ...)
{
    char text[512];
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(text, sizeof(text), format, arguments);
    va_end(arguments);
    if (length > 0)
        send(HAPTICS_STOP_SOCKET_FD, text, (size_t)length < sizeof(text) ? (size_t)length : sizeof(text) - 1, MSG_NOSIGNAL);
}

static long long now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void pause_ms(int milliseconds)
{
    struct timespec pause = {milliseconds / 1000, (long)(milliseconds % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

static void close_other_descriptors(void)
{
    int first = HAPTICS_STOP_PIDFD_FD + 1;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned int)first, ~0U, 0) == 0)
        return;
#endif
    DIR *directory = opendir("/proc/self/fd");
    if (!directory)
        return;
    int own = dirfd(directory);
    struct dirent *entry;
    while ((entry = readdir(directory))) {
        int fd = atoi(entry->d_name);
        if (fd >= first && fd != own)
            close(fd);
    }
    closedir(directory);
}

/* Waits until the process is gone: the socket hangs up (every copy of its end closed) or its pidfd
 * reports it ended. */
static void wait_for_the_end(void)
{
    struct pollfd watched[2] = {{HAPTICS_STOP_SOCKET_FD, POLLIN, 0}, {HAPTICS_STOP_PIDFD_FD, POLLIN, 0}};
    for (;;) {
        int ready = poll(watched, have_pidfd ? 2 : 1, -1);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (have_pidfd && watched[1].revents)
            return;
        if (watched[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            return;
        if (watched[0].revents & POLLIN) {
            char ignored[64];
            ssize_t got = recv(HAPTICS_STOP_SOCKET_FD, ignored, sizeof(ignored), MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
                return;
        }
    }
}

/* The socket closes while the kernel tears the process down; the pidfd reports it once the whole
 * process is gone, its descriptors (line requests, locks) closed. */
static void wait_until_released(void)
{
    if (!have_pidfd)
        return;
    struct pollfd gone = {HAPTICS_STOP_PIDFD_FD, POLLIN, 0};
    long long deadline = now_ns() + (long long)GONE_TIMEOUT_MS * 1000000LL;
    while (now_ns() < deadline) {
        int ready = poll(&gone, 1, (int)((deadline - now_ns()) / 1000000LL) + 1);
        if (ready > 0 || (ready < 0 && errno != EINTR))
            return;
    }
}

/* Requests `slot`'s lines as outputs at their inactive level, then releases them (most GPIO drivers
 * keep the level; a pull-down keeps the others off). Retries while the dead process's request is
 * still held. Returns 0 or a negative errno. */
static int request_lines_inactive(const struct haptics_stop_slot *slot)
{
    int chip = open(slot->chip, O_RDWR | O_CLOEXEC);
    if (chip < 0)
        return -errno;
    long long deadline = now_ns() + RELEASE_TIMEOUT_NS;
    int result;
    for (;;) {
        result = 0;
#ifdef GPIO_V2_GET_LINE_IOCTL
        struct gpio_v2_line_request request;
        memset(&request, 0, sizeof(request));
        uint64_t values = 0;
        for (uint32_t i = 0; i < slot->line_count; i++) {
            request.offsets[i] = slot->offsets[i];
            if (slot->inactive[i])
                values |= 1ULL << i;
        }
        request.num_lines = slot->line_count;
        snprintf(request.consumer, sizeof(request.consumer), "haptics-stop-guard");
        request.config.flags = GPIO_V2_LINE_FLAG_OUTPUT;
        request.config.num_attrs = 1;
        request.config.attrs[0].attr.id = GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES;
        request.config.attrs[0].attr.values = values;
        request.config.attrs[0].mask = (1ULL << slot->line_count) - 1;
        if (ioctl(chip, GPIO_V2_GET_LINE_IOCTL, &request) == 0) {
            close(request.fd);
            break;
        }
        result = -errno;
        if (result == -ENOTTY || result == -EINVAL) {
            /* A kernel without the v2 uAPI (before 5.10): the v1 line handle. */
            struct gpiohandle_request handle;
            memset(&handle, 0, sizeof(handle));
            for (uint32_t i = 0; i < slot->line_count; i++) {
                handle.lineoffsets[i] = slot->offsets[i];
                handle.default_values[i] = slot->inactive[i];
            }
            handle.lines = slot->line_count;
            handle.flags = GPIOHANDLE_REQUEST_OUTPUT;
            snprintf(handle.consumer_label, sizeof(handle.consumer_label), "haptics-stop-guard");
            if (ioctl(chip, GPIO_GET_LINEHANDLE_IOCTL, &handle) == 0) {
                close(handle.fd);
                result = 0;
                break;
            }
            result = -errno;
        }
#else
        struct gpiohandle_request handle;
        memset(&handle, 0, sizeof(handle));
        for (uint32_t i = 0; i < slot->line_count; i++) {
            handle.lineoffsets[i] = slot->offsets[i];
            handle.default_values[i] = slot->inactive[i];
        }
        handle.lines = slot->line_count;
        handle.flags = GPIOHANDLE_REQUEST_OUTPUT;
        snprintf(handle.consumer_label, sizeof(handle.consumer_label), "haptics-stop-guard");
        if (ioctl(chip, GPIO_GET_LINEHANDLE_IOCTL, &handle) == 0) {
            close(handle.fd);
            break;
        }
        result = -errno;
#endif
        if (result != -EBUSY || now_ns() >= deadline)
            break;
        pause_ms(1);
    }
    close(chip);
    return result;
}

/* Takes the slot's locks; 0, or -EWOULDBLOCK when a live process holds one (a new owner). A lock
 * directory that is gone (the channel was unexported) needs no lock. */
static int take_locks(const struct haptics_stop_slot *slot, int *fds)
{
    for (uint32_t i = 0; i < slot->lock_count && i < HAPTICS_STOP_MAX_LOCKS; i++) {
        fds[i] = open(slot->lock_path[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fds[i] < 0)
            continue;
        long long deadline = now_ns() + RELEASE_TIMEOUT_NS;
        while (flock(fds[i], LOCK_EX | LOCK_NB) != 0) {
            if ((errno != EWOULDBLOCK && errno != EINTR) || now_ns() >= deadline) {
                say("haptics-stop-guard: %s: %s is locked by another process, which owns the actuator now; left alone", slot->label,
                    slot->lock_path[i]);
                return -EWOULDBLOCK;
            }
            pause_ms(1);
        }
    }
    return 0;
}

static int apply_lines(const struct haptics_stop_slot *slot)
{
    if (slot->line_count == 0)
        return 1;
    int result = request_lines_inactive(slot);
    if (result == 0)
        return 1;
    say("haptics-stop-guard: %s: cannot set the lines of %s inactive: %s", slot->label, slot->chip, strerror(-result));
    return 0;
}

/* Writes a driver IC's stop on I²C, if its bus is still the same device. EBUSY: a kernel driver
 * bound the chip meanwhile and owns it now; left alone. */
static int apply_i2c(const struct haptics_stop_slot *slot)
{
    if (slot->i2c_count == 0)
        return 1;
    int fd = haptics_stop_open_i2c(slot->i2c_node, slot->i2c_address);
    if (fd < 0) {
        if (fd == -ENOENT || fd == -ENODEV || fd == -ENXIO)
            return 1; /* the bus went away (an adapter unplugged): nothing drives */
        say("haptics-stop-guard: %s: cannot address %#x on %s: %s", slot->label, slot->i2c_address, slot->i2c_node, strerror(-fd));
        return 0;
    }
    struct stat status;
    if (fstat(fd, &status) != 0 || (uint64_t)status.st_rdev != slot->i2c_device) {
        close(fd);
        return 1;
    }
    int result = haptics_stop_write_i2c(fd, slot);
    close(fd);
    /* No acknowledge from a chip whose EN line is in the program: it is shut down (idle), and the
     * line going low keeps it so. */
    if ((result == -ENXIO || result == -EREMOTEIO) && slot->line_count > 0)
        return 1;
    if (result != 0)
        say("haptics-stop-guard: %s: cannot write the stop to %#x on %s: %s", slot->label, slot->i2c_address, slot->i2c_node,
            strerror(-result));
    return result == 0;
}

/* Applies one GPIO/PWM/I2C stop program. Returns 1 when every step succeeded. */
static int apply_gpio(const struct haptics_stop_slot *slot)
{
    int locks[HAPTICS_STOP_MAX_LOCKS] = {-1, -1};
    int ok = apply_i2c(slot);
    if (take_locks(slot, locks) == 0) {
        if (slot->lines_first && !apply_lines(slot))
            ok = 0;
        for (uint32_t i = 0; i < slot->write_count && i < HAPTICS_STOP_MAX_WRITES; i++) {
            int result = haptics_stop_write_attribute(slot->write_path[i], slot->write_value[i]);
            if (result == -ENOENT)
                continue; /* the channel was unexported: it was stopped first */
            if (result != 0) {
                say("haptics-stop-guard: %s: cannot write \"%s\" to %s: %s", slot->label, slot->write_value[i], slot->write_path[i],
                    strerror(-result));
                ok = 0;
            }
        }
        if (!slot->lines_first && !apply_lines(slot))
            ok = 0;
    } else {
        ok = 0;
    }
    for (int i = 0; i < HAPTICS_STOP_MAX_LOCKS; i++) {
        if (locks[i] >= 0)
            close(locks[i]);
    }
    return ok;
}

/* Writes a controller's current "motors off" report to its node, if the node is still that device. */
static int apply_report(const struct haptics_stop_slot *slot)
{
    int fd = open(slot->node, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT && errno != ENODEV && errno != ENXIO)
            say("haptics-stop-guard: %s: cannot open %s: %s", slot->label, slot->node, strerror(errno));
        return errno == ENOENT || errno == ENODEV || errno == ENXIO; /* unplugged: nothing rumbles */
    }
    struct stat status;
    if (fstat(fd, &status) != 0 || (uint64_t)status.st_rdev != slot->node_device || (uint64_t)status.st_ino != slot->node_inode) {
        close(fd);
        return 1; /* the node now belongs to another device: the controller was unplugged */
    }
    uint32_t index = atomic_load(&slot->report_index) & 1;
    size_t length = slot->report_length[index];
    ssize_t written;
    do {
        written = write(fd, slot->report[index], length);
    } while (written < 0 && errno == EINTR);
    int ok = written == (ssize_t)length;
    if (!ok)
        say("haptics-stop-guard: %s: cannot write the motors-off report to %s: %s", slot->label, slot->node,
            written < 0 ? strerror(errno) : "short write");
    close(fd);
    return ok;
}

static void apply_all(struct haptics_stop_table *table)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < HAPTICS_STOP_MAX_SLOTS; i++) {
            const struct haptics_stop_slot *slot = &table->slots[i];
            uint32_t state = atomic_load(&slot->state);
            if (state != HAPTICS_STOP_SLOT_ARMED && state != HAPTICS_STOP_SLOT_STOPPING)
                continue;
            if ((pass == 0) != !slot->has_report)
                continue;
            int ok = slot->has_report ? apply_report(slot) : apply_gpio(slot);
            if (ok && atomic_load(&slot->stopped_by_owner) != 1)
                say("haptics-stop-guard: process %d ended without stopping %s; stopped it", owner, slot->label);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 4 || strcmp(argv[1], "--supervise") != 0) {
        fprintf(stderr,
                "haptics-stop-guard stops a process's haptic actuators when the process ends; the haptics plugins start it.\n"
                "usage: haptics-stop-guard --supervise VERSION PID (descriptors 3: socket, 4: table, 5: pidfd)\n");
        return 2;
    }
    owner = atoi(argv[3]);
    static const int ignored[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM};
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
        signal(ignored[i], SIG_IGN);
    if ((unsigned int)atoi(argv[2]) != HAPTICS_STOP_TABLE_VERSION) {
        answer("E table version %s, this supervisor knows version %u (a supervisor from another build)", argv[2], HAPTICS_STOP_TABLE_VERSION);
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        answer("E fork: %s", strerror(errno));
        return 1;
    }
    if (child > 0)
        _exit(0);
    setsid();
    if (chdir("/") != 0) {
        /* stays where it was started: harmless */
    }
    close_other_descriptors();
    have_pidfd = fcntl(HAPTICS_STOP_PIDFD_FD, F_GETFD) >= 0;

    struct stat status;
    if (fstat(HAPTICS_STOP_TABLE_FD, &status) != 0 || (size_t)status.st_size != sizeof(struct haptics_stop_table)) {
        answer("E the table is %lld bytes, expected %zu", (long long)status.st_size, sizeof(struct haptics_stop_table));
        return 1;
    }
    struct haptics_stop_table *table =
        mmap(NULL, sizeof(struct haptics_stop_table), PROT_READ, MAP_SHARED, HAPTICS_STOP_TABLE_FD, 0);
    if (table == MAP_FAILED) {
        answer("E cannot map the table: %s", strerror(errno));
        return 1;
    }
    close(HAPTICS_STOP_TABLE_FD);
    if (table->magic != HAPTICS_STOP_TABLE_MAGIC || table->version != HAPTICS_STOP_TABLE_VERSION ||
        table->size != sizeof(struct haptics_stop_table) || table->owner != owner) {
        answer("E the table's header does not match (magic %#x, version %u, size %u, owner %d)", table->magic, table->version,
               table->size, table->owner);
        return 1;
    }
    answer("R %d", (int)getpid());

    wait_for_the_end();
    wait_until_released();
    apply_all(table);
    return 0;
}
