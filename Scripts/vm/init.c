/*
 * /init of the swift-haptics kernel VM rig (built `gcc -static` by Scripts/vm/setup).
 *
 * 1. mounts devtmpfs, loads the modules in /modules (sorted by name: virtio, 9p, configfs)
 * 2. mounts the host root (9p tag "hostroot", read-only) on /newroot and, inside it,
 *    devtmpfs, devpts, /dev/shm, proc, sysfs, configfs, debugfs, tmpfs on /tmp and /run,
 *    and the writable results share (9p tag "results") on /run/results
 * 3. chroots, brings up lo, points /proc/sys/kernel/modprobe at <rig root>/sbin/modprobe,
 *    sets HOME/XDG_* to writable places under /tmp, HAPTICS_VM_RIG=1,
 *    HAPTICS_VM_RESULTS=/run/results (HAPTICS_VM_RIG_ROOT and HAPTICS_VM_CWD come from
 *    the kernel command line, which hands unknown NAME=value words to init's environment)
 * 4. runs the script named after `--` on the kernel command line (argv[1]), waits for it,
 *    prints "@@vm-rig:exit-status=N@@" on the console and powers off.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RESULTS "/run/results"

static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("vm-rig init: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fflush(stderr);
}

static void power_off(int status)
{
	printf("\n@@vm-rig:exit-status=%d@@\n", status);
	fflush(stdout);
	kill(-1, SIGKILL);
	umount2("/run/results", MNT_DETACH);
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void must_mount(const char *src, const char *dst, const char *type, unsigned long flags,
		       const char *data, int fatal)
{
	mkdir(dst, 0755);
	if (mount(src, dst, type, flags, data) != 0) {
		say("mount %s on %s (%s) failed: %s", src, dst, type, strerror(errno));
		if (fatal)
			power_off(125);
	}
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void load_modules(void)
{
	struct dirent **names;
	int n = scandir("/modules", &names, NULL, by_name);
	if (n < 0) {
		say("no /modules: %s", strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		char path[512];
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof path, "/modules/%s", names[i]->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST))
				say("loading %s failed: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
		}
		free(names[i]);
	}
	free(names);
}

/* Brings up the loopback interface: Foundation's CFSocket (used by Process) and tests talking
 * to 127.0.0.1 need it. */
static void loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		say("socket(AF_INET) failed: %s", strerror(errno));
		return;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
			say("bringing up lo failed: %s", strerror(errno));
	}
	close(s);
}

/* Points the kernel's module auto-loading (request_module) at the rig's kernel tree through
 * the wrapper Scripts/vm/setup writes at <root>/sbin/modprobe. */
static void set_kernel_modprobe(void)
{
	const char *root = getenv("HAPTICS_VM_RIG_ROOT");
	char path[512];
	if (!root)
		return;
	snprintf(path, sizeof path, "%s/sbin/modprobe", root);
	if (access(path, X_OK) != 0)
		return;
	int fd = open("/proc/sys/kernel/modprobe", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, path, strlen(path)) < 0)
		say("cannot set /proc/sys/kernel/modprobe: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void mkdirs(const char *path, mode_t mode)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, mode);
	chmod(buf, mode);
}

/* A package checked out under /tmp or /run (CI clones often are) would be hidden by the guest's
 * own tmpfs there. stage_package() binds it to /stage in the initramfs before that tmpfs is
 * mounted; expose_package() binds it back at its own path afterwards, so the test binary, its
 * plugins, fixtures and the rig's kernel tree keep their paths. (The 9p share cannot be mounted
 * twice.) HAPTICS_VM_PACKAGE comes from the kernel command line (Scripts/vm/run). */
static const char *hidden_package(void)
{
	const char *package = getenv("HAPTICS_VM_PACKAGE");
	if (!package || (strncmp(package, "/tmp/", 5) != 0 && strncmp(package, "/run/", 5) != 0))
		return NULL;
	return package;
}

static void stage_package(void)
{
	const char *package = hidden_package();
	char source[512];
	if (!package)
		return;
	mkdirs("/stage", 0755);
	snprintf(source, sizeof source, "/newroot%s", package);
	must_mount(source, "/stage", NULL, MS_BIND, NULL, 1);
}

static void expose_package(void)
{
	const char *package = hidden_package();
	char target[512];
	if (!package)
		return;
	snprintf(target, sizeof target, "/newroot%s", package);
	mkdirs(target, 0755);
	must_mount("/stage", target, NULL, MS_BIND, NULL, 1);
}

int main(int argc, char **argv)
{
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	if (fcntl(1, F_GETFD) < 0 || fcntl(2, F_GETFD) < 0) {
		int fd = open("/dev/console", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc < 2) {
		say("no script: put `-- /absolute/path/script` at the end of the kernel command line");
		power_off(125);
	}
	load_modules();

	const char *opts9p = "trans=virtio,version=9p2000.L,cache=loose,msize=512000";
	must_mount("hostroot", "/newroot", "9p", MS_RDONLY, opts9p, 1);
	must_mount("devtmpfs", "/newroot/dev", "devtmpfs", 0, NULL, 1);
	must_mount("devpts", "/newroot/dev/pts", "devpts", 0, "gid=5,mode=620,ptmxmode=666", 0);
	must_mount("tmpfs", "/newroot/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777", 0);
	must_mount("proc", "/newroot/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 1);
	must_mount("sysfs", "/newroot/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 1);
	must_mount("configfs", "/newroot/sys/kernel/config", "configfs", 0, NULL, 0);
	must_mount("debugfs", "/newroot/sys/kernel/debug", "debugfs", 0, NULL, 0);
	stage_package();
	must_mount("tmpfs", "/newroot/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777", 1);
	must_mount("tmpfs", "/newroot/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755", 1);
	must_mount("results", "/newroot" RESULTS, "9p", 0,
		   "trans=virtio,version=9p2000.L,cache=none,msize=512000", 0);
	expose_package();

	if (chroot("/newroot") != 0 || chdir("/") != 0) {
		say("chroot /newroot failed: %s", strerror(errno));
		power_off(125);
	}

	loopback_up();
	set_kernel_modprobe();
	mkdirs("/tmp/home", 0700);
	mkdirs("/tmp/xdg/config", 0700);
	mkdirs("/tmp/xdg/cache", 0700);
	mkdirs("/tmp/xdg/data", 0700);
	mkdirs("/tmp/xdg/state", 0700);
	mkdirs("/tmp/xdg/runtime", 0700);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	setenv("HOME", "/tmp/home", 1);
	setenv("USER", "root", 1);
	setenv("LOGNAME", "root", 1);
	setenv("SHELL", "/bin/sh", 1);
	setenv("TERM", "dumb", 1);
	setenv("LANG", "C.UTF-8", 1);
	setenv("TMPDIR", "/tmp", 1);
	setenv("XDG_CONFIG_HOME", "/tmp/xdg/config", 1);
	setenv("XDG_CACHE_HOME", "/tmp/xdg/cache", 1);
	setenv("XDG_DATA_HOME", "/tmp/xdg/data", 1);
	setenv("XDG_STATE_HOME", "/tmp/xdg/state", 1);
	setenv("XDG_RUNTIME_DIR", "/tmp/xdg/runtime", 1);
	setenv("HAPTICS_VM_RIG", "1", 1);
	setenv("HAPTICS_VM_RESULTS", RESULTS, 1);

	const char *cwd = getenv("HAPTICS_VM_CWD");
	if (cwd && chdir(cwd) != 0)
		say("cannot chdir to %s: %s (staying in /)", cwd, strerror(errno));

	pid_t child = fork();
	if (child < 0) {
		say("fork failed: %s", strerror(errno));
		power_off(125);
	}
	if (child == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0) {
			dup2(null, 0);
			if (null > 0)
				close(null);
		}
		setsid();
		execv(argv[1], argv + 1);
		fprintf(stderr, "vm-rig init: cannot run %s: %s\n", argv[1], strerror(errno));
		fflush(stderr);
		_exit(127);
	}

	int status = 0;
	for (;;) {
		pid_t pid = waitpid(-1, &status, 0);
		if (pid == child)
			break;
		if (pid < 0 && errno != EINTR) {
			say("waitpid failed: %s", strerror(errno));
			power_off(125);
		}
	}
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	power_off(code);
	return 0;
}
