#define _GNU_SOURCE
#include "i2c_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <sys/ioctl.h>
#include <unistd.h>

int i2c_shim_open(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int i2c_shim_funcs(int fd, unsigned long *funcs)
{
    return ioctl(fd, I2C_FUNCS, funcs) == 0 ? 0 : -errno;
}

int i2c_shim_has_byte_data(unsigned long funcs)
{
    return (funcs & (I2C_FUNC_SMBUS_READ_BYTE_DATA | I2C_FUNC_SMBUS_WRITE_BYTE_DATA)) ==
           (I2C_FUNC_SMBUS_READ_BYTE_DATA | I2C_FUNC_SMBUS_WRITE_BYTE_DATA);
}

int i2c_shim_set_address(int fd, unsigned int address)
{
    return ioctl(fd, I2C_SLAVE, (unsigned long)address) == 0 ? 0 : -errno;
}

static int transfer(int fd, char direction, unsigned char reg, union i2c_smbus_data *data)
{
    struct i2c_smbus_ioctl_data request = {.read_write = direction, .command = reg, .size = I2C_SMBUS_BYTE_DATA, .data = data};
    int status;
    do {
        status = ioctl(fd, I2C_SMBUS, &request);
    } while (status < 0 && errno == EINTR);
    return status < 0 ? -errno : 0;
}

int i2c_shim_read_byte(int fd, unsigned char reg)
{
    union i2c_smbus_data data;
    int status = transfer(fd, I2C_SMBUS_READ, reg, &data);
    return status < 0 ? status : data.byte;
}

int i2c_shim_write_byte(int fd, unsigned char reg, unsigned char value)
{
    union i2c_smbus_data data;
    data.byte = value;
    return transfer(fd, I2C_SMBUS_WRITE, reg, &data);
}
