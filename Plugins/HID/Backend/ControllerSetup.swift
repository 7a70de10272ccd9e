import CHapticsABI
import HIDReports
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// Turns a rumble state into the bytes one controller understands, with the choices its set-up made
/// (the DualSense's vibration mode).
struct ReportEncoder: Sendable {
    /// The controller family.
    let family: any ControllerFamily.Type
    /// How the controller is connected.
    let transport: HIDTransport
    /// The DualSense vibration mode read from its firmware, `nil` for other families.
    let dualSenseMode: DualSense.VibrationMode?

    /// Whether the counter goes into the report (see ``ControllerFamily/reportCarriesSequence(on:)``).
    var carriesSequence: Bool { family.reportCarriesSequence(on: transport) }

    /// The rumble report for `state` with counter `sequence`.
    func report(_ state: RumbleState, sequence: UInt8) -> [UInt8] {
        if let dualSenseMode {
            return DualSense.rumbleReport(state: state, transport: transport, sequence: sequence, mode: dualSenseMode)
        }
        return family.rumbleReport(state: state, transport: transport, sequence: sequence)
    }
}

/// What a controller needs between opening its node and its first rumble report, done on the first
/// wake of an open device, so the first trigger after it is a single write.
///
/// - DualShock 4, Xbox: nothing.
/// - DualSense: feature report 0x20 (firmware info) chooses the vibration mode, as hid-playstation
///   does; if it cannot be read or parsed, the compatible mode every firmware understands.
/// - Switch Pro: over USB the bridge handshake (0x80 02, 03, 02, 04), then over both transports
///   sub-command 0x48 (enable vibration). Each 0x80 command but the last is answered by input
///   report 0x81, the sub-command by input report 0x21; like the kernel, we wait for each answer
///   (250 ms at most, then carry on: a clone may not answer). The 0x80 commands go to the USB bridge
///   chip and are not paced; the sub-command reaches the controller and keeps the 30 ms spacing,
///   and wake waits out that spacing before it returns.
enum ControllerSetup {
    /// What the set-up leaves behind.
    struct Outcome: Sendable {
        /// The encoder for the rumble reports.
        var encoder: ReportEncoder
        /// How many reports were written (the sequence counter advances by as many).
        var reportsWritten: Int
        /// When the last write that counts for spacing finished, in nanoseconds.
        var lastPacedWrite: UInt64?
    }

    /// How long to wait for a Switch Pro's answer to one set-up report, in milliseconds.
    static let answerTimeoutMilliseconds: UInt64 = 250

    /// Runs the set-up of `gamepad` on `handle`, starting with counter `sequence`.
    ///
    /// - Parameters:
    ///   - previous: what an earlier wake of the same open device chose, or `nil` on the first wake.
    ///     The controller keeps its set-up while it stays connected (the kernel and SDL also send it
    ///     once), so a later wake only reopens the node and reuses the encoder.
    ///   - lastWrite: when the device's last write finished (nanoseconds), if any: the first paced
    ///     set-up report keeps the spacing from it too.
    /// - Throws: the failure of a write (the caller closes the handle).
    static func run(
        handle: HIDHandle, gamepad: DiscoveredGamepad, sequence: UInt8, previous: ReportEncoder?, lastWrite: UInt64?,
        log: (haptics_log_level, String) -> Void
    ) throws(BackendFailure) -> Outcome {
        if let previous { return Outcome(encoder: previous, reportsWritten: 0, lastPacedWrite: nil) }
        var mode: DualSense.VibrationMode?
        if ObjectIdentifier(gamepad.family) == ObjectIdentifier(DualSense.self) {
            mode = dualSenseMode(handle: handle, gamepad: gamepad, log: log)
        }
        let isSwitch = ObjectIdentifier(gamepad.family) == ObjectIdentifier(SwitchPro.self)
        let reports = gamepad.family.setupReports(for: gamepad.transport, sequence: sequence)
        var lastPaced = lastWrite
        for report in reports {
            let paced = !(isSwitch && report.first == SwitchPro.usbCommandReportID)
            if paced, let lastPaced { Monotonic.sleep(until: lastPaced + gamepad.minimumInterval) }
            if case .failure(let error) = handle.write(report) {
                throw BackendFailure(
                    code: error.errno == ENODEV ? ENODEV : EIO,
                    "\(gamepad.id): set-up report 0x\(hex2(report.first ?? 0)) to \(gamepad.path) failed: \(error.message)")
            }
            if paced { lastPaced = Monotonic.now() }
            if isSwitch, let answer = switchAnswer(to: report), !awaitInput(handle: handle, matching: answer) {
                log(HAPTICS_LOG_WARNING, "\(gamepad.id): no answer to set-up report \(report.prefix(2).map(hex2).joined(separator: " ")) within \(answerTimeoutMilliseconds) ms on \(gamepad.path); continuing")
            }
        }
        if !reports.isEmpty, let lastPaced { Monotonic.sleep(until: lastPaced + gamepad.minimumInterval) }
        return Outcome(
            encoder: ReportEncoder(family: gamepad.family, transport: gamepad.transport, dualSenseMode: mode),
            reportsWritten: reports.count, lastPacedWrite: lastPaced)
    }

    /// The vibration mode of a DualSense, from feature report 0x20.
    static func dualSenseMode(
        handle: HIDHandle, gamepad: DiscoveredGamepad, log: (haptics_log_level, String) -> Void
    ) -> DualSense.VibrationMode {
        switch handle.featureReport(DualSense.firmwareInfoReportID, length: DualSense.firmwareInfoReportLength) {
        case .success(let report):
            if let info = DualSense.parseFirmwareInfo(report, transport: gamepad.transport) {
                return DualSense.vibrationMode(productID: gamepad.productID, updateVersion: info.updateVersion)
            }
            log(HAPTICS_LOG_WARNING, "\(gamepad.id): feature report 0x20 from \(gamepad.path) is malformed (\(report.count) bytes or a bad CRC); using the compatible vibration mode")
        case .failure(let error):
            log(HAPTICS_LOG_WARNING, "\(gamepad.id): cannot read feature report 0x20 from \(gamepad.path): \(error.message); using the compatible vibration mode")
        }
        return DualSense.vibrationMode(productID: gamepad.productID, updateVersion: nil)
    }

    /// Which input report answers a Switch Pro set-up report, or `nil` if none does.
    static func switchAnswer(to report: [UInt8]) -> (@Sendable ([UInt8]) -> Bool)? {
        guard report.count >= 2 else { return nil }
        switch report[0] {
        case SwitchPro.usbCommandReportID:
            let command = report[1]
            guard command == SwitchPro.USBCommand.handshake.rawValue || command == SwitchPro.USBCommand.highSpeed.rawValue else { return nil }
            return { $0.count >= 2 && $0[0] == 0x81 && $0[1] == command }
        case SwitchPro.subcommandReportID where report.count > 10:
            let subcommand = report[10]
            return { $0.count >= 15 && $0[0] == 0x21 && $0[14] == subcommand }
        default:
            return nil
        }
    }

    /// Reads input reports until one matches or ``answerTimeoutMilliseconds`` pass.
    static func awaitInput(handle: HIDHandle, matching: ([UInt8]) -> Bool) -> Bool {
        let deadline = Monotonic.now() + answerTimeoutMilliseconds * 1_000_000
        while true {
            let now = Monotonic.now()
            guard now < deadline else { return false }
            let remaining = Int32(max(1, (deadline - now) / 1_000_000))
            switch handle.read(milliseconds: remaining) {
            case .success(let report?) where matching(report): return true
            case .success: continue
            case .failure: return false
            }
        }
    }

    /// Two lower-case hex digits.
    static func hex2(_ byte: UInt8) -> String {
        byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
    }
}
