/*
 * stop_guard.c: see haptics_stop_guard.h.
 *
 * Everything reachable from the signal handler and the atexit hook is async-signal-safe: C11 atomics
 * on the fixed table, open/write/close, clock_gettime, nanosleep, pthread_self, the registered
 * line setter (one GPIO ioctl), pthread_sigmask, sigaction and raise. Registration, the supervisor's
 * start and the warnings run on ordinary threads under `setup_lock`.
 */
#define _GNU_SOURCE
#include "haptics_stop_guard.h"
#include "stop_table.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

extern char **environ;

_Static_assert(HAPTICS_STOP_GUARD_MAX_SLOTS == HAPTICS_STOP_MAX_SLOTS, "one slot count");
_Static_assert(HAPTICS_STOP_GUARD_MAX_LINES == HAPTICS_STOP_MAX_LINES, "one line count");
_Static_assert(HAPTICS_STOP_GUARD_MAX_WRITES == HAPTICS_STOP_MAX_WRITES, "one write count");
_Static_assert(HAPTICS_STOP_GUARD_MAX_LOCKS == HAPTICS_STOP_MAX_LOCKS, "one lock count");
_Static_assert(HAPTICS_STOP_GUARD_PATH_SIZE == HAPTICS_STOP_PATH_SIZE, "one path size");
_Static_assert(HAPTICS_STOP_GUARD_VALUE_SIZE == HAPTICS_STOP_VALUE_SIZE, "one value size");
_Static_assert(HAPTICS_STOP_GUARD_REPORT_SIZE == HAPTICS_STOP_REPORT_SIZE, "one report size");
_Static_assert(HAPTICS_STOP_GUARD_MAX_I2C_WRITES == HAPTICS_STOP_MAX_I2C_WRITES, "one I2C write count");

/* How long the handler waits for another thread's write section, and the supervisor's answer. */
#define SECTION_WAIT_NS 200000000LL
#define ANSWER_TIMEOUT_MS 5000
#define ALTSTACK_SIZE (64 * 1024)

/* What only this process knows about a slot: pointers and descriptors mean nothing elsewhere. */
struct local_slot {
    /* The thread (pthread_self) in a write section, 0 when none. */
    _Atomic uintptr_t writer;
    haptics_stop_lines_setter setter;
    void *request;
    int report_fd;
    int i2c_fd;
};

static _Atomic(struct haptics_stop_table *) table;
static int table_fd = -1;
static struct local_slot locals[HAPTICS_STOP_MAX_SLOTS];
static _Atomic int halted;

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
/* Signalled (under setup_lock) when a supervisor's start is settled. */
static pthread_cond_t start_settled = PTHREAD_COND_INITIALIZER;
static pthread_key_t altstack_key;
/* Under setup_lock. */
static int supervisor_socket = -1;
/* The supervisor answered "ready" (until then its start thread owns the socket's reading). */
static int supervisor_answered;
static int supervisor_unavailable;
static char warning[1024];
static int warning_pending;
static _Atomic int supervisor_process;

/* The signals whose default action ends the process. `precedes` marks those whose handler, when the
 * process installed one, still gets ours in front of it: crash handlers and interruptions end the
 * process; the others' handlers keep it alive. */
static const struct {
    int number;
    int precedes;
    int fatal;
} guarded[] = {
    {SIGHUP, 0, 0},   {SIGINT, 1, 0},   {SIGQUIT, 1, 1},   {SIGILL, 1, 1},  {SIGTRAP, 1, 1},   {SIGABRT, 1, 1},
    {SIGBUS, 1, 1},   {SIGFPE, 1, 1},   {SIGUSR1, 0, 0},   {SIGSEGV, 1, 1}, {SIGUSR2, 0, 0},   {SIGPIPE, 0, 0},
    {SIGALRM, 0, 0},  {SIGTERM, 1, 0},  {SIGSTKFLT, 0, 0}, {SIGXCPU, 0, 0}, {SIGXFSZ, 0, 0},   {SIGVTALRM, 0, 0},
    {SIGPROF, 0, 0},  {SIGIO, 0, 0},    {SIGPWR, 0, 0},    {SIGSYS, 1, 1},
};

static struct sigaction previous[NSIG];
static unsigned char fatal_signal[NSIG];

/* This thread's identity for write sections: pthread_self reads the thread pointer (no system
 * call on the path of every hardware write) and is never 0 for a live thread. */
static uintptr_t current_thread(void)
{
    return (uintptr_t)pthread_self();
}

static long long now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void pause_ns(long nanoseconds)
{
    struct timespec pause = {0, nanoseconds};
    nanosleep(&pause, NULL);
}

static struct haptics_stop_slot *slot_at(int index)
{
    struct haptics_stop_table *current = atomic_load(&table);
    if (!current || index < 0 || index >= HAPTICS_STOP_MAX_SLOTS)
        return NULL;
    return &current->slots[index];
}

/* MARK: Stopping (signal handler and exit) */

/* Runs one slot's program with this process's own handles. Returns 1 when every step succeeded. */
static int run_owned(const struct haptics_stop_slot *slot, const struct local_slot *local)
{
    int ok = 1;
    if (slot->i2c_count > 0 && local->i2c_fd >= 0) {
        int result = haptics_stop_write_i2c(local->i2c_fd, slot);
        /* No acknowledge with an EN line in the program: the chip is shut down, and stays so. */
        if (result != 0 && !((result == -ENXIO || result == -EREMOTEIO) && slot->line_count > 0))
            ok = 0;
    }
    int inactive[HAPTICS_STOP_MAX_LINES] = {0};
    int lines = slot->line_count > 0 && local->setter && local->request;
    if (lines && slot->lines_first && local->setter(local->request, inactive) != 0)
        ok = 0;
    for (uint32_t i = 0; i < slot->write_count && i < HAPTICS_STOP_MAX_WRITES; i++) {
        if (haptics_stop_write_attribute(slot->write_path[i], slot->write_value[i]) != 0)
            ok = 0;
    }
    if (lines && !slot->lines_first && local->setter(local->request, inactive) != 0)
        ok = 0;
    if (slot->has_report && local->report_fd >= 0) {
        uint32_t index = atomic_load(&slot->report_index) & 1;
        size_t length = slot->report_length[index];
        ssize_t written;
        do {
            written = write(local->report_fd, slot->report[index], length);
        } while (written < 0 && errno == EINTR);
        if (written != (ssize_t)length)
            ok = 0;
    }
    return ok;
}

/* Stops every armed slot. Safe in a signal handler and at exit. */
static void stop_all(void)
{
    atomic_store(&halted, 1);
    struct haptics_stop_table *current = atomic_load(&table);
    if (!current)
        return;
    uintptr_t me = current_thread();
    for (int i = 0; i < HAPTICS_STOP_MAX_SLOTS; i++) {
        struct haptics_stop_slot *slot = &current->slots[i];
        uint32_t expected = HAPTICS_STOP_SLOT_ARMED;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, HAPTICS_STOP_SLOT_STOPPING))
            continue;
        /* A thread in a write section finishes it (it cannot start another: halted is set). The
         * section of the thread this handler interrupted never resumes before the process dies, and
         * a thread blocked in a write (a USB transfer) is not waited for beyond the bound. Sleeping,
         * not spinning: on one CPU the writer must get to run. */
        long long deadline = now_ns() + SECTION_WAIT_NS;
        for (;;) {
            uintptr_t writer = atomic_load(&locals[i].writer);
            if (writer == 0 || writer == me || now_ns() >= deadline)
                break;
            pause_ns(50000);
        }
        int ok = run_owned(slot, &locals[i]);
        atomic_store(&slot->stopped_by_owner, ok ? 1u : 2u);
        atomic_store(&slot->state, HAPTICS_STOP_SLOT_ARMED);
    }
}

static int is_handler(const struct sigaction *action)
{
    if (action->sa_flags & SA_SIGINFO)
        return action->sa_sigaction != NULL && (void *)action->sa_sigaction != (void *)SIG_IGN &&
               (void *)action->sa_sigaction != (void *)SIG_DFL;
    return action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN;
}

/* The handler. Exported under one name, so another copy of the guard (another plugin) recognises
 * it (dladdr) and chains to it for every signal, not only for the crash and interruption ones. */
void haptics_stop_guard_on_signal(int number, siginfo_t *info, void *context);

void haptics_stop_guard_on_signal(int number, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    stop_all();
    const struct sigaction *before = &previous[number];
    if (is_handler(before)) {
        /* The handler that was there decides what happens next. After an interruption the process
         * may live on (its writes work again); after a crash it is dying (a backtracer can take
         * seconds), so nothing may start the motors again meanwhile. Run it under the mask it would
         * have had: the interrupted one, its own, and the signal itself. */
        if (!fatal_signal[number])
            atomic_store(&halted, 0);
        sigset_t mask = ((ucontext_t *)context)->uc_sigmask;
        for (int other = 1; other < NSIG; other++) {
            if (sigismember(&before->sa_mask, other) == 1)
                sigaddset(&mask, other);
        }
        if (!(before->sa_flags & SA_NODEFER))
            sigaddset(&mask, number);
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        if (before->sa_flags & SA_SIGINFO)
            before->sa_sigaction(number, info, context);
        else
            before->sa_handler(number);
        errno = saved_errno;
        return;
    }
    /* The default action: restore it and raise the signal again. It is blocked while this handler
     * runs, so it is delivered (and ends the process) as soon as the handler returns. */
    struct sigaction fallback;
    memset(&fallback, 0, sizeof(fallback));
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(number, &fallback, NULL);
    raise(number);
    errno = saved_errno;
}

static void at_exit(void)
{
    stop_all();
}

/* Whether `action` is another copy's handler (another plugin linking the guard). */
static int is_guard(const struct sigaction *action)
{
    Dl_info info;
    if (!(action->sa_flags & SA_SIGINFO) || !is_handler(action))
        return 0;
    return dladdr((void *)action->sa_sigaction, &info) != 0 && info.dli_sname &&
           strcmp(info.dli_sname, "haptics_stop_guard_on_signal") == 0;
}

static void install_handler(int number, int precedes)
{
    struct sigaction current;
    if (sigaction(number, NULL, &current) != 0)
        return;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)
        return; /* ignored: stays ignored */
    if (is_handler(&current) && !precedes && !is_guard(&current))
        return; /* the process handles it and does not die of it */
    previous[number] = current;
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = haptics_stop_guard_on_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigfillset(&action.sa_mask);
    sigaction(number, &action, NULL);
}

static void free_altstack(void *memory)
{
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && current.ss_sp == memory) {
        if (current.ss_flags & SS_ONSTACK)
            return; /* cannot happen at thread exit; never unmap a stack in use */
        stack_t off;
        memset(&off, 0, sizeof(off));
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, NULL);
    }
    munmap(memory, ALTSTACK_SIZE);
}

static void after_fork_in_child(void);

static void create_key(void)
{
    pthread_key_create(&altstack_key, free_altstack);
}

static void install(void)
{
    for (size_t i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++) {
        fatal_signal[guarded[i].number] = (unsigned char)guarded[i].fatal;
        install_handler(guarded[i].number, guarded[i].precedes);
    }
    atexit(at_exit);
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* MARK: The supervisor */

static void note_warning(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(warning, sizeof(warning), format, arguments);
    va_end(arguments);
    warning_pending = 1;
}

static const char not_guaranteed[] =
    "open actuators are still stopped on every catchable fatal signal and at exit, but not when the process is killed with "
    "SIGKILL, by the OOM killer, or dies without running its signal handlers";

/* The supervisor's path: beside the file this code was loaded from. */
static int supervisor_path(char *path, size_t size)
{
    Dl_info info;
    char resolved[PATH_MAX];
    const char *file = NULL;
    if (dladdr((void *)&haptics_stop_guard_begin, &info) != 0 && info.dli_fname && strchr(info.dli_fname, '/'))
        file = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    if (!file) {
        ssize_t length = readlink("/proc/self/exe", resolved, sizeof(resolved) - 1);
        if (length <= 0)
            return -1;
        resolved[length] = '\0';
        file = resolved;
    }
    const char *slash = strrchr(file, '/');
    int written = snprintf(path, size, "%.*s/%s", (int)(slash - file), file, HAPTICS_STOP_GUARD_SUPERVISOR);
    return written > 0 && (size_t)written < size ? 0 : -1;
}

/* A descriptor at 10 or above, so dup2 onto 3, 4, 5 in the spawn never maps one onto itself (which
 * would keep its close-on-exec flag). */
static int high_descriptor(int fd)
{
    if (fd < 0 || fd >= 10)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return high;
}

/* What a started supervisor's start thread needs. */
struct supervisor_start {
    pid_t child;
    int socket;
    char path[PATH_MAX];
};

/* Reaps the started process (it forks the supervisor and exits at once, so the supervisor is
 * nobody's child here: no zombie, nothing for the application's wait() to find) and reads the
 * supervisor's answer, then records it. Runs on a thread of its own, so no registration waits for
 * a process to start (hundreds of milliseconds under emulation); a failure is noted for the plugin
 * to log at its next registration. */
static void finish_start(struct supervisor_start *start)
{
    int status = 0;
    while (waitpid(start->child, &status, 0) < 0 && errno == EINTR) {
    }
    char answer[512];
    ssize_t got = -1;
    struct pollfd wait_for = {start->socket, POLLIN, 0};
    int ready;
    do {
        ready = poll(&wait_for, 1, ANSWER_TIMEOUT_MS);
    } while (ready < 0 && errno == EINTR);
    if (ready > 0)
        got = recv(start->socket, answer, sizeof(answer) - 1, MSG_DONTWAIT);
    pthread_mutex_lock(&setup_lock);
    pthread_cond_broadcast(&start_settled);
    if (supervisor_socket == start->socket) {
        if (got > 2 && answer[0] == 'R') {
            answer[got] = '\0';
            supervisor_answered = 1;
            atomic_store(&supervisor_process, atoi(answer + 2));
        } else {
            close(supervisor_socket);
            supervisor_socket = -1;
            supervisor_unavailable = 1;
            if (got > 2 && answer[0] == 'E') {
                answer[got] = '\0';
                note_warning("stop guard: %s refused to supervise (%s): %s", start->path, answer + 2, not_guaranteed);
            } else if (ready == 0) {
                note_warning("stop guard: %s did not answer within %d ms: %s", start->path, ANSWER_TIMEOUT_MS, not_guaranteed);
            } else {
                note_warning("stop guard: %s ended without answering (wait status %d): %s", start->path, status, not_guaranteed);
            }
        }
    }
    pthread_mutex_unlock(&setup_lock);
}

static void *start_thread(void *argument)
{
    struct supervisor_start *start = argument;
    finish_start(start);
    free(start);
    return NULL;
}

/* Starts `haptics-stop-guard`; its answer is collected by a thread of its own. Under setup_lock. */
static void start_supervisor(void)
{
    char path[PATH_MAX];
    if (supervisor_path(path, sizeof(path)) != 0) {
        supervisor_unavailable = 1;
        note_warning("stop guard: cannot locate %s (dladdr failed): %s", HAPTICS_STOP_GUARD_SUPERVISOR, not_guaranteed);
        return;
    }
    if (access(path, X_OK) != 0) {
        supervisor_unavailable = 1;
        note_warning("stop guard: the supervisor %s is missing (%s): %s; install it beside the plugin", path, strerror(errno), not_guaranteed);
        return;
    }
    struct supervisor_start *start = calloc(1, sizeof(*start));
    int pair[2];
    if (!start || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        supervisor_unavailable = 1;
        note_warning("stop guard: cannot start %s (socketpair: %s): %s", path, strerror(start ? errno : ENOMEM), not_guaranteed);
        free(start);
        return;
    }
    int theirs = high_descriptor(pair[1]);
    /* A pidfd tells the supervisor when this process is entirely gone (its line requests and locks
     * released), even if a forked child still holds the socket. Linux 5.3 and later. */
    int pidfd = high_descriptor((int)syscall(SYS_pidfd_open, getpid(), 0));
    char parent[24];
    snprintf(parent, sizeof(parent), "%d", (int)getpid());
    char version[16];
    snprintf(version, sizeof(version), "%u", HAPTICS_STOP_TABLE_VERSION);
    char *arguments[] = {path, "--supervise", version, parent, NULL};

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, theirs, HAPTICS_STOP_SOCKET_FD);
    posix_spawn_file_actions_adddup2(&actions, table_fd, HAPTICS_STOP_TABLE_FD);
    if (pidfd >= 0)
        posix_spawn_file_actions_adddup2(&actions, pidfd, HAPTICS_STOP_PIDFD_FD);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
    pid_t child = 0;
    int spawned = posix_spawn(&child, path, &actions, &attributes, arguments, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    close(theirs);
    if (pidfd >= 0)
        close(pidfd);
    if (spawned != 0) {
        close(pair[0]);
        free(start);
        supervisor_unavailable = 1;
        note_warning("stop guard: cannot start %s (%s): %s", path, strerror(spawned), not_guaranteed);
        return;
    }
    /* From here the supervisor holds the socket and the table: whatever happens to this process,
     * it will see the end and apply the table, answered or not. */
    supervisor_socket = pair[0];
    supervisor_answered = 0;
    start->child = child;
    start->socket = pair[0];
    snprintf(start->path, sizeof(start->path), "%s", path);
    pthread_t thread;
    pthread_attr_t detached;
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    int created = pthread_create(&thread, &detached, start_thread, start);
    pthread_attr_destroy(&detached);
    if (created != 0) {
        /* No thread: collect the answer here (finish_start takes setup_lock itself). */
        pthread_mutex_unlock(&setup_lock);
        finish_start(start);
        pthread_mutex_lock(&setup_lock);
        free(start);
    }
}

/* Starts the supervisor if there is none, or replaces one that ended. Under setup_lock. */
static void watch_supervisor(void)
{
    if (table_fd < 0)
        return;
    if (supervisor_socket >= 0) {
        if (!supervisor_answered)
            return; /* still starting: its start thread reads the socket */
        /* It never sends anything after "ready": readable or hung up means it ended. */
        struct pollfd probe = {supervisor_socket, POLLIN, 0};
        if (poll(&probe, 1, 0) == 0)
            return;
        int gone = atomic_load(&supervisor_process);
        close(supervisor_socket);
        supervisor_socket = -1;
        supervisor_answered = 0;
        atomic_store(&supervisor_process, 0);
        note_warning("stop guard: the supervisor (process %d) ended unexpectedly; a new one is started", gone);
        start_supervisor();
        return;
    }
    if (!supervisor_unavailable)
        start_supervisor();
}

static void create_table(void)
{
    size_t size = sizeof(struct haptics_stop_table);
    int fd = high_descriptor(memfd_create("haptics-stop-table", MFD_CLOEXEC));
    void *memory = MAP_FAILED;
    int failure = 0;
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
        failure = errno;
    else
        memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (memory == MAP_FAILED) {
        if (!failure)
            failure = errno;
        if (fd >= 0)
            close(fd);
        fd = -1;
        note_warning("stop guard: cannot create the table shared with the supervisor (%s): %s", strerror(failure), not_guaranteed);
        memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED)
            return;
    }
    struct haptics_stop_table *fresh = memory;
    fresh->magic = HAPTICS_STOP_TABLE_MAGIC;
    fresh->version = HAPTICS_STOP_TABLE_VERSION;
    fresh->size = (uint32_t)size;
    fresh->slot_count = HAPTICS_STOP_MAX_SLOTS;
    fresh->owner = (int32_t)getpid();
    for (int i = 0; i < HAPTICS_STOP_MAX_SLOTS; i++) {
        locals[i].report_fd = -1;
        locals[i].i2c_fd = -1;
        locals[i].setter = NULL;
        locals[i].request = NULL;
        atomic_store(&locals[i].writer, 0);
    }
    table_fd = fd;
    atomic_store(&table, fresh);
}

/* The child of a fork owns none of the parent's actuators and must not write the parent's table
 * (it is shared memory): it starts over, without a table, a supervisor or a report descriptor. */
static void after_fork_in_child(void)
{
    struct haptics_stop_table *inherited = atomic_load(&table);
    atomic_store(&table, NULL);
    if (inherited)
        munmap(inherited, sizeof(*inherited));
    if (table_fd >= 0)
        close(table_fd);
    table_fd = -1;
    if (supervisor_socket >= 0)
        close(supervisor_socket);
    supervisor_socket = -1;
    supervisor_answered = 0;
    supervisor_unavailable = 0;
    atomic_store(&supervisor_process, 0);
    for (int i = 0; i < HAPTICS_STOP_MAX_SLOTS; i++) {
        if (locals[i].report_fd >= 0)
            close(locals[i].report_fd);
        locals[i].report_fd = -1;
        if (locals[i].i2c_fd >= 0)
            close(locals[i].i2c_fd);
        locals[i].i2c_fd = -1;
        locals[i].setter = NULL;
        locals[i].request = NULL;
        atomic_store(&locals[i].writer, 0);
    }
    warning_pending = 0;
    atomic_store(&halted, 0);
    pthread_mutex_init(&setup_lock, NULL);
    pthread_cond_init(&start_settled, NULL);
}

/* MARK: Registration */

int haptics_stop_guard_begin(const char *label)
{
    pthread_once(&install_once, install);
    pthread_mutex_lock(&setup_lock);
    if (!atomic_load(&table))
        create_table();
    watch_supervisor();
    pthread_mutex_unlock(&setup_lock);
    struct haptics_stop_table *current = atomic_load(&table);
    if (!current)
        return -ENOMEM;
    haptics_stop_guard_prepare_thread();
    for (int index = 0; index < HAPTICS_STOP_MAX_SLOTS; index++) {
        struct haptics_stop_slot *slot = &current->slots[index];
        uint32_t expected = HAPTICS_STOP_SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, HAPTICS_STOP_SLOT_FILLING))
            continue;
        atomic_store(&slot->stopped_by_owner, 0);
        atomic_store(&slot->report_index, 0);
        slot->lines_first = 0;
        slot->line_count = 0;
        slot->write_count = 0;
        slot->lock_count = 0;
        slot->has_report = 0;
        slot->node_device = 0;
        slot->node_inode = 0;
        slot->chip[0] = '\0';
        slot->node[0] = '\0';
        slot->i2c_count = 0;
        slot->i2c_address = 0;
        slot->i2c_device = 0;
        slot->i2c_node[0] = '\0';
        snprintf(slot->label, sizeof(slot->label), "%s", label);
        locals[index].setter = NULL;
        locals[index].request = NULL;
        locals[index].report_fd = -1;
        locals[index].i2c_fd = -1;
        atomic_store(&locals[index].writer, 0);
        return index;
    }
    return -ENOSPC;
}

static struct haptics_stop_slot *filling(int index)
{
    struct haptics_stop_slot *slot = slot_at(index);
    return slot && atomic_load(&slot->state) == HAPTICS_STOP_SLOT_FILLING ? slot : NULL;
}

int haptics_stop_guard_add_lines(int index, const char *chip, size_t count, const unsigned int *offsets, const int *active_low,
                                 haptics_stop_lines_setter setter, void *request)
{
    struct haptics_stop_slot *slot = filling(index);
    if (!slot || count == 0 || count > HAPTICS_STOP_MAX_LINES || slot->line_count > 0 || !setter || !request)
        return -EINVAL;
    if (strlen(chip) >= HAPTICS_STOP_PATH_SIZE)
        return -ENAMETOOLONG;
    strcpy(slot->chip, chip);
    for (size_t i = 0; i < count; i++) {
        slot->offsets[i] = offsets[i];
        slot->inactive[i] = active_low[i] != 0;
    }
    slot->line_count = (uint32_t)count;
    locals[index].setter = setter;
    locals[index].request = request;
    return 0;
}

int haptics_stop_guard_add_write(int index, const char *path, const char *value)
{
    struct haptics_stop_slot *slot = filling(index);
    if (!slot)
        return -EINVAL;
    if (slot->write_count >= HAPTICS_STOP_MAX_WRITES)
        return -ENOSPC;
    if (strlen(path) >= HAPTICS_STOP_PATH_SIZE || strlen(value) >= HAPTICS_STOP_VALUE_SIZE)
        return -ENAMETOOLONG;
    strcpy(slot->write_path[slot->write_count], path);
    strcpy(slot->write_value[slot->write_count], value);
    slot->write_count++;
    return 0;
}

int haptics_stop_guard_add_lock(int index, const char *directory)
{
    struct haptics_stop_slot *slot = filling(index);
    if (!slot)
        return -EINVAL;
    if (slot->lock_count >= HAPTICS_STOP_MAX_LOCKS)
        return -ENOSPC;
    if (strlen(directory) >= HAPTICS_STOP_PATH_SIZE)
        return -ENAMETOOLONG;
    strcpy(slot->lock_path[slot->lock_count], directory);
    slot->lock_count++;
    return 0;
}

int haptics_stop_guard_add_report(int index, const char *node, const unsigned char *report, size_t length)
{
    struct haptics_stop_slot *slot = filling(index);
    if (!slot || slot->has_report)
        return -EINVAL;
    if (length == 0 || length > HAPTICS_STOP_REPORT_SIZE)
        return -EMSGSIZE;
    if (strlen(node) >= HAPTICS_STOP_PATH_SIZE)
        return -ENAMETOOLONG;
    int fd = open(node, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat status;
    if (fstat(fd, &status) != 0) {
        int failure = errno;
        close(fd);
        return -failure;
    }
    slot->node_device = (uint64_t)status.st_rdev;
    slot->node_inode = (uint64_t)status.st_ino;
    strcpy(slot->node, node);
    memcpy(slot->report[0], report, length);
    slot->report_length[0] = (uint32_t)length;
    atomic_store(&slot->report_index, 0);
    slot->has_report = 1;
    locals[index].report_fd = fd;
    return 0;
}

int haptics_stop_guard_add_i2c(int index, const char *node, unsigned int address, size_t count, const unsigned char *registers,
                               const unsigned char *values)
{
    struct haptics_stop_slot *slot = filling(index);
    if (!slot || slot->i2c_count > 0 || count == 0 || count > HAPTICS_STOP_MAX_I2C_WRITES || address > 0x7f)
        return -EINVAL;
    if (strlen(node) >= HAPTICS_STOP_PATH_SIZE)
        return -ENAMETOOLONG;
    int fd = haptics_stop_open_i2c(node, address);
    if (fd < 0)
        return fd;
    struct stat status;
    if (fstat(fd, &status) != 0) {
        int failure = errno;
        close(fd);
        return -failure;
    }
    slot->i2c_device = (uint64_t)status.st_rdev;
    slot->i2c_address = address;
    strcpy(slot->i2c_node, node);
    for (size_t i = 0; i < count; i++) {
        slot->i2c_register[i] = registers[i];
        slot->i2c_value[i] = values[i];
    }
    slot->i2c_count = (uint32_t)count;
    locals[index].i2c_fd = fd;
    return 0;
}

int haptics_stop_guard_set_report(int index, const unsigned char *report, size_t length)
{
    struct haptics_stop_slot *slot = slot_at(index);
    if (!slot || !slot->has_report || atomic_load(&slot->state) == HAPTICS_STOP_SLOT_FREE)
        return -EINVAL;
    if (length == 0 || length > HAPTICS_STOP_REPORT_SIZE)
        return -EMSGSIZE;
    /* Written into the buffer nobody reads, then published: a stop (here or, after a SIGKILL, in
     * the supervisor) always sees a whole report. */
    uint32_t next = (atomic_load(&slot->report_index) & 1) ^ 1;
    memcpy(slot->report[next], report, length);
    slot->report_length[next] = (uint32_t)length;
    atomic_store(&slot->report_index, next);
    return 0;
}

int haptics_stop_guard_arm(int index, int lines_first)
{
    struct haptics_stop_slot *slot = filling(index);
    if (!slot)
        return -EINVAL;
    slot->lines_first = lines_first != 0;
    atomic_store(&slot->state, HAPTICS_STOP_SLOT_ARMED);
    return 0;
}

void haptics_stop_guard_unregister(int index)
{
    struct haptics_stop_slot *slot = slot_at(index);
    if (!slot)
        return;
    /* Claim it (FILLING: every stop skips it), clear what this process holds for it, then free it,
     * so a registration that reuses the slot never sees a descriptor of this one. */
    for (;;) {
        uint32_t state = atomic_load(&slot->state);
        if (state == HAPTICS_STOP_SLOT_FREE)
            return;
        if (state == HAPTICS_STOP_SLOT_STOPPING) {
            sched_yield(); /* a stop runs on another thread: let it finish */
            continue;
        }
        if (atomic_compare_exchange_strong(&slot->state, &state, HAPTICS_STOP_SLOT_FILLING))
            break;
    }
    int fd = locals[index].report_fd;
    locals[index].report_fd = -1;
    int i2c_fd = locals[index].i2c_fd;
    locals[index].i2c_fd = -1;
    locals[index].setter = NULL;
    locals[index].request = NULL;
    atomic_store(&locals[index].writer, 0);
    slot->has_report = 0;
    slot->line_count = 0;
    slot->write_count = 0;
    slot->lock_count = 0;
    slot->i2c_count = 0;
    atomic_store(&slot->state, HAPTICS_STOP_SLOT_FREE);
    if (fd >= 0)
        close(fd);
    if (i2c_fd >= 0)
        close(i2c_fd);
}

int haptics_stop_guard_enter(int index)
{
    struct haptics_stop_slot *slot = slot_at(index);
    if (!slot)
        return atomic_load(&halted) ? -ESHUTDOWN : 0;
    uintptr_t me = current_thread();
    for (;;) {
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&locals[index].writer, &expected, me))
            break;
        sched_yield(); /* another thread writes to this actuator (its owner serialises, so rare) */
    }
    if (atomic_load(&halted)) {
        atomic_store(&locals[index].writer, 0);
        return -ESHUTDOWN;
    }
    return 0;
}

void haptics_stop_guard_leave(int index)
{
    if (slot_at(index))
        atomic_store(&locals[index].writer, 0);
}

void haptics_stop_guard_prepare_thread(void)
{
    pthread_once(&key_once, create_key);
    stack_t current;
    if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE))
        return; /* the thread has one (the Swift runtime gives the main thread one) */
    void *memory = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED)
        return;
    stack_t fresh;
    memset(&fresh, 0, sizeof(fresh));
    fresh.ss_sp = memory;
    fresh.ss_size = ALTSTACK_SIZE;
    if (sigaltstack(&fresh, NULL) != 0 || pthread_setspecific(altstack_key, memory) != 0) {
        free_altstack(memory);
        return;
    }
}

int haptics_stop_guard_take_warning(char *buffer, size_t size, int wait_ms)
{
    pthread_mutex_lock(&setup_lock);
    if (wait_ms > 0 && supervisor_socket >= 0 && !supervisor_answered) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += wait_ms / 1000;
        deadline.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        while (supervisor_socket >= 0 && !supervisor_answered) {
            if (pthread_cond_timedwait(&start_settled, &setup_lock, &deadline) == ETIMEDOUT)
                break;
        }
    }
    int pending = warning_pending;
    if (pending && size > 0)
        snprintf(buffer, size, "%s", warning);
    warning_pending = 0;
    pthread_mutex_unlock(&setup_lock);
    return pending;
}

int haptics_stop_guard_supervisor_pid(void)
{
    return atomic_load(&supervisor_process);
}
