/// Sony DualShock 4 (PS4 controller), both generations and the USB wireless adapter.
///
/// Two grip motors, one byte each. Sources (the Linux kernel's drivers/hid/hid-playstation.c, which
/// drives the DualShock 4 since 6.2; hid-sony.c before): `struct dualshock4_output_report_common/_usb/_bt`,
/// `DS4_OUTPUT_*` defines, `dualshock4_output_worker`.
///
/// ## Layout
///
/// USB, report 0x05, 32 bytes: `[1]` valid_flag0, `[4]` weak motor (motor_right), `[5]` strong motor
/// (motor_left), the rest 0. Bluetooth, report 0x11, 78 bytes: `[1]` hw_control 0xC0, `[3]` valid_flag0,
/// `[6]` weak, `[7]` strong, `[74…77]` CRC-32 (seed 0xA2) little-endian.
///
/// ## Why only the motor flag
///
/// valid_flag0 tells the pad which blocks of the report to apply: 0x01 motors, 0x02 lightbar colour,
/// 0x04 lightbar blink. This encoder sets only 0x01, so the zeros in the lightbar bytes are ignored and
/// the lightbar keeps whatever colour the kernel driver (hid-playstation stays bound while we write to
/// hidraw) or the user set. The kernel instead sets 0x01 and 0x02 together, resending its own remembered
/// colour, because some third-party DS4 clones cancel one block when the other is written alone
/// (upstream patch "hid-playstation: DS4: Update rumble and lightbar together", 2024). We do not know
/// the current colour, and writing 0x02 with zeros would turn a genuine pad's lightbar off; the cost is
/// that such a clone may drop its lightbar colour when it rumbles.
///
/// On Bluetooth, hw_control is 0x80 (HID data) | 0x40 (CRC present) with the poll-interval bits 0, which
/// is what the kernel writes on every report that does not change the poll interval.
public enum DualShock4: ControllerFamily {
    /// The USB output report id.
    public static let usbReportID: UInt8 = 0x05
    /// The USB output report length in bytes, id included (the descriptor declares 31 data bytes).
    public static let usbReportLength = 32
    /// The Bluetooth output report id.
    public static let bluetoothReportID: UInt8 = 0x11
    /// The Bluetooth output report length in bytes, id and CRC included.
    public static let bluetoothReportLength = 78
    /// The Bluetooth hw_control byte: HID data (0x80) and CRC (0x40), poll interval left unchanged.
    public static let bluetoothHardwareControl: UInt8 = 0xC0
    /// valid_flag0: apply the motor bytes (0x01), and nothing else.
    public static let motorFlag: UInt8 = 0x01

    /// `DualShock 4`.
    public static let name = "DualShock 4"

    /// 054c:05c4 (CUH-ZCT1), 054c:09cc (CUH-ZCT2) on USB and Bluetooth, and the USB wireless adapter
    /// 054c:0ba0 (hid-ids.h `USB_DEVICE_ID_SONY_PS4_CONTROLLER_DONGLE`, matched by hid-playstation as a
    /// USB DualShock 4; it speaks the USB reports for the pad paired to it).
    public static let models: [ControllerModel] = [
        ControllerModel(
            vendorID: 0x054C, productID: 0x05C4, name: "DualShock 4 (CUH-ZCT1)", transports: [.usb, .bluetooth]),
        ControllerModel(
            vendorID: 0x054C, productID: 0x09CC, name: "DualShock 4 (CUH-ZCT2)", transports: [.usb, .bluetooth]),
        ControllerModel(
            vendorID: 0x054C, productID: 0x0BA0, name: "DualShock 4 USB Wireless Adaptor", transports: [.usb]),
    ]

    /// `strong` and `weak`, one byte each (256 steps).
    public static let channels: [RumbleChannel] = [
        RumbleChannel(name: "strong", kind: .gripMotor, amplitudeSteps: 256),
        RumbleChannel(name: "weak", kind: .gripMotor, amplitudeSteps: 256),
    ]

    /// 10 ms on both transports: the pause SDL's HIDAPI rumble thread leaves after every write
    /// (SDL_hidapi_rumble.c, `SDL_Delay(10)`); the kernel does not throttle.
    public static func minimumWriteInterval(for transport: HIDTransport) -> Double { 0.010 }

    /// 2 s: the DualShock 4 stops a rumble after about 5 s, so SDL resends every 2 s
    /// (SDL_sysjoystick.h, `SDL_RUMBLE_RESEND_MS`).
    public static func refreshInterval(for transport: HIDTransport) -> Double? { 2.0 }

    /// No counter on either transport.
    public static func reportCarriesSequence(on transport: HIDTransport) -> Bool { false }

    /// Report 0x05 (USB) or 0x11 (Bluetooth) with the motor flag and both motor bytes; `sequence` is unused.
    public static func rumbleReport(state: RumbleState, transport: HIDTransport, sequence: UInt8) -> [UInt8] {
        let strong = Quantize.level(state.strong, maximum: 255)
        let weak = Quantize.level(state.weak, maximum: 255)
        switch transport {
        case .usb:
            var report = [UInt8](repeating: 0, count: usbReportLength)
            report[0] = usbReportID
            report[1] = motorFlag
            report[4] = weak
            report[5] = strong
            return report
        case .bluetooth:
            var report = [UInt8](repeating: 0, count: bluetoothReportLength)
            report[0] = bluetoothReportID
            report[1] = bluetoothHardwareControl
            report[3] = motorFlag
            report[6] = weak
            report[7] = strong
            PlayStationCRC.seal(&report)
            return report
        }
    }
}
