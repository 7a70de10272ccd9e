/// Microsoft Xbox One S, Elite Series 2 and Xbox Series X|S controllers over Bluetooth.
///
/// Four motors: two in the grips, one behind each trigger. Over USB these pads speak GIP, not HID, so
/// this family only lists Bluetooth ids.
///
/// Sources: the report descriptors in Tests/Fixtures/hid-descriptors (`xbox_*_bt.rdesc.txt`: output
/// report 0x03 on the PID page, usage 0x97 "DC Enable Actuators" 4 bits, 4 magnitudes with Logical
/// Maximum 100, usage 0x50 "Duration" with unit exponent −2 s, usage 0xA7 "Start Delay", usage 0x7C
/// "Loop Count"); xpadneo (xpadneo.h `struct xpadneo_rumble_report`, rumble.c); SDL_hidapi_xboxone.c.
///
/// ## Layout (9 bytes)
///
/// `[0]` 0x03, `[1]` enable bits (0x01 weak, 0x02 strong, 0x04 right trigger, 0x08 left trigger),
/// `[2]` left trigger, `[3]` right trigger, `[4]` strong, `[5]` weak (each 0–100), `[6]` duration in
/// 10 ms units, `[7]` start delay in 10 ms units, `[8]` loop count.
///
/// ## Duration: bounded, refreshed
///
/// xpadneo and SDL ask for duration 0xFF with loop count 0xEB ("about an hour") and rely on the host to
/// send the stop. If our process dies between the two, the pad would rumble on. This encoder instead asks
/// for `rumbleDuration` (1.5 s) played once and declares a 1 s `refreshInterval`, so a live backend
/// refreshes before the effect ends and a dead one leaves the pad still within 1.5 s. SDL's GIP (USB)
/// driver bounds its direct-motor durations the same way (2 s resend, 2.05 s duration).
///
/// Every report enables all four motors (0x0F), as SDL does, so each report states the whole drive and a
/// refresh is idempotent. (xpadneo clears the bits of unchanged motors to spare firmware that crashes
/// under rapid reprogramming; 1 s refreshes and the 50 ms write spacing stay far from that rate. Some
/// clones ignore timing fields, xpadneo's `XPADNEO_QUIRK_NO_PULSE`: for them the explicit stop report
/// still stops the motors.)
public enum XboxOneBluetooth: ControllerFamily {
    /// The output report id.
    public static let reportID: UInt8 = 0x03
    /// The output report length in bytes, id included.
    public static let reportLength = 9
    /// The enable bits: weak (0x01), strong (0x02), right trigger (0x04), left trigger (0x08).
    public static let enableAllMotors: UInt8 = 0x0F
    /// The largest magnitude (the descriptor's Logical Maximum).
    public static let maximumMagnitude: UInt8 = 100
    /// How long one report keeps the motors running, in seconds.
    public static let rumbleDuration: Double = 1.5
    /// `rumbleDuration` in the report's 10 ms units.
    public static let rumbleDurationUnits = UInt8((rumbleDuration * 100).rounded())

    /// `Xbox Wireless Controller (Bluetooth)`.
    public static let name = "Xbox Wireless Controller (Bluetooth)"

    /// The Bluetooth product ids, as SDL's usb_ids.h names them and xpadneo's id table lists them.
    /// The Xbox Adaptive Controller's Bluetooth ids (0x0B0C, 0x0B21) are left out: it has no motors.
    public static let models: [ControllerModel] = bluetoothProducts.map {
        ControllerModel(vendorID: 0x045E, productID: $0.id, name: $0.name, transports: [.bluetooth])
    }

    private static let bluetoothProducts: [(id: UInt16, name: String)] = [
        (0x02E0, "Xbox One S Controller (1708, early firmware)"),
        (0x02FD, "Xbox One S Controller (1708)"),
        (0x0B20, "Xbox One S Controller (1708, BLE firmware)"),
        (0x0B05, "Xbox Elite Wireless Controller Series 2"),
        (0x0B22, "Xbox Elite Wireless Controller Series 2 (BLE firmware)"),
        (0x0B13, "Xbox Wireless Controller (Series X|S)"),
    ]

    /// `strong`, `weak`, `left-trigger`, `right-trigger`, each 0–100 (101 steps).
    public static let channels: [RumbleChannel] = [
        RumbleChannel(name: "strong", kind: .gripMotor, amplitudeSteps: 101),
        RumbleChannel(name: "weak", kind: .gripMotor, amplitudeSteps: 101),
        RumbleChannel(name: "left-trigger", kind: .triggerMotor, amplitudeSteps: 101),
        RumbleChannel(name: "right-trigger", kind: .triggerMotor, amplitudeSteps: 101),
    ]

    /// 50 ms: SDL leaves the pad busy for 50 ms after each Bluetooth rumble write
    /// (SDL_hidapi_xboxone.c, `RUMBLE_BUSY_TIME_MS = is_bluetooth ? 50 : 10`).
    public static func minimumWriteInterval(for transport: HIDTransport) -> Double { 0.050 }

    /// 1 s, within the 1.5 s `rumbleDuration` each report asks for.
    public static func refreshInterval(for transport: HIDTransport) -> Double? { 1.0 }

    /// No counter.
    public static func reportCarriesSequence(on transport: HIDTransport) -> Bool { false }

    /// Report 0x03 with all four motors enabled for `rumbleDuration`; the same on every transport, and
    /// `sequence` is unused.
    public static func rumbleReport(state: RumbleState, transport: HIDTransport, sequence: UInt8) -> [UInt8] {
        [
            reportID,
            enableAllMotors,
            Quantize.level(state.leftTrigger ?? 0, maximum: maximumMagnitude),
            Quantize.level(state.rightTrigger ?? 0, maximum: maximumMagnitude),
            Quantize.level(state.strong, maximum: maximumMagnitude),
            Quantize.level(state.weak, maximum: maximumMagnitude),
            rumbleDurationUnits,
            0,  // start delay
            0,  // loop count: play once
        ]
    }
}
