/*
 * gpio_stop_guard.c: see gpio_stop_guard.h. Everything reachable from the signal handler is
 * async-signal-safe: C11 atomics on a static table, open/write/close, clock_gettime, syscall(gettid),
 * one GPIO ioctl through gpiod_shim_set_values, sigaction and raise.
 */
#define _GNU_SOURCE
#include "gpio_stop_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { SLOT_FREE = 0, SLOT_FILLING = 1, SLOT_ARMED = 2, SLOT_STOPPING = 3 };

struct slot {
    _Atomic int state;
    /* The thread id of a thread in a write section, 0 when none. */
    _Atomic long writer;
    gpiod_shim_request *lines;
    int stopped_values[GPIOD_SHIM_MAX_LINES];
    int lines_first;
    size_t write_count;
    char paths[GPIO_STOP_GUARD_MAX_WRITES][GPIO_STOP_GUARD_PATH_SIZE];
    char values[GPIO_STOP_GUARD_MAX_WRITES][GPIO_STOP_GUARD_VALUE_SIZE];
};

static struct slot slots[GPIO_STOP_GUARD_MAX_SLOTS];
static _Atomic int halted;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static struct sigaction previous_int, previous_term;
static _Atomic int have_previous_int, have_previous_term;

static long current_thread(void)
{
    return (long)syscall(SYS_gettid);
}

static long long now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void write_attribute(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t length = strlen(value);
    while (write(fd, value, length) < 0 && errno == EINTR) {
    }
    close(fd);
}

static void run_stop_sequence(struct slot *slot)
{
    if (slot->lines && slot->lines_first)
        gpiod_shim_set_values(slot->lines, slot->stopped_values);
    for (size_t i = 0; i < slot->write_count; i++)
        write_attribute(slot->paths[i], slot->values[i]);
    if (slot->lines && !slot->lines_first)
        gpiod_shim_set_values(slot->lines, slot->stopped_values);
}

/* Stops every armed slot; safe in a signal handler and at exit. */
static void stop_all(void)
{
    int saved_errno = errno;
    atomic_store(&halted, 1);
    long me = current_thread();
    for (int i = 0; i < GPIO_STOP_GUARD_MAX_SLOTS; i++) {
        struct slot *slot = &slots[i];
        int expected = SLOT_ARMED;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_STOPPING))
            continue;
        /* A thread in a write section finishes it (it cannot start another: halted is set). The
         * section of the thread this handler interrupted never resumes before the process dies. */
        long long deadline = now_ns() + 200000000LL;
        for (;;) {
            long writer = atomic_load(&slot->writer);
            if (writer == 0 || writer == me || now_ns() >= deadline)
                break;
        }
        run_stop_sequence(slot);
        atomic_store(&slot->state, SLOT_ARMED);
    }
    errno = saved_errno;
}

static void on_signal(int signal_number, siginfo_t *info, void *context)
{
    stop_all();
    const struct sigaction *previous = signal_number == SIGINT ? &previous_int : &previous_term;
    int have_previous = atomic_load(signal_number == SIGINT ? &have_previous_int : &have_previous_term);
    if (have_previous && (previous->sa_flags & SA_SIGINFO) && previous->sa_sigaction) {
        atomic_store(&halted, 0);
        previous->sa_sigaction(signal_number, info, context);
        return;
    }
    if (have_previous && !(previous->sa_flags & SA_SIGINFO) && previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        atomic_store(&halted, 0);
        previous->sa_handler(signal_number);
        return;
    }
    /* The default action: restore it and raise again. The signal is blocked while this handler
     * runs, so it is delivered (and kills the process) as soon as the handler returns. */
    struct sigaction default_action;
    memset(&default_action, 0, sizeof(default_action));
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(signal_number, &default_action, NULL);
    raise(signal_number);
}

static void on_exit_hook(void)
{
    stop_all();
}

static void install_handler(int signal_number, struct sigaction *previous, _Atomic int *have_previous)
{
    struct sigaction current;
    if (sigaction(signal_number, NULL, &current) != 0)
        return;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)
        return; /* The process ignores it: leave it so. */
    *previous = current;
    atomic_store(have_previous, 1);
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    sigaction(signal_number, &action, NULL);
}

static void install(void)
{
    install_handler(SIGINT, &previous_int, &have_previous_int);
    install_handler(SIGTERM, &previous_term, &have_previous_term);
    atexit(on_exit_hook);
}

int gpio_stop_guard_register(gpiod_shim_request *lines, const int *stopped_values, int lines_first, const char *const *paths,
                             const char *const *values, size_t write_count)
{
    if (write_count > GPIO_STOP_GUARD_MAX_WRITES || (write_count > 0 && (!paths || !values)) ||
        (lines && (!stopped_values || gpiod_shim_line_count(lines) > GPIOD_SHIM_MAX_LINES)))
        return -EINVAL;
    for (size_t i = 0; i < write_count; i++) {
        if (strlen(paths[i]) >= GPIO_STOP_GUARD_PATH_SIZE || strlen(values[i]) >= GPIO_STOP_GUARD_VALUE_SIZE)
            return -ENAMETOOLONG;
    }
    pthread_once(&install_once, install);
    for (int index = 0; index < GPIO_STOP_GUARD_MAX_SLOTS; index++) {
        struct slot *slot = &slots[index];
        int expected = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_FILLING))
            continue;
        slot->lines = lines;
        memset(slot->stopped_values, 0, sizeof(slot->stopped_values));
        if (lines) {
            for (size_t i = 0; i < gpiod_shim_line_count(lines); i++)
                slot->stopped_values[i] = stopped_values[i];
        }
        slot->lines_first = lines_first;
        slot->write_count = write_count;
        for (size_t i = 0; i < write_count; i++) {
            strcpy(slot->paths[i], paths[i]);
            strcpy(slot->values[i], values[i]);
        }
        atomic_store(&slot->writer, 0);
        atomic_store(&slot->state, SLOT_ARMED);
        return index;
    }
    return -ENOSPC;
}

void gpio_stop_guard_unregister(int index)
{
    if (index < 0 || index >= GPIO_STOP_GUARD_MAX_SLOTS)
        return;
    struct slot *slot = &slots[index];
    for (;;) {
        int expected = SLOT_ARMED;
        if (atomic_compare_exchange_strong(&slot->state, &expected, SLOT_FREE))
            return;
        if (expected != SLOT_STOPPING)
            return; /* not registered */
        sched_yield(); /* a stop sequence runs on another thread: let it finish */
    }
}

int gpio_stop_guard_enter(int index)
{
    if (index < 0 || index >= GPIO_STOP_GUARD_MAX_SLOTS)
        return atomic_load(&halted) ? -ESHUTDOWN : 0;
    struct slot *slot = &slots[index];
    long me = current_thread();
    for (;;) {
        long expected = 0;
        if (atomic_compare_exchange_strong(&slot->writer, &expected, me))
            break;
        sched_yield(); /* another thread writes to this actuator (its owner serialises, so rare) */
    }
    if (atomic_load(&halted)) {
        atomic_store(&slot->writer, 0);
        return -ESHUTDOWN;
    }
    return 0;
}

void gpio_stop_guard_leave(int index)
{
    if (index < 0 || index >= GPIO_STOP_GUARD_MAX_SLOTS)
        return;
    atomic_store(&slots[index].writer, 0);
}
