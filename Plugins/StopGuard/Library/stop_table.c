/*
 * stop_table.c: the steps the process and its supervisor both run (see stop_table.h).
 */
#define _GNU_SOURCE
#include "stop_table.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int haptics_stop_write_attribute(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t length = strlen(value);
    ssize_t written;
    do {
        written = write(fd, value, length);
    } while (written < 0 && errno == EINTR);
    int result = written < 0 ? -errno : (size_t)written == length ? 0 : -EIO;
    close(fd);
    return result;
}
