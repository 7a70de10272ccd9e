/// A board file: the actuators one single-board computer drives through GPIO lines and sysfs PWM,
/// how each is wired (its ``Topology``) and the limits that keep it from harm.
///
/// Board files are JSON (`Hardware/gpio/README.md` documents every key); ``BoardFile/parse(_:path:)``
/// reads and validates one, and ``BoardSearch`` finds them in `/etc/haptics/boards.d`,
/// `$XDG_CONFIG_HOME/haptics/boards.d` and the backend setting `gpio.boards`. Each actuator becomes
/// one device, `gpio:BOARD:ACTUATOR`.
public struct BoardFile: Sendable, Hashable {
    /// The only format version this code reads (the `format` key).
    public static let formatVersion = 1

    /// Where the file was read from (used in every error and log line).
    public var path: String
    /// The board's name, the middle part of its device ids (`rpi-drv2603`).
    public var name: String
    /// What the board is, for people.
    public var description: String?
    /// The actuators on GPIO lines and PWM channels (the `gpio` backend's), in file order.
    public var actuators: [ActuatorConfig]
    /// The actuators behind driver ICs on I²C (topology `i2c`, the `i2c` backend's), in file order.
    public var i2cActuators: [I2CActuatorConfig]

    /// A board.
    public init(path: String, name: String, description: String?, actuators: [ActuatorConfig], i2cActuators: [I2CActuatorConfig] = []) {
        self.path = path
        self.name = name
        self.description = description
        self.actuators = actuators
        self.i2cActuators = i2cActuators
    }

    /// The device id of `actuator` on this board: `gpio:BOARD:ACTUATOR`.
    public func deviceID(of actuator: ActuatorConfig) -> String {
        "gpio:\(name):\(actuator.name)"
    }
}

/// How an actuator is wired to the board.
public enum Topology: String, Sendable, Hashable, CaseIterable {
    /// A haptic driver IC with a PWM amplitude input and an enable line (TI DRV2603 class). The IC
    /// drives the motor itself (an LRA at its resonance); the duty cycle between
    /// ``DriverICConfig/zeroDuty`` and ``DriverICConfig/fullDuty`` sets the amplitude.
    case driverIC = "driver-ic"
    /// Linux's `pwm-vibrator` binding: an optional enable line, the PWM duty as amplitude, and an
    /// optional second "direction" PWM that runs at a fixed duty while the motor vibrates.
    case pwmVibrator = "pwm-vibrator"
    /// An ERM motor switched by a transistor: the PWM duty is the motor's speed; below its dead
    /// zone it does not turn.
    case ermTransistor = "erm-transistor"
    /// An LRA driven directly through an H-bridge: the PWM period is the drive frequency
    /// (resonance, or what sharpness asks for), the duty the amplitude; optional enable (nSLEEP)
    /// and direction (PHASE) lines.
    case lraHBridge = "lra-hbridge"
}

/// The kind of motor.
public enum ActuatorType: String, Sendable, Hashable, CaseIterable {
    /// Linear resonant actuator.
    case lra
    /// Eccentric rotating mass motor.
    case erm
}

/// A GPIO line: its offset on the chip or its name (`GPIO17`, resolved through the chip), and
/// whether it is active low.
public struct LineConfig: Sendable, Hashable, CustomStringConvertible {
    /// How the line is named in the board file.
    public enum Reference: Sendable, Hashable {
        /// The line's offset on its chip (0…).
        case offset(Int)
        /// The line's name as the chip reports it (`GPIO17` on a Raspberry Pi).
        case name(String)
    }

    /// The line.
    public var reference: Reference
    /// True when the line is active low: "active" drives it low.
    public var activeLow: Bool
    /// The board-file key it came from (`$.actuators[0].gpio.enable`), for errors.
    public var key: String

    /// A line.
    public init(reference: Reference, activeLow: Bool = false, key: String) {
        self.reference = reference
        self.activeLow = activeLow
        self.key = key
    }

    /// `line 17` or `line "GPIO17"`, with `(active low)` when it is.
    public var description: String {
        let line =
            switch reference {
            case .offset(let offset): "line \(offset)"
            case .name(let name): "line \"\(name)\""
            }
        return activeLow ? line + " (active low)" : line
    }
}

/// The GPIO side of an actuator: one chip and the lines the topology uses.
public struct GPIOConfig: Sendable, Hashable {
    /// The chip: a name looked up in the chip directory (`gpiochip0` → `/dev/gpiochip0`) or an absolute path.
    public var chip: String
    /// Active while the actuator is awake (prepared or driving); inactive when idle.
    public var enable: LineConfig?
    /// Active while an H-bridge drives (its PHASE/direction input); inactive otherwise.
    public var direction: LineConfig?
    /// The board-file key of the chip, for errors.
    public var chipKey: String

    /// A GPIO configuration.
    public init(chip: String, enable: LineConfig?, direction: LineConfig?, chipKey: String) {
        self.chip = chip
        self.enable = enable
        self.direction = direction
        self.chipKey = chipKey
    }

    /// The lines in request order: enable first, then direction.
    public var lines: [(role: LineRole, line: LineConfig)] {
        var result: [(LineRole, LineConfig)] = []
        if let enable { result.append((.enable, enable)) }
        if let direction { result.append((.direction, direction)) }
        return result
    }
}

/// What a GPIO line does for an actuator.
public enum LineRole: String, Sendable, Hashable, CaseIterable {
    /// The enable (driver IC `EN`, pwm-vibrator enable GPIO, H-bridge `nSLEEP`).
    case enable
    /// The H-bridge direction (`PHASE`).
    case direction
}

/// Polarity of a PWM output, as sysfs spells it.
public enum PWMPolarity: String, Sendable, Hashable, CaseIterable {
    /// High for the duty cycle, then low.
    case normal
    /// Low for the duty cycle, then high (an inverting transistor stage).
    case inversed
}

/// The PWM side of an actuator.
public struct PWMConfig: Sendable, Hashable {
    /// The chip's sysfs name, `pwmchipN` (under `<sysfs root>/class/pwm/`).
    public var chip: String
    /// The channel on the chip (0…npwm−1) carrying the amplitude.
    public var channel: Int
    /// The carrier frequency in Hz for topologies whose duty cycle is the amplitude; nil for
    /// ``Topology/lraHBridge``, whose period is the drive frequency.
    public var carrierFrequency: Double?
    /// The output polarity.
    public var polarity: PWMPolarity
    /// The pwm-vibrator direction channel on the same chip, if any.
    public var directionChannel: Int?
    /// The direction channel's duty while vibrating, 0…1 of its period (default 0.5).
    public var directionDuty: Double
    /// Board-file keys, for errors: the chip's and the channel's.
    public var chipKey: String
    /// The board-file key of the channel.
    public var channelKey: String

    /// A PWM configuration.
    public init(
        chip: String, channel: Int, carrierFrequency: Double?, polarity: PWMPolarity = .normal, directionChannel: Int? = nil,
        directionDuty: Double = 0.5, chipKey: String, channelKey: String
    ) {
        self.chip = chip
        self.channel = channel
        self.carrierFrequency = carrierFrequency
        self.polarity = polarity
        self.directionChannel = directionChannel
        self.directionDuty = directionDuty
        self.chipKey = chipKey
        self.channelKey = channelKey
    }

    /// The carrier period in nanoseconds, if the topology has a carrier.
    public var carrierPeriodNanoseconds: UInt64? {
        carrierFrequency.map { periodNanoseconds(forFrequency: $0) }
    }
}

/// The PWM period for a frequency, in nanoseconds (rounded, at least 1).
public func periodNanoseconds(forFrequency hertz: Double) -> UInt64 {
    UInt64(max(1, (1e9 / hertz).rounded()))
}

/// What a driver IC needs beyond its PWM and enable line.
public struct DriverICConfig: Sendable, Hashable {
    /// The duty cycle (0…1) at which the IC produces no output: 0.5 for a DRV2603 in LRA mode.
    public var zeroDuty: Double
    /// The duty cycle (0…1) at which it produces full-scale output.
    public var fullDuty: Double
    /// The IC's documented time from its enable line going active to accepting input, in nanoseconds.
    public var enableToReadyNanoseconds: UInt64

    /// A driver IC.
    public init(zeroDuty: Double = 0.5, fullDuty: Double = 1, enableToReadyNanoseconds: UInt64 = 0) {
        self.zeroDuty = zeroDuty
        self.fullDuty = fullDuty
        self.enableToReadyNanoseconds = enableToReadyNanoseconds
    }
}

/// What the actuator tolerates and how it resonates.
///
/// Levels are fractions (0…1) of the topology's full-scale drive: 100 % duty for an ERM or a
/// pwm-vibrator, the driver IC's ``DriverICConfig/fullDuty``, a 50 % square wave for an H-bridge.
public struct ActuatorLimits: Sendable, Hashable {
    /// Resonant frequency in Hz (LRAs).
    public var resonantFrequency: Double?
    /// Frequency in Hz an ERM vibrates at its rated level, if known.
    public var nominalFrequency: Double?
    /// The drive frequencies an H-bridge LRA accepts, in Hz.
    public var frequencyRange: ClosedRange<Double>?
    /// Highest sustained level, 0…1 of full scale (the rated voltage over the supply voltage).
    public var ratedLevel: Double
    /// Highest level during a kick at the start of a drive, ``ratedLevel``…1.
    public var overdriveLevel: Double
    /// Longest kick, in nanoseconds; after it the level is held at ``ratedLevel``.
    public var overdriveMaxNanoseconds: UInt64
    /// Longest continuous drive, in nanoseconds; the output is cut there.
    public var maxContinuousNanoseconds: UInt64
    /// How long the output must stay off to end a continuous drive (and re-arm after a cut), in nanoseconds.
    public var restNanoseconds: UInt64
    /// Level (0…1) below which the motor does not move; non-zero drive starts there.
    public var deadZone: Double

    /// Limits.
    public init(
        resonantFrequency: Double? = nil, nominalFrequency: Double? = nil, frequencyRange: ClosedRange<Double>? = nil, ratedLevel: Double,
        overdriveLevel: Double? = nil, overdriveMaxNanoseconds: UInt64 = 0, maxContinuousNanoseconds: UInt64, restNanoseconds: UInt64 = 20_000_000,
        deadZone: Double = 0
    ) {
        self.resonantFrequency = resonantFrequency
        self.nominalFrequency = nominalFrequency
        self.frequencyRange = frequencyRange
        self.ratedLevel = ratedLevel
        self.overdriveLevel = max(overdriveLevel ?? ratedLevel, ratedLevel)
        self.overdriveMaxNanoseconds = overdriveMaxNanoseconds
        self.maxContinuousNanoseconds = maxContinuousNanoseconds
        self.restNanoseconds = restNanoseconds
        self.deadZone = deadZone
    }
}

/// One actuator of a board: wiring, topology, limits and timing.
public struct ActuatorConfig: Sendable, Hashable {
    /// The actuator's name, the last part of its device id (`lra`).
    public var name: String
    /// What it is, for people (the device's name).
    public var description: String?
    /// How it is wired.
    public var topology: Topology
    /// The motor.
    public var actuator: ActuatorType
    /// Its GPIO lines, if the topology uses any.
    public var gpio: GPIOConfig?
    /// Its PWM channel(s).
    public var pwm: PWMConfig
    /// The driver IC (``Topology/driverIC`` only).
    public var driver: DriverICConfig?
    /// Its limits.
    public var limits: ActuatorLimits
    /// Shortest interval between two updates, in nanoseconds.
    public var updateIntervalNanoseconds: UInt64
    /// Distinct amplitude levels reported to the engine, off included.
    public var amplitudeSteps: Int
    /// The JSON path of this actuator in its file (`$.actuators[1]`), for errors.
    public var key: String

    /// An actuator.
    public init(
        name: String, description: String? = nil, topology: Topology, actuator: ActuatorType, gpio: GPIOConfig?, pwm: PWMConfig,
        driver: DriverICConfig? = nil, limits: ActuatorLimits, updateIntervalNanoseconds: UInt64 = 2_000_000, amplitudeSteps: Int = 256,
        key: String
    ) {
        self.name = name
        self.description = description
        self.topology = topology
        self.actuator = actuator
        self.gpio = gpio
        self.pwm = pwm
        self.driver = driver
        self.limits = limits
        self.updateIntervalNanoseconds = updateIntervalNanoseconds
        self.amplitudeSteps = amplitudeSteps
        self.key = key
    }

    /// The frequencies the engine may choose, in Hz: only an H-bridge LRA has a choice.
    public var frequencyRange: ClosedRange<Double>? {
        topology == .lraHBridge ? limits.frequencyRange : nil
    }

    /// The frequency the actuator runs at when none is chosen, in Hz: resonance for an LRA, the
    /// nominal frequency for an ERM, 0 when unknown.
    public var defaultFrequency: Double {
        limits.resonantFrequency ?? limits.nominalFrequency ?? 0
    }

    /// The documented wake time of the hardware (the driver IC's enable-to-ready), in nanoseconds.
    public var documentedWakeNanoseconds: UInt64 {
        driver?.enableToReadyNanoseconds ?? 0
    }
}
