/*
 * i2c_shim.h: the few i2c-dev ioctls the i2c backend makes (Linux's <linux/i2c-dev.h>), as plain
 * functions Swift can call (ioctl(2) is variadic). SMBus byte-data transfers only: what a DRV260x
 * speaks, and all that i2c-stub and every SMBus controller offer.
 */
#ifndef HAPTICS_I2C_SHIM_H
#define HAPTICS_I2C_SHIM_H

/** Opens `path` (`/dev/i2c-N`) read-write, close-on-exec. Returns the descriptor or a negative errno. */
int i2c_shim_open(const char *path);

/** The adapter's functionality (I2C_FUNCS) in `*funcs`. Returns 0 or a negative errno. */
int i2c_shim_funcs(int fd, unsigned long *funcs);

/** Whether `funcs` has SMBus byte-data read and write. */
int i2c_shim_has_byte_data(unsigned long funcs);

/** Points the descriptor at 7-bit `address` (I2C_SLAVE, never I2C_SLAVE_FORCE): -EBUSY when a kernel driver owns the chip. */
int i2c_shim_set_address(int fd, unsigned int address);

/** SMBus read byte data: the register's value (0...255) or a negative errno. */
int i2c_shim_read_byte(int fd, unsigned char reg);

/** SMBus write byte data. Returns 0 or a negative errno. */
int i2c_shim_write_byte(int fd, unsigned char reg, unsigned char value);

#endif
