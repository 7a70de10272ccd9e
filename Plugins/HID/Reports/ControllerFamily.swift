/// One controller family's report encoder: the same small interface for every family, like the driver
/// table of SDL's HIDAPI joystick drivers, and filled once per family in its own file.
///
/// Everything is static and pure: bytes out for values in. The backend owns the device handle, the
/// clock and the packet counter; it asks the family what to write and when.
///
/// Every report starts with its report id, ready for `hid_write` (hidapi) or `write(2)` on `/dev/hidraw*`.
///
/// ## The sequence counter
///
/// Some reports carry a counter that the controller uses to tell new reports from repeats (the
/// DualSense's Bluetooth tag, the Switch Pro Controller's packet number). The caller owns one counter
/// per device, passes it in, and advances it by one for every report it writes, set-up reports
/// included. Any `UInt8` is accepted; encoders use only the bits their report holds (the low 4 bits for
/// the 0–15 counters), so a plain wrapping `UInt8` counter (`&+= 1`) is all a caller needs. Families
/// without a counter ignore it.
public protocol ControllerFamily: Sendable {
    /// The family's name, for logs: `DualShock 4`.
    static var name: String { get }

    /// The vendor/product ids this family drives, with a model name and the transports each appears on.
    static var models: [ControllerModel] { get }

    /// The channels a drive addresses, in order: `strong`, `weak`, then `left-trigger`, `right-trigger`
    /// where the hardware has trigger motors.
    static var channels: [RumbleChannel] { get }

    /// The shortest time to leave between two writes to one device, in seconds.
    ///
    /// - Parameter transport: How the device is connected.
    static func minimumWriteInterval(for transport: HIDTransport) -> Double

    /// How often, in seconds, an unchanged non-zero drive must be written again to keep the motors
    /// running, or `nil` when one write lasts until the next.
    ///
    /// - Parameter transport: How the device is connected.
    static func refreshInterval(for transport: HIDTransport) -> Double?

    /// What to do, in order, after opening the device and before its first rumble report: reports to
    /// write (paced or not, each perhaps answered) and feature reports to read. The default is none.
    ///
    /// Write *i* is encoded with counter `sequence &+ i`; the caller advances its counter by the
    /// number of writes.
    ///
    /// - Parameters:
    ///   - transport: How the device is connected.
    ///   - sequence: The caller's counter for the first write.
    static func setupPlan(for transport: HIDTransport, sequence: UInt8) -> [SetupStep]

    /// The encoder for a device once its set-up has run: what its rumble reports look like given what
    /// the set-up read. The default encodes with ``rumbleReport(state:transport:sequence:)``.
    ///
    /// - Parameters:
    ///   - transport: How the device is connected.
    ///   - productID: The device's USB product id (models of one family may differ).
    ///   - features: The feature reports the set-up read, by id; a read that failed is absent.
    static func encoder(transport: HIDTransport, productID: UInt16, features: [UInt8: [UInt8]]) -> RumbleEncoder

    /// Every encoder ``encoder(transport:productID:features:)`` may choose on `transport`, whatever
    /// the set-up reads: the reports a backend may write, for checking them against a descriptor.
    /// The default is the one encoder of a family whose set-up chooses nothing.
    static func possibleEncoders(for transport: HIDTransport) -> [RumbleEncoder]

    /// The output report that makes the device render `state`.
    ///
    /// - Parameters:
    ///   - state: The drive to render.
    ///   - transport: How the device is connected.
    ///   - sequence: The caller's counter for this report (see the protocol's discussion).
    static func rumbleReport(state: RumbleState, transport: HIDTransport, sequence: UInt8) -> [UInt8]

    /// Whether ``rumbleReport(state:transport:sequence:)`` puts the counter into the report on
    /// `transport`. When it does not, a state encodes to the same bytes whatever the counter, and a
    /// caller may reuse them (the HID backend does, for the frame a trigger repeats). The default
    /// is `true`, which is always safe.
    ///
    /// - Parameter transport: How the device is connected.
    static func reportCarriesSequence(on transport: HIDTransport) -> Bool

    /// The output report that turns every motor off.
    ///
    /// - Parameters:
    ///   - transport: How the device is connected.
    ///   - sequence: The caller's counter for this report.
    static func stopReport(transport: HIDTransport, sequence: UInt8) -> [UInt8]
}

extension ControllerFamily {
    /// `true`: assume the report carries the counter.
    public static func reportCarriesSequence(on transport: HIDTransport) -> Bool { true }

    /// Every motor off: `rumbleReport` of `RumbleState.off`.
    public static func stopReport(transport: HIDTransport, sequence: UInt8) -> [UInt8] {
        rumbleReport(state: .off, transport: transport, sequence: sequence)
    }

    /// The family's model with this vendor and product id, if it has one.
    ///
    /// - Parameters:
    ///   - vendor: The USB vendor id.
    ///   - product: The USB product id.
    public static func model(vendor: UInt16, product: UInt16) -> ControllerModel? {
        models.first { $0.vendorID == vendor && $0.productID == product }
    }
}

/// One vendor/product id a family drives.
public struct ControllerModel: Sendable, Hashable {
    /// The USB vendor id (also used over Bluetooth): `0x054c` for Sony.
    public var vendorID: UInt16
    /// The USB product id: `0x0ce6` for the DualSense.
    public var productID: UInt16
    /// The human-readable model name: `DualSense Wireless Controller`.
    public var name: String
    /// The transports this id appears on (a Bluetooth-only id never shows up on USB, and the reverse).
    public var transports: Set<HIDTransport>

    /// A model entry.
    ///
    /// - Parameters:
    ///   - vendorID: The USB vendor id.
    ///   - productID: The USB product id.
    ///   - name: The human-readable model name.
    ///   - transports: The transports this id appears on.
    public init(vendorID: UInt16, productID: UInt16, name: String, transports: Set<HIDTransport>) {
        self.vendorID = vendorID
        self.productID = productID
        self.name = name
        self.transports = transports
    }
}

/// One output channel of a controller family, as the backend describes it to the engine.
public struct RumbleChannel: Sendable, Hashable {
    /// What drives the channel.
    public enum Kind: String, Sendable, Hashable {
        /// An eccentric rotating mass motor in the grips: amplitude only.
        case gripMotor
        /// A small motor behind a trigger: amplitude only.
        case triggerMotor
        /// A linear resonant actuator driven with a chosen frequency (Switch HD rumble).
        case linearResonantActuator
    }

    /// The channel name: `strong`, `weak`, `left-trigger` or `right-trigger`.
    public var name: String
    /// What drives the channel.
    public var kind: Kind
    /// Distinct amplitude levels the report can carry, off included (256 for a byte, 101 for 0–100).
    public var amplitudeSteps: Int
    /// The frequencies the channel can be driven at, in Hz, or `nil` when the frequency cannot be chosen.
    public var frequencyRange: ClosedRange<Double>?
    /// The frequency in Hz the channel is driven at by default, or `nil` when it cannot be chosen.
    public var defaultFrequency: Double?

    /// A channel description.
    ///
    /// - Parameters:
    ///   - name: The channel name.
    ///   - kind: What drives the channel.
    ///   - amplitudeSteps: Distinct amplitude levels, off included.
    ///   - frequencyRange: The drivable frequencies in Hz, or `nil`.
    ///   - defaultFrequency: The default frequency in Hz, or `nil`.
    public init(
        name: String, kind: Kind, amplitudeSteps: Int, frequencyRange: ClosedRange<Double>? = nil,
        defaultFrequency: Double? = nil
    ) {
        self.name = name
        self.kind = kind
        self.amplitudeSteps = amplitudeSteps
        self.frequencyRange = frequencyRange
        self.defaultFrequency = defaultFrequency
    }
}
