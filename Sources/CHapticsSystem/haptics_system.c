#define _GNU_SOURCE
#include "haptics_system.h"
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <errno.h>
#include <malloc.h>
#include <time.h>
#include <unistd.h>

int haptics_tune_scheduler_thread(const char *name, int realtime, int priority) {
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = '\0';
    pthread_setname_np(pthread_self(), short_name);
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    if (!realtime) return 0;
    struct sched_param param = { .sched_priority = priority };
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
}

const char *haptics_secure_getenv(const char *name) {
    return secure_getenv(name);
}

int haptics_timerfd_create(void)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int haptics_timerfd_arm(int fd, uint64_t deadline_ns)
{
    struct itimerspec value;
    memset(&value, 0, sizeof(value));
    if (deadline_ns != UINT64_MAX) {
        uint64_t time = deadline_ns == 0 ? 1 : deadline_ns;
        value.it_value.tv_sec = (time_t)(time / 1000000000u);
        value.it_value.tv_nsec = (long)(time % 1000000000u);
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &value, NULL) == 0 ? 0 : -errno;
}

int64_t haptics_timerfd_wait(int fd)
{
    uint64_t expirations = 0;
    for (;;) {
        ssize_t got = read(fd, &expirations, sizeof(expirations));
        if (got == (ssize_t)sizeof(expirations))
            return (int64_t)expirations;
        if (got < 0 && errno == EINTR)
            continue;
        return got < 0 ? -errno : -EIO;
    }
}

int haptics_malloc_trim(void) {
    return malloc_trim(0);
}

int haptics_malloc_fix_mmap_threshold(size_t bytes) {
    return mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1 ? 0 : -EINVAL;
}

int haptics_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)gettid(), nice) == 0 ? 0 : -errno;
}
