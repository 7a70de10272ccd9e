/// Nintendo Switch Pro Controller, on USB and Bluetooth.
///
/// Two linear resonant actuators, one per grip, each driven with HD rumble (`SwitchHDRumble`).
///
/// Sources: the Linux kernel's drivers/hid/hid-nintendo.c (`struct joycon_rumble_output`,
/// `joycon_subcmd_request`, `JC_SUBCMD_ENABLE_VIBRATION`, the USB init sequence, the rumble tables and
/// defaults), SDL_hidapi_switch.c (write spacing and refresh), dekuNukem's reverse-engineering notes.
///
/// ## Reports
///
/// - 0x10, rumble only: `[1]` packet counter 0–15, `[2…5]` left actuator, `[6…9]` right actuator.
/// - 0x01, rumble and a sub-command: the same 10 bytes, then `[10]` sub-command id, `[11…]` its data.
/// - 0x80, USB-only commands to the controller's USB bridge: `[1]` command.
///
/// The kernel writes just the bytes it fills (10 for 0x10); SDL pads every write to the report's
/// declared length, and so do we: the report descriptors declare 48 data bytes over Bluetooth (49 with
/// the id) and 63 over USB (64).
///
/// ## Mapping
///
/// The strong motor drives the left actuator and the weak motor the right one, as hid-nintendo.c maps
/// `strong_magnitude` and `weak_magnitude`. Each actuator plays one tone at the state's frequency for it
/// (`strongFrequency`, `weakFrequency`), on the band `SwitchHDRumble.actuator(amplitude:frequency:)`
/// chooses; amplitude 1 is the largest safe amplitude.
public enum SwitchPro: ControllerFamily {
    /// A command to the controller's USB bridge, sent as report 0x80 (hid-nintendo.c `JC_USB_CMD_*`).
    public enum USBCommand: UInt8, Sendable, Hashable, CaseIterable {
        /// Handshake with the bridge.
        case handshake = 0x02
        /// Switch the bridge's UART to 3 Mbit/s.
        case highSpeed = 0x03
        /// Talk HID over USB only, with no timeout back to Bluetooth.
        case forceUSB = 0x04
    }

    /// The rumble-only output report id.
    public static let rumbleReportID: UInt8 = 0x10
    /// The rumble-and-sub-command output report id.
    public static let subcommandReportID: UInt8 = 0x01
    /// The USB bridge command report id.
    public static let usbCommandReportID: UInt8 = 0x80
    /// The input report id of the USB bridge's answer to a command (the command echoed at byte 1).
    public static let usbCommandAnswerReportID: UInt8 = 0x81
    /// The input report id of the controller's answer to a sub-command (the sub-command echoed at byte 14).
    public static let subcommandAnswerReportID: UInt8 = 0x21
    /// Output report length over Bluetooth, id included (48 declared data bytes).
    public static let bluetoothReportLength = 49
    /// Output report length over USB, id included (63 declared data bytes).
    public static let usbReportLength = 64
    /// The sub-command that enables or disables the actuators (data 0x01 enables).
    public static let enableVibrationSubcommand: UInt8 = 0x48
    /// The USB bridge commands, in the order the kernel sends them before anything else over USB.
    public static let usbHandshake: [USBCommand] = [.handshake, .highSpeed, .handshake, .forceUSB]

    /// `Switch Pro Controller`.
    public static let name = "Switch Pro Controller"

    /// 057e:2009, on USB and Bluetooth.
    public static let models: [ControllerModel] = [
        ControllerModel(
            vendorID: 0x057E, productID: 0x2009, name: "Nintendo Switch Pro Controller", transports: [.usb, .bluetooth])
    ]

    /// `strong` (left actuator, 160 Hz by default) and `weak` (right, 320 Hz), each 41–1253 Hz with
    /// 101 amplitude steps.
    public static let channels: [RumbleChannel] = [
        RumbleChannel(
            name: "strong", kind: .linearResonantActuator, amplitudeSteps: SwitchHDRumble.amplitudeSteps,
            frequencyRange: SwitchHDRumble.frequencyRange, defaultFrequency: RumbleState.defaultStrongFrequency),
        RumbleChannel(
            name: "weak", kind: .linearResonantActuator, amplitudeSteps: SwitchHDRumble.amplitudeSteps,
            frequencyRange: SwitchHDRumble.frequencyRange, defaultFrequency: RumbleState.defaultWeakFrequency),
    ]

    /// 30 ms on both transports: faster writes can disconnect the controller over Bluetooth and lose
    /// commands over USB (SDL_hidapi_switch.c `RUMBLE_WRITE_FREQUENCY_MS`; the kernel keeps 25 ms between
    /// sub-commands, `joycon_enforce_subcmd_rate`).
    public static func minimumWriteInterval(for transport: HIDTransport) -> Double { 0.030 }

    /// 50 ms: the actuators stop soon after the last report, so a held drive is rewritten every 50 ms
    /// (SDL_hidapi_switch.c `RUMBLE_REFRESH_FREQUENCY_MS`; hid-nintendo.c `JC_RUMBLE_PERIOD_MS`).
    public static func refreshInterval(for transport: HIDTransport) -> Double? { 0.050 }

    /// Over USB the bridge handshake (`usbHandshake`, four 0x80 reports), then on both transports
    /// sub-command 0x48 with data 0x01 to enable vibration, carrying neutral rumble.
    ///
    /// The bridge answers each 0x80 command but the last (force USB) with input report 0x81 echoing
    /// the command, and the controller answers the sub-command with input report 0x21 echoing it at
    /// byte 14; the kernel waits for each answer before the next write. The 0x80 commands go to the
    /// USB bridge chip and are not paced; the sub-command reaches the controller and keeps the 30 ms
    /// spacing.
    public static func setupPlan(for transport: HIDTransport, sequence: UInt8) -> [SetupStep] {
        var steps: [SetupStep] = []
        if transport == .usb {
            for command in usbHandshake {
                let answered = command == .handshake || command == .highSpeed
                steps.append(
                    .write(
                        usbCommandReport(command), paced: false,
                        answer: answered ? InputMatch(reportID: usbCommandAnswerReportID, offset: 1, value: command.rawValue) : nil))
            }
        }
        let report = subcommandReport(
            enableVibrationSubcommand, data: [0x01], rumble: neutralRumbleData, transport: transport,
            sequence: sequence &+ UInt8(truncatingIfNeeded: steps.count))
        steps.append(
            .write(report, paced: true, answer: InputMatch(reportID: subcommandAnswerReportID, offset: 14, value: enableVibrationSubcommand)))
        return steps
    }

    /// Report 0x10: the counter's low 4 bits in `[1]`, then `rumbleData(for: state)`, zero-padded.
    public static func rumbleReport(state: RumbleState, transport: HIDTransport, sequence: UInt8) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: reportLength(for: transport))
        report[0] = rumbleReportID
        report[1] = sequence & 0x0F
        report.replaceSubrange(2..<10, with: rumbleData(for: state))
        return report
    }

    /// The 8 rumble bytes of `state`: the left actuator (strong motor) then the right (weak motor).
    ///
    /// - Parameter state: The drive to render (triggers ignored).
    public static func rumbleData(for state: RumbleState) -> [UInt8] {
        SwitchHDRumble.actuator(amplitude: state.strong, frequency: state.strongFrequency)
            + SwitchHDRumble.actuator(amplitude: state.weak, frequency: state.weakFrequency)
    }

    /// Both actuators at rest: `00 01 40 40` twice.
    public static let neutralRumbleData: [UInt8] = SwitchHDRumble.neutral + SwitchHDRumble.neutral

    /// Report 0x01: rumble bytes, a sub-command and its data, zero-padded.
    ///
    /// - Parameters:
    ///   - subcommand: The sub-command id.
    ///   - data: Its data (at most 38 bytes, what fits the shorter Bluetooth report).
    ///   - rumble: The 8 rumble bytes that ride along (`neutralRumbleData` to leave the actuators at rest).
    ///   - transport: How the device is connected.
    ///   - sequence: The counter; its low 4 bits go to `[1]`.
    public static func subcommandReport(
        _ subcommand: UInt8, data: [UInt8], rumble: [UInt8] = neutralRumbleData, transport: HIDTransport,
        sequence: UInt8
    ) -> [UInt8] {
        precondition(rumble.count == 8, "rumble data is 8 bytes: 4 per actuator")
        precondition(data.count <= bluetoothReportLength - 11, "sub-command data must fit the Bluetooth report")
        var report = [UInt8](repeating: 0, count: reportLength(for: transport))
        report[0] = subcommandReportID
        report[1] = sequence & 0x0F
        report.replaceSubrange(2..<10, with: rumble)
        report[10] = subcommand
        report.replaceSubrange(11..<(11 + data.count), with: data)
        return report
    }

    /// Report 0x80 with one USB bridge command, zero-padded to 64 bytes (USB only).
    ///
    /// - Parameter command: The command.
    public static func usbCommandReport(_ command: USBCommand) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: usbReportLength)
        report[0] = usbCommandReportID
        report[1] = command.rawValue
        return report
    }

    /// The output report length on `transport`, id included.
    ///
    /// - Parameter transport: How the device is connected.
    public static func reportLength(for transport: HIDTransport) -> Int {
        transport == .usb ? usbReportLength : bluetoothReportLength
    }
}
