import DRV260x
import HapticsSupport

/// A board file that cannot be used: the file, the JSON path of the key, what is wrong and what is
/// expected there (``ConfigFileError``).
public typealias BoardFileError = ConfigFileError

/// What each board-file key expects, for error messages (and mirrored in `Hardware/gpio/README.md`).
public enum BoardFileKeys {
    /// The keys, documented in `Hardware/gpio/README.md`.
    public static let keys = ConfigFileKeys(expectations: expectations, guide: "Hardware/gpio/README.md")

    /// Expectations by `parent.key` (more specific) or `key`.
    static let expectations: [String: String] = [
        "format": "\"format\": \(BoardFile.formatVersion)",
        "name": "a short id: lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, at most 48 characters",
        "description": "a string describing it for people",
        "gpio_chip": "a GPIO chip name such as \"gpiochip0\" (see `gpiodetect`) or a path such as \"/dev/gpiochip0\"",
        "pwm_chip": "a sysfs PWM chip name \"pwmchipN\" (see `ls /sys/class/pwm`)",
        "actuators": "an array of 1...16 actuator objects",
        "topology": "one of: " + topologies.joined(separator: ", "),
        "actuator": "\"lra\" or \"erm\"",
        "gpio": "an object with \"chip\" and the lines the topology uses (\"enable\", \"direction\"; for topology i2c the chip's EN: \"enable\" only)",
        "gpio.chip": "a GPIO chip name such as \"gpiochip0\" (see `gpiodetect`) or a path such as \"/dev/gpiochip0\"",
        "enable": "a line offset (17), a line name (\"GPIO17\", see `gpioinfo`), or {\"line\": 17, \"active_low\": true}",
        "direction": "a line offset (27), a line name (\"GPIO27\", see `gpioinfo`), or {\"line\": 27, \"active_low\": true}",
        "line": "a line offset (17) or a line name (\"GPIO17\")",
        "active_low": "true when the line is active low, else false",
        "pwm": "an object with \"chip\", \"channel\" and (except lra-hbridge) \"frequency_hz\"",
        "pwm.chip": "a sysfs PWM chip name \"pwmchipN\" (see `ls /sys/class/pwm`)",
        "channel": "the channel number on the PWM chip, 0 ... npwm-1 (see /sys/class/pwm/pwmchipN/npwm)",
        "frequency_hz": "the PWM carrier frequency in Hz, e.g. 20000 (above hearing; a DRV2603 accepts 10-250 kHz)",
        "polarity": "\"normal\" or \"inversed\"",
        "direction_channel": "the pwm-vibrator direction channel on the same chip, different from \"channel\"",
        "direction_duty": "the direction channel's duty cycle while vibrating, 0 ... 1 (default 0.5)",
        "driver": "an object with \"zero_duty\", \"full_duty\" and \"enable_to_ready_us\" (driver-ic only)",
        "zero_duty": "the duty cycle at which the driver IC outputs nothing, 0 ... 0.95 (0.5 for a DRV2603 in LRA mode)",
        "full_duty": "the duty cycle for full-scale output, above zero_duty, at most 1",
        "enable_to_ready_us": "the driver IC's documented time from enable to accepting input, in microseconds (0 ... 1000000)",
        "limits": "an object with at least \"rated_level\" and \"max_continuous_ms\"",
        "resonant_frequency_hz": "the LRA's resonant frequency in Hz from its data sheet, e.g. 175 (20 ... 1000)",
        "nominal_frequency_hz": "the ERM's vibration frequency in Hz at its rated level, e.g. 200 (1 ... 1000)",
        "frequency_min_hz": "the lowest drive frequency in Hz for an H-bridge LRA, at most resonant_frequency_hz",
        "frequency_max_hz": "the highest drive frequency in Hz for an H-bridge LRA, at least resonant_frequency_hz",
        "rated_level": "the actuator's rated voltage divided by the full-scale drive voltage (0.6 for a 3 V motor on 5 V), 0.01 ... 1",
        "overdrive_level": "the level allowed during a kick at the start of a drive, rated_level ... 1",
        "overdrive_max_ms": "how long a kick may last in ms, 1 ... 200 (LRAs about two cycles, ~10 ms; ERMs 20-50 ms)",
        "max_continuous_ms": "the longest drive the actuator tolerates in ms, 10 ... 600000 (5000 is a safe start)",
        "rest_ms": "how long the output must stay off to end a continuous drive, in ms (0 ... 60000, default 20)",
        "dead_zone": "the level below which the motor does not move, 0 ... 0.9 and below rated_level",
        "i2c": "an object with \"bus\" and \"chip\" (topology i2c only): {\"bus\": 1, \"chip\": \"drv2605l\"}",
        "i2c.bus": "the I2C bus: its number N of /dev/i2c-N (1 on a Raspberry Pi's pins 3 and 5; see `i2cdetect -l`) or the path /dev/i2c-N",
        "i2c.address": "the chip's 7-bit address: \"0x5a\" or 90, the only address a DRV260x answers at",
        "i2c.chip": "one of: " + DRV260x.Chip.allCases.map(\.rawValue).joined(separator: ", "),
        "drive": "an object with \"rated_voltage\" and \"overdrive_voltage\" (topology i2c only), and optionally \"loop\" and \"library\"",
        "rated_voltage": "the motor's rated voltage in volts from its data sheet (an ERM's average, an LRA's RMS), e.g. 2.0",
        "overdrive_voltage": "the highest voltage the chip may apply in volts (an ERM's average, an LRA's peak), at least rated_voltage, e.g. 2.5",
        "loop": "\"closed\" (back-EMF feedback: the chip kicks, brakes and tracks an LRA's resonance; the default) or \"open\"",
        "library": "the ROM effect library: \"lra\" for an LRA (the default), \"a\" ... \"f\" for an ERM (default \"a\"; \"f\" on a DRV2605L only)",
        "update_interval_ms": "the shortest time between two updates in ms, 0.1 ... 1000",
        "amplitude_steps": "the number of distinct amplitude levels, 2 ... 65536 (default 256)",
    ]

    /// Every topology a board file may name: the GPIO ones, and `i2c` (a driver IC on I²C).
    public static let topologies = Topology.allCases.map(\.rawValue) + [i2cTopology]
    /// The topology of an actuator behind a driver IC on I²C (``I2CActuatorConfig``).
    public static let i2cTopology = "i2c"

    /// What is expected at a JSON path (`$.actuators[0].pwm.chip` → the PWM chip's expectation).
    public static func expectation(forPath path: String) -> String? { keys.expectation(forPath: path) }
}
