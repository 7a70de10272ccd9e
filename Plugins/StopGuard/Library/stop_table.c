/*
 * stop_table.c: the steps the process and its supervisor both run (see stop_table.h).
 */
#define _GNU_SOURCE
#include "stop_table.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <sys/ioctl.h>
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

int haptics_stop_open_i2c(const char *node, unsigned int address)
{
    int fd = open(node, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (ioctl(fd, I2C_SLAVE, (unsigned long)address) != 0) {
        int failure = errno;
        close(fd);
        return -failure;
    }
    return fd;
}

int haptics_stop_write_i2c(int fd, const struct haptics_stop_slot *slot)
{
    int result = 0;
    for (uint32_t i = 0; i < slot->i2c_count && i < HAPTICS_STOP_MAX_I2C_WRITES; i++) {
        union i2c_smbus_data data;
        data.byte = slot->i2c_value[i];
        struct i2c_smbus_ioctl_data request = {
            .read_write = I2C_SMBUS_WRITE, .command = slot->i2c_register[i], .size = I2C_SMBUS_BYTE_DATA, .data = &data};
        int status;
        do {
            status = ioctl(fd, I2C_SMBUS, &request);
        } while (status < 0 && errno == EINTR);
        if (status < 0 && result == 0)
            result = -errno;
    }
    return result;
}
