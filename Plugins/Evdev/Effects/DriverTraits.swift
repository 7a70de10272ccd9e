/// What the backend knows about a kernel force-feedback driver beyond its capability bits: how many
/// amplitude levels reach the hardware, how fast it may be updated, what kind of actuator sits behind
/// it, and how a magnitude must be written for it. Keyed by the driver's name as sysfs shows it (the
/// `driver` link of the input device's parent: `xpad`, `playstation`, `pwm-vibrator`).
///
/// Sources are the drivers in Linux 6.1 (`drivers/input/…`, `drivers/hid/…`): what each
/// `play_effect` does with `strong_magnitude`/`weak_magnitude`.
public struct DriverTraits: Sendable, Hashable {
    /// What kind of actuator a single-motor device behind this driver usually is.
    public enum Actuator: String, Sendable, Hashable {
        /// An eccentric rotating mass motor.
        case erm
        /// A linear resonant actuator.
        case lra
        /// A piezo actuator.
        case piezo
        /// Not known from the driver alone.
        case unknown
    }

    /// How an amplitude becomes the 16-bit rumble magnitude.
    public enum RumbleEncoding: Sendable, Hashable {
        /// `amplitude × 0xFFFF`.
        case linear
        /// The 8-bit level in both bytes (`level × 0x0101`): drv260x in Linux ≤ 6.4 writes the whole
        /// magnitude to an 8-bit register (so its low byte is the level), and the 2023 fix ("Input:
        /// drv260x - fix magnitude handling") takes the high byte; repeating the byte is right for both.
        case byteInBothHalves
    }

    /// Distinct amplitude levels that reach the motor, off included.
    public var amplitudeSteps: UInt32
    /// Shortest interval between two updates, in milliseconds.
    public var minimumIntervalMilliseconds: UInt32
    /// The actuator behind a single-motor device.
    public var actuator: Actuator
    /// How magnitudes are written.
    public var encoding: RumbleEncoding

    /// Traits.
    public init(amplitudeSteps: UInt32, minimumIntervalMilliseconds: UInt32 = 10, actuator: Actuator = .unknown, encoding: RumbleEncoding = .linear) {
        self.amplitudeSteps = amplitudeSteps
        self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
        self.actuator = actuator
        self.encoding = encoding
    }

    /// The traits of `driver`, or the generic ones: the API's own 16-bit resolution and a 10 ms
    /// interval, which every driver in the table below tolerates.
    public static func of(driver: String?) -> DriverTraits {
        driver.flatMap { known[$0] } ?? DriverTraits(amplitudeSteps: 65536)
    }

    /// The table.
    public static let known: [String: DriverTraits] = [
        // Game pads. xpad sends strong/256 to Xbox 360 pads and strong/512 to Xbox One and Series pads
        // (GIP), which take 0–100, so those saturate at 100/127 of full scale: the shipped profile
        // Hardware/profiles/evdev_xpad_*.json maps around it.
        "xpad": DriverTraits(amplitudeSteps: 256),
        // hid-playstation (DualSense) and hid-sony (DualShock 4): magnitude / 256 into a byte.
        "playstation": DriverTraits(amplitudeSteps: 256),
        "sony": DriverTraits(amplitudeSteps: 256),
        // hid-microsoft (Xbox pads over Bluetooth): magnitude × 100 / 0xFFFF; the firmware misbehaves when
        // updated faster than every 20–50 ms (xpadneo#337, SDL#6435).
        "microsoft": DriverTraits(amplitudeSteps: 101, minimumIntervalMilliseconds: 50),
        // hid-nintendo: magnitude × 1003 / 0xFFFF looked up in a 101-entry amplitude table; a queue of
        // 8 packets is sent at most every 50 ms (JC_RUMBLE_PERIOD_MS), so faster updates only pile up.
        "nintendo": DriverTraits(amplitudeSteps: 101, minimumIntervalMilliseconds: 50),
        // Phone and handheld vibrators.
        "gpio-vibrator": DriverTraits(amplitudeSteps: 2, actuator: .erm),  // on while either magnitude is non-zero
        "pwm-vibrator": DriverTraits(amplitudeSteps: 65536, actuator: .erm),  // duty = magnitude × period / 0xFFFF
        "regulator-haptic": DriverTraits(amplitudeSteps: 65536, actuator: .erm),  // voltage between min and max
        "drv260x-haptics": DriverTraits(amplitudeSteps: 256, encoding: .byteInBothHalves),  // real-time playback register, 8 bits
        "drv2665-haptics": DriverTraits(amplitudeSteps: 2, actuator: .piezo),  // plays a fixed waveform while on
        "drv2667-haptics": DriverTraits(amplitudeSteps: 256, actuator: .piezo, encoding: .byteInBothHalves),  // the same 8-bit register write
        "max77693-haptic": DriverTraits(amplitudeSteps: 65536, actuator: .erm),
        "max8997-haptic": DriverTraits(amplitudeSteps: 65536, actuator: .erm),
        "twl4030-vibra": DriverTraits(amplitudeSteps: 256, actuator: .erm),
        "twl6040-vibra": DriverTraits(amplitudeSteps: 65536, actuator: .erm),
        // da7280: FF_CONSTANT level × 254 / 0x7FFF in its direct-override mode; refuses an upload while
        // playing (-EBUSY), which the backend answers with stop, upload, play.
        "da7280": DriverTraits(amplitudeSteps: 255, actuator: .lra),
    ]
}
