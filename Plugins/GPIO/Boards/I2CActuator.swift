import DRV260x

/// An actuator driven by a haptic driver IC on I²C (a DRV2605L breakout): the topology `i2c` of a
/// board file, served by the `i2c` backend as `i2c:BOARD:ACTUATOR`.
///
/// ```json
/// {"name": "lra", "topology": "i2c", "actuator": "lra",
///  "i2c": {"bus": 1, "chip": "drv2605l"},
///  "drive": {"rated_voltage": 2.0, "overdrive_voltage": 2.5, "loop": "closed"},
///  "limits": {"resonant_frequency_hz": 170, "max_continuous_ms": 5000}}
/// ```
public struct I2CActuatorConfig: Sendable, Hashable {
    /// The actuator's name, the last part of its device id.
    public var name: String
    /// What it is, for people (the device's name).
    public var description: String?
    /// The bus's character device, `/dev/i2c-N`.
    public var busPath: String
    /// The chip's 7-bit address (0x5A for a DRV260x).
    public var address: UInt8
    /// The chip, the motor, its voltages, the loop and the ROM library.
    public var drive: DRV260xDrive
    /// The limits the backend holds the drive to: the rated level, the longest continuous drive
    /// and its rest (levels are fractions of RTP full scale).
    public var limits: ActuatorLimits
    /// The GPIO line wired to the chip's EN (``GPIOConfig/enable``), nil when EN is tied high.
    /// With it, idle is EN low (the chip's shutdown) as well as standby.
    public var enable: GPIOConfig?
    /// Shortest interval between two RTP updates, in nanoseconds.
    public var updateIntervalNanoseconds: UInt64
    /// The JSON path of this actuator in its file (`$.actuators[0]`), for errors.
    public var key: String

    /// An I²C actuator.
    public init(
        name: String, description: String? = nil, busPath: String, address: UInt8 = DRV260x.address, drive: DRV260xDrive, limits: ActuatorLimits,
        enable: GPIOConfig? = nil, updateIntervalNanoseconds: UInt64 = 2_000_000, key: String
    ) {
        self.enable = enable
        self.name = name
        self.description = description
        self.busPath = busPath
        self.address = address
        self.drive = drive
        self.limits = limits
        self.updateIntervalNanoseconds = updateIntervalNanoseconds
        self.key = key
    }

    /// The bus number of `/dev/i2c-N`, if the path has that form.
    public var busNumber: Int? {
        guard busPath.hasPrefix("/dev/i2c-") else { return nil }
        return Int(busPath.dropFirst("/dev/i2c-".count))
    }

    /// The kernel's name of the chip's client, `N-00AA` (`/sys/bus/i2c/devices/1-005a`), if the bus has a number.
    public var clientName: String? {
        busNumber.map { number in
            let digits = String(address, radix: 16)
            return "\(number)-" + String(repeating: "0", count: 4 - digits.count) + digits
        }
    }
}

extension BoardFile {
    /// The device id of the I²C `actuator` on this board: `i2c:BOARD:ACTUATOR`.
    public func deviceID(of actuator: I2CActuatorConfig) -> String {
        "i2c:\(name):\(actuator.name)"
    }
}
