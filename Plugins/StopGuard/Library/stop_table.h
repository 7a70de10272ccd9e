/*
 * stop_table.h: the table of stop programs a process shares with its supervisor, and the few
 * operations both run. Private to the stop guard (the library and `haptics-stop-guard`); plugins use
 * haptics_stop_guard.h.
 *
 * The table lives in a memfd that the process maps and hands to the supervisor at its start, so a
 * registration, an update of a rumble controller's stop report and an unregistration are plain
 * memory writes (no message, no system call), and whatever the table holds when the process dies is
 * what the supervisor applies. Only the owning process writes it; the supervisor reads it once the
 * process is gone. Both are built from this one header in one package, and the supervisor checks
 * the magic, version and size before it answers "ready".
 *
 * A slot is one actuator's stop program, in this order:
 *   0. a driver IC's register writes on I²C (RTP input to zero, then standby), through i2c-dev;
 *   1. `lines_first`: the GPIO lines to their inactive level (a driver IC's enable goes low before
 *      its PWM input changes: a DRV2603 with its input at 0 % duty drives full reverse);
 *   2. the sysfs writes, in order (`duty_cycle` <- 0, then `enable` <- 0, per channel);
 *   3. otherwise the lines now;
 *   4. a rumble controller's "motors off" output report, written to its hidraw node.
 * The owning process sets its lines through the line request it holds (a setter it registered); the
 * supervisor, which holds nothing, requests the lines itself with the inactive values once the dead
 * process's request is gone. While it applies a slot, the supervisor also holds an exclusive flock
 * on each of the slot's `locks` (the PWM channel directories the owner locks), so it never touches a
 * channel a new owner has taken meanwhile.
 */
#ifndef HAPTICS_STOP_TABLE_H
#define HAPTICS_STOP_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** "HSTG". */
#define HAPTICS_STOP_TABLE_MAGIC 0x48535447u
/** Changes whenever the layout below changes. */
#define HAPTICS_STOP_TABLE_VERSION 2u

#define HAPTICS_STOP_MAX_SLOTS 64
#define HAPTICS_STOP_MAX_LINES 8
#define HAPTICS_STOP_MAX_WRITES 6
#define HAPTICS_STOP_MAX_LOCKS 2
#define HAPTICS_STOP_PATH_SIZE 256
#define HAPTICS_STOP_VALUE_SIZE 24
#define HAPTICS_STOP_LABEL_SIZE 128
#define HAPTICS_STOP_REPORT_SIZE 128
#define HAPTICS_STOP_MAX_I2C_WRITES 4

/** The supervisor's fixed descriptors: the socket to its process, the table, the process's pidfd. */
#define HAPTICS_STOP_SOCKET_FD 3
#define HAPTICS_STOP_TABLE_FD 4
#define HAPTICS_STOP_PIDFD_FD 5

enum haptics_stop_slot_state {
    /** Nothing registered. */
    HAPTICS_STOP_SLOT_FREE = 0,
    /** Being registered: not applied by anyone yet (the actuator was just opened, and is stopped). */
    HAPTICS_STOP_SLOT_FILLING = 1,
    /** Registered: applied at a fatal signal, at exit and by the supervisor. */
    HAPTICS_STOP_SLOT_ARMED = 2,
    /** The owning process is applying it right now (the supervisor treats it as armed). */
    HAPTICS_STOP_SLOT_STOPPING = 3,
};

struct haptics_stop_slot {
    _Atomic uint32_t state;
    /** 1 once the owning process applied this stop itself (a signal, exit), 2 if a step failed. */
    _Atomic uint32_t stopped_by_owner;
    uint32_t lines_first;
    uint32_t line_count;
    uint32_t write_count;
    uint32_t lock_count;
    uint32_t has_report;
    /** Which of the two report buffers is current (the other is the one being rewritten). */
    _Atomic uint32_t report_index;
    uint32_t offsets[HAPTICS_STOP_MAX_LINES];
    /** The physical value of each line that means "inactive" (1 for an active-low line). */
    uint8_t inactive[HAPTICS_STOP_MAX_LINES];
    uint32_t report_length[2];
    /** The hidraw node's device number and inode when it was registered (a reused path is skipped). */
    uint64_t node_device;
    uint64_t node_inode;
    /** The device id, for messages. */
    char label[HAPTICS_STOP_LABEL_SIZE];
    char chip[HAPTICS_STOP_PATH_SIZE];
    char write_path[HAPTICS_STOP_MAX_WRITES][HAPTICS_STOP_PATH_SIZE];
    char write_value[HAPTICS_STOP_MAX_WRITES][HAPTICS_STOP_VALUE_SIZE];
    char lock_path[HAPTICS_STOP_MAX_LOCKS][HAPTICS_STOP_PATH_SIZE];
    char node[HAPTICS_STOP_PATH_SIZE];
    uint8_t report[2][HAPTICS_STOP_REPORT_SIZE];
    /** A driver IC's stop on I²C: its bus node, its 7-bit address and the SMBus byte writes. */
    uint32_t i2c_count;
    uint32_t i2c_address;
    uint8_t i2c_register[HAPTICS_STOP_MAX_I2C_WRITES];
    uint8_t i2c_value[HAPTICS_STOP_MAX_I2C_WRITES];
    /** The bus node's device number when it was registered (a bus that went away is skipped). */
    uint64_t i2c_device;
    char i2c_node[HAPTICS_STOP_PATH_SIZE];
};

struct haptics_stop_table {
    uint32_t magic;
    uint32_t version;
    uint32_t size;
    uint32_t slot_count;
    /** The process the table belongs to. */
    int32_t owner;
    uint32_t reserved;
    struct haptics_stop_slot slots[HAPTICS_STOP_MAX_SLOTS];
};

/**
 * Writes `value` to a sysfs attribute in one write(2) (open with O_TRUNC, as `echo value > path`).
 * Async-signal-safe. Returns 0 or a negative errno.
 */
int haptics_stop_write_attribute(const char *path, const char *value);

/**
 * Writes the slot's I²C stop (each register in order) through `fd`, an i2c-dev descriptor already
 * set to the chip's address. Async-signal-safe (one ioctl per byte). Returns 0 or the first
 * negative errno (every write is tried).
 */
int haptics_stop_write_i2c(int fd, const struct haptics_stop_slot *slot);

/** Opens an i2c-dev node and points it at `address` (never forcing a kernel driver's chip). Returns the fd or a negative errno. */
int haptics_stop_open_i2c(const char *node, unsigned int address);

#endif /* HAPTICS_STOP_TABLE_H */
