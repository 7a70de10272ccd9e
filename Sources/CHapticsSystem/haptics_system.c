#define _GNU_SOURCE
#include "haptics_system.h"
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

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
