/// Sony DualSense and DualSense Edge (PS5 controllers), in the DualShock-compatible rumble mode.
///
/// The DualSense has voice-coil actuators, not motors; its firmware emulates two rumble motors from
/// two bytes when the report selects "compatible vibration". Adaptive-trigger effects are not rumble:
/// they have their own report (`DualSenseTrigger.swift`), so the trigger values of a `RumbleState` are ignored.
///
/// Sources (the Linux kernel's drivers/hid/hid-playstation.c): `struct
/// dualsense_output_report_common/_bt/_usb`, the `DS_OUTPUT_*` defines, `dualsense_output_worker`,
/// `dualsense_get_firmware_info` and the `use_vibration_v2` choice in `dualsense_create`.
///
/// ## Layout
///
/// The 47-byte common block: `+0` valid_flag0, `+1` valid_flag1, `+2` weak motor (motor_right), `+3`
/// strong motor (motor_left), `+38` valid_flag2. USB, report 0x02: the block at `[1]`. Bluetooth, report
/// 0x31, 78 bytes: `[1]` sequence tag (counter 0–15 in the high nibble), `[2]` tag 0x10, the block at
/// `[3]`, `[74…77]` CRC-32 (seed 0xA2) little-endian.
///
/// ## USB length: 48 bytes, not the kernel's 63
///
/// The report descriptor (Tests/Fixtures/hid-descriptors/dualsense_054c_0ce6_usb*.rdesc.txt) declares
/// output report 0x02 as 47 data bytes, so 48 with the id: exactly the common block. The kernel sends
/// 63 (`DS_OUTPUT_REPORT_USB_SIZE`: the block and 15 reserved zero bytes); SDL sends 48
/// (SDL_hidapi_ps5.c, `report_size = 48`). Both work on hardware; we follow the descriptor, so a
/// descriptor-checking path (uhid in the test rig, a strict hidraw consumer) accepts the report.
///
/// ## Bluetooth header: the kernel's, not SDL's
///
/// The kernel writes `[1]` = sequence << 4 and `[2]` = 0x10 with the block at `[3]`. SDL writes
/// `[1]` = 0x02 with its block at `[2]`. We follow the kernel (Sony-maintained, and the facts file).
///
/// ## Vibration mode
///
/// Rumble needs HAPTICS_SELECT (valid_flag0 bit 1) and one of two enable bits: COMPATIBLE_VIBRATION
/// (valid_flag0 bit 0), the original emulation, or COMPATIBLE_VIBRATION2 (valid_flag2 bit 2), the
/// newer one that feels like classic rumble. See `VibrationMode` and `vibrationMode(productID:updateVersion:)`.
public enum DualSense: ControllerFamily {
    /// How the firmware emulates rumble motors.
    public enum VibrationMode: String, Sendable, Hashable, CaseIterable {
        /// valid_flag0 = HAPTICS_SELECT | COMPATIBLE_VIBRATION (0x03): every firmware understands it.
        case compatible
        /// valid_flag0 = HAPTICS_SELECT (0x02), valid_flag2 = COMPATIBLE_VIBRATION2 (0x04): feature
        /// version 2.21 and later, and every DualSense Edge.
        case compatibleV2
    }

    /// What feature report 0x20 says about the firmware.
    public struct FirmwareInfo: Sendable, Hashable {
        /// The hardware version (little-endian 32 bits at byte 24).
        public var hardwareVersion: UInt32
        /// The firmware version (little-endian 32 bits at byte 28).
        public var firmwareVersion: UInt32
        /// The "update version", a feature version: major in the high byte, minor in the low byte
        /// (little-endian 16 bits at byte 44). It numbers differently on the DualSense Edge.
        public var updateVersion: UInt16

        /// A firmware description.
        ///
        /// - Parameters:
        ///   - hardwareVersion: The hardware version.
        ///   - firmwareVersion: The firmware version.
        ///   - updateVersion: The feature ("update") version.
        public init(hardwareVersion: UInt32, firmwareVersion: UInt32, updateVersion: UInt16) {
            self.hardwareVersion = hardwareVersion
            self.firmwareVersion = firmwareVersion
            self.updateVersion = updateVersion
        }
    }

    /// The USB output report id.
    public static let usbReportID: UInt8 = 0x02
    /// The USB output report length in bytes, id included: the 47 data bytes the descriptor declares.
    public static let usbReportLength = 48
    /// The Bluetooth output report id.
    public static let bluetoothReportID: UInt8 = 0x31
    /// The Bluetooth output report length in bytes, id and CRC included.
    public static let bluetoothReportLength = 78
    /// The tag byte every Bluetooth output report carries at `[2]` (`DS_OUTPUT_TAG`).
    public static let bluetoothTag: UInt8 = 0x10
    /// The feature report with the firmware versions.
    public static let firmwareInfoReportID: UInt8 = 0x20
    /// The firmware-info feature report length in bytes, id (and on Bluetooth the CRC) included.
    public static let firmwareInfoReportLength = 64
    /// The DualSense's product id.
    public static let dualSenseProductID: UInt16 = 0x0CE6
    /// The DualSense Edge's product id.
    public static let dualSenseEdgeProductID: UInt16 = 0x0DF2
    /// The first DualSense update version with COMPATIBLE_VIBRATION2: the kernel's
    /// `DS_FEATURE_VERSION(2, 21)`, which packs the decimal minor 21 into 0x0215.
    public static let vibrationV2MinimumUpdateVersion: UInt16 = featureVersion(major: 2, minor: 21)

    /// `DualSense`.
    public static let name = "DualSense"

    /// 054c:0ce6 and the Edge 054c:0df2, on USB and Bluetooth.
    public static let models: [ControllerModel] = [
        ControllerModel(
            vendorID: 0x054C, productID: dualSenseProductID, name: "DualSense Wireless Controller",
            transports: [.usb, .bluetooth]),
        ControllerModel(
            vendorID: 0x054C, productID: dualSenseEdgeProductID, name: "DualSense Edge Wireless Controller",
            transports: [.usb, .bluetooth]),
    ]

    /// `strong` and `weak`, one byte each (256 steps).
    public static let channels: [RumbleChannel] = [
        RumbleChannel(name: "strong", kind: .gripMotor, amplitudeSteps: 256),
        RumbleChannel(name: "weak", kind: .gripMotor, amplitudeSteps: 256),
    ]

    /// 10 ms on both transports: the pause SDL's HIDAPI rumble thread leaves after every write
    /// (SDL_hidapi_rumble.c); the kernel does not throttle.
    public static func minimumWriteInterval(for transport: HIDTransport) -> Double { 0.010 }

    /// `nil`: no source documents a DualSense rumble timeout, and the kernel writes once per change.
    public static func refreshInterval(for transport: HIDTransport) -> Double? { nil }

    /// Read feature report 0x20 (firmware info), which chooses the vibration mode, as hid-playstation
    /// does; nothing is written.
    public static func setupPlan(for transport: HIDTransport, sequence: UInt8) -> [SetupStep] {
        [.readFeature(id: firmwareInfoReportID, length: firmwareInfoReportLength)]
    }

    /// Rumble reports in the vibration mode the firmware info (feature report 0x20) chooses; if it
    /// could not be read or parsed, the compatible mode every firmware understands (the note says so).
    public static func encoder(transport: HIDTransport, productID: UInt16, features: [UInt8: [UInt8]]) -> RumbleEncoder {
        let report = features[firmwareInfoReportID]
        let info = report.flatMap { parseFirmwareInfo($0, transport: transport) }
        let mode = vibrationMode(productID: productID, updateVersion: info?.updateVersion)
        var note: String?
        if let report, info == nil {
            note = "feature report 0x20 is malformed (\(report.count) bytes or a bad CRC); using the \(mode.rawValue) vibration mode"
        } else if report == nil {
            note = "feature report 0x20 could not be read; using the \(mode.rawValue) vibration mode"
        }
        return RumbleEncoder(carriesSequence: reportCarriesSequence(on: transport), note: note) { state, sequence in
            rumbleReport(state: state, transport: transport, sequence: sequence, mode: mode)
        }
    }

    /// One encoder per vibration mode: the firmware info may choose either.
    public static func possibleEncoders(for transport: HIDTransport) -> [RumbleEncoder] {
        VibrationMode.allCases.map { mode in
            RumbleEncoder(carriesSequence: reportCarriesSequence(on: transport)) { state, sequence in
                rumbleReport(state: state, transport: transport, sequence: sequence, mode: mode)
            }
        }
    }

    /// The Bluetooth report's tag carries the counter; the USB report has none.
    public static func reportCarriesSequence(on transport: HIDTransport) -> Bool { transport == .bluetooth }

    /// The rumble report in `VibrationMode.compatible`, which every firmware understands. Backends that
    /// read the firmware info should call `rumbleReport(state:transport:sequence:mode:)` instead.
    public static func rumbleReport(state: RumbleState, transport: HIDTransport, sequence: UInt8) -> [UInt8] {
        rumbleReport(state: state, transport: transport, sequence: sequence, mode: .compatible)
    }

    /// The rumble report in `mode`.
    ///
    /// - Parameters:
    ///   - state: The drive to render (triggers ignored).
    ///   - transport: How the device is connected.
    ///   - sequence: The counter; on Bluetooth its low 4 bits go to the high nibble of `[1]`. Unused on USB.
    ///   - mode: The vibration mode, from `vibrationMode(productID:updateVersion:)`.
    public static func rumbleReport(
        state: RumbleState, transport: HIDTransport, sequence: UInt8, mode: VibrationMode
    ) -> [UInt8] {
        var (report, start) = emptyReport(transport: transport, sequence: sequence)
        switch mode {
        case .compatible:
            report[start] = 0x02 | 0x01  // HAPTICS_SELECT | COMPATIBLE_VIBRATION
        case .compatibleV2:
            report[start] = 0x02  // HAPTICS_SELECT
            report[start + 38] = 0x04  // valid_flag2: COMPATIBLE_VIBRATION2
        }
        report[start + 2] = Quantize.level(state.weak, maximum: 255)  // motor_right
        report[start + 3] = Quantize.level(state.strong, maximum: 255)  // motor_left
        if transport == .bluetooth { PlayStationCRC.seal(&report) }
        return report
    }

    /// The report that gives the voice coils back to the USB audio stream (channels 3–4 of the pad's
    /// sound card): every valid flag clear, so nothing else changes (lights, triggers, volumes), and
    /// with neither HAPTICS_SELECT nor a compatible-vibration bit the firmware leaves rumble emulation.
    /// SDL (`SDL_hidapi_ps5.c`) sends exactly this, a zeroed effects block, when no rumble is asked:
    /// "Leaving emulated rumble bits off will restore audio haptics". Any rumble report (the kernel's
    /// `hid-playstation` sends one on every force-feedback play) switches emulation back on.
    ///
    /// - Parameters:
    ///   - transport: How the device is connected.
    ///   - sequence: The counter (Bluetooth only).
    public static func audioHapticsReport(transport: HIDTransport, sequence: UInt8) -> [UInt8] {
        var (report, _) = emptyReport(transport: transport, sequence: sequence)
        if transport == .bluetooth { PlayStationCRC.seal(&report) }
        return report
    }

    /// A report with its header and an all-zero common block, and where the block starts.
    private static func emptyReport(transport: HIDTransport, sequence: UInt8) -> (report: [UInt8], start: Int) {
        switch transport {
        case .usb:
            var report = [UInt8](repeating: 0, count: usbReportLength)
            report[0] = usbReportID
            return (report, 1)
        case .bluetooth:
            var report = [UInt8](repeating: 0, count: bluetoothReportLength)
            report[0] = bluetoothReportID
            report[1] = (sequence & 0x0F) << 4
            report[2] = bluetoothTag
            return (report, 3)
        }
    }

    /// Both motors off, in `mode`.
    ///
    /// - Parameters:
    ///   - transport: How the device is connected.
    ///   - sequence: The counter (Bluetooth only).
    ///   - mode: The vibration mode the device's rumble reports use.
    public static func stopReport(transport: HIDTransport, sequence: UInt8, mode: VibrationMode) -> [UInt8] {
        rumbleReport(state: .off, transport: transport, sequence: sequence, mode: mode)
    }

    /// A feature version as the kernel packs it: `major` in the high byte, `minor` in the low byte.
    ///
    /// - Parameters:
    ///   - major: The major number, 0–255.
    ///   - minor: The minor number, 0–255 (decimal 21 packs as 0x15).
    public static func featureVersion(major: UInt8, minor: UInt8) -> UInt16 {
        UInt16(major) << 8 | UInt16(minor)
    }

    /// The vibration mode the kernel would choose: `compatibleV2` on every Edge, and on a DualSense whose
    /// update version is at least `vibrationV2MinimumUpdateVersion`; `compatible` otherwise, including
    /// when the version is unknown (`nil`), since every firmware understands it.
    ///
    /// - Parameters:
    ///   - productID: The USB product id.
    ///   - updateVersion: `FirmwareInfo.updateVersion`, or `nil` if feature report 0x20 could not be read.
    public static func vibrationMode(productID: UInt16, updateVersion: UInt16?) -> VibrationMode {
        if productID == dualSenseEdgeProductID { return .compatibleV2 }
        guard let updateVersion else { return .compatible }
        return updateVersion >= vibrationV2MinimumUpdateVersion ? .compatibleV2 : .compatible
    }

    /// Parses feature report 0x20 as read with `hid_get_feature_report` (id first, 64 bytes).
    ///
    /// Offsets from hid-playstation.c `dualsense_get_firmware_info`: hardware version LE32 at 24,
    /// firmware version LE32 at 28, update version LE16 at 44. On Bluetooth the last 4 bytes are a CRC
    /// with the feature seed 0xA3, checked as `ps_get_report` does.
    ///
    /// - Parameters:
    ///   - report: The report bytes, id first.
    ///   - transport: How the device is connected (Bluetooth reports carry a CRC).
    /// - Returns: The versions, or `nil` if the report has the wrong id or length, or a bad CRC.
    public static func parseFirmwareInfo(_ report: [UInt8], transport: HIDTransport) -> FirmwareInfo? {
        guard report.count == firmwareInfoReportLength, report[0] == firmwareInfoReportID else { return nil }
        if transport == .bluetooth, !PlayStationCRC.isValid(report, seed: PlayStationCRC.featureSeed) { return nil }
        func little(_ offset: Int, _ count: Int) -> UInt32 {
            (0..<count).reduce(UInt32(0)) { $0 | UInt32(report[offset + $1]) << (8 * UInt32($1)) }
        }
        return FirmwareInfo(
            hardwareVersion: little(24, 4), firmwareVersion: little(28, 4), updateVersion: UInt16(little(44, 2)))
    }
}
