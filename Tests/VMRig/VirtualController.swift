import Foundation
import Glibc

/// Real game controllers the rig can impersonate: the fixture descriptor, ids, name, bus, and
/// the feature-report answers (and, for the Switch Pro, the handshake) their Linux 6.1
/// drivers need to bind.
///
/// What the drivers of Debian's 6.1 kernel ask at probe time (from drivers/hid/*.c):
/// - `hid-playstation`, DualSense: feature 0x09 (pairing info, 20 bytes: MAC at 1…6), 0x20
///   (firmware info, 64 bytes: hw version at 24, fw version at 28, update version at 44) and 0x05
///   (calibration, 41 bytes); over Bluetooth each ends in a CRC-32 seeded with 0xA3.
///   Duplicate MAC addresses are refused, so every virtual pad gets its own.
/// - `hid-sony`, DualShock 4 over USB: 0x81 (MAC, 7 bytes), 0x02 (calibration, 37 bytes; the
///   driver divides by the gyro and accelerometer ranges, so they must not be zero) and 0xa3
///   (version, 49 bytes). Over Bluetooth: 0x05 (calibration, 41 bytes with CRC) and the MAC
///   from `uniq`. (`hid-playstation` took over the DualShock 4 only in 6.2.)
/// - `hid-nintendo`, Switch Pro: no feature reports; a handshake over output report 0x80 / input
///   report 0x81 (USB only), then subcommands in output report 0x01 answered by input report
///   0x21 (device info, SPI flash reads of the calibration, report mode, IMU, vibration, LEDs).
///   ``switchProResponder(inputLength:mac:)`` plays the controller's side of that.
public enum VirtualController: String, Sendable, CaseIterable {
    /// Sony DualSense (054c:0ce6) over USB.
    case dualSenseUSB
    /// Sony DualSense (054c:0ce6) over Bluetooth.
    case dualSenseBluetooth
    /// Sony DualShock 4 v2 (054c:09cc) over USB.
    case dualShock4USB
    /// Sony DualShock 4 v1 (054c:05c4) over USB.
    case dualShock4v1USB
    /// Sony DualShock 4 (054c:05c4) over Bluetooth.
    case dualShock4Bluetooth
    /// Nintendo Switch Pro Controller (057e:2009) over USB.
    case switchProUSB
    /// Nintendo Switch Pro Controller (057e:2009) over Bluetooth.
    case switchProBluetooth
    /// Microsoft Xbox One S controller (045e:02fd) over Bluetooth.
    case xboxOneSBluetooth
    /// Microsoft Xbox Series controller (045e:0b13) over Bluetooth.
    case xboxSeriesBluetooth

    /// The fixture in `Tests/Fixtures/hid-descriptors/`.
    public var fixtureName: String {
        switch self {
        case .dualSenseUSB: "dualsense_054c_0ce6_usb"
        case .dualSenseBluetooth: "dualsense_054c_0ce6_bt"
        case .dualShock4USB: "ds4_v2_054c_09cc_usb"
        case .dualShock4v1USB: "ds4_v1_054c_05c4_usb"
        case .dualShock4Bluetooth: "ds4_054c_05c4_bt_hidtools"
        case .switchProUSB: "switch_pro_057e_2009_usb"
        case .switchProBluetooth: "switch_pro_057e_2009_bt"
        case .xboxOneSBluetooth: "xbox_one_s_045e_02fd_bt"
        case .xboxSeriesBluetooth: "xbox_series_045e_0b13_bt"
        }
    }

    /// Vendor id.
    public var vendorID: UInt32 {
        switch self {
        case .dualSenseUSB, .dualSenseBluetooth, .dualShock4USB, .dualShock4v1USB, .dualShock4Bluetooth: 0x054C
        case .switchProUSB, .switchProBluetooth: 0x057E
        case .xboxOneSBluetooth, .xboxSeriesBluetooth: 0x045E
        }
    }

    /// Product id.
    public var productID: UInt32 {
        switch self {
        case .dualSenseUSB, .dualSenseBluetooth: 0x0CE6
        case .dualShock4USB: 0x09CC
        case .dualShock4v1USB, .dualShock4Bluetooth: 0x05C4
        case .switchProUSB, .switchProBluetooth: 0x2009
        case .xboxOneSBluetooth: 0x02FD
        case .xboxSeriesBluetooth: 0x0B13
        }
    }

    /// The bus.
    public var bus: UHIDBus {
        switch self {
        case .dualSenseUSB, .dualShock4USB, .dualShock4v1USB, .switchProUSB: .usb
        default: .bluetooth
        }
    }

    /// The name the real device reports.
    public var deviceName: String {
        switch self {
        case .dualSenseUSB, .dualShock4USB: "Sony Interactive Entertainment Wireless Controller"
        case .dualShock4v1USB: "Sony Computer Entertainment Wireless Controller"
        case .dualSenseBluetooth, .dualShock4Bluetooth: "Wireless Controller"
        case .switchProUSB: "Nintendo Co., Ltd. Pro Controller"
        case .switchProBluetooth: "Pro Controller"
        case .xboxOneSBluetooth, .xboxSeriesBluetooth: "Xbox Wireless Controller"
        }
    }

    /// The kernel module of the special driver for this controller in Debian's 6.1.
    public var kernelDriverModule: String {
        switch self {
        case .dualSenseUSB, .dualSenseBluetooth: "hid_playstation"
        case .dualShock4USB, .dualShock4v1USB, .dualShock4Bluetooth: "hid_sony"
        case .switchProUSB, .switchProBluetooth: "hid_nintendo"
        case .xboxOneSBluetooth, .xboxSeriesBluetooth: "hid_microsoft"
        }
    }

    /// The report descriptor (parsed and checked from the fixture).
    public func descriptor() throws -> HIDReportDescriptor {
        try HIDReportDescriptor.fixture(fixtureName)
    }

    /// Plausible GET_REPORT answers for this controller's driver (report id → report).
    ///
    /// - Parameter mac: the controller's MAC address, most significant byte first.
    public func featureReports(mac: [UInt8]) -> [UInt8: [UInt8]] {
        let bt = bus == .bluetooth
        switch self {
        case .dualSenseUSB, .dualSenseBluetooth:
            var pairing = [UInt8](repeating: 0, count: 20)
            pairing[0] = 0x09
            pairing.replaceSubrange(1...6, with: mac.reversed())  // little-endian, printed with %pMR
            var firmware = [UInt8](repeating: 0, count: 64)
            firmware[0] = 0x20
            Self.put32(0x0000_0617, into: &firmware, at: 24)  // hw version
            Self.put32(0x0110_002A, into: &firmware, at: 28)  // fw version
            Self.put16(0x0224, into: &firmware, at: 44)  // update version 2.36: vibration v2
            var calibration = [UInt8](repeating: 0, count: 41)
            calibration[0] = 0x05
            Self.fillCalibration(&calibration, sonyBluetoothGyroOrder: false)
            var reports: [UInt8: [UInt8]] = [0x09: pairing, 0x20: firmware, 0x05: calibration]
            if bt { for key in reports.keys { Self.sealPlayStationCRC(&reports[key]!) } }
            return reports
        case .dualShock4USB, .dualShock4v1USB, .dualShock4Bluetooth:
            var mac81 = [UInt8](repeating: 0, count: 7)
            mac81[0] = 0x81
            mac81.replaceSubrange(1...6, with: mac.reversed())
            var pairing12 = [UInt8](repeating: 0, count: 16)  // what SDL reads for the MAC
            pairing12[0] = 0x12
            pairing12.replaceSubrange(1...6, with: mac.reversed())
            var version = [UInt8](repeating: 0, count: 49)
            version[0] = 0xA3
            Self.put16(0x0100, into: &version, at: 35)  // hw version
            Self.put16(0xA00B, into: &version, at: 41)  // fw version
            var usbCalibration = [UInt8](repeating: 0, count: 37)
            usbCalibration[0] = 0x02
            Self.fillCalibration(&usbCalibration, sonyBluetoothGyroOrder: false)
            var btCalibration = [UInt8](repeating: 0, count: 41)
            btCalibration[0] = 0x05
            Self.fillCalibration(&btCalibration, sonyBluetoothGyroOrder: true)
            Self.sealPlayStationCRC(&btCalibration)
            return [0x81: mac81, 0x12: pairing12, 0xA3: version, 0x02: usbCalibration, 0x05: btCalibration]
        case .switchProUSB, .switchProBluetooth, .xboxOneSBluetooth, .xboxSeriesBluetooth:
            return [:]
        }
    }

    /// The output responder this controller needs (the Switch Pro handshake), or `nil`.
    public func outputResponder(descriptor: HIDReportDescriptor, mac: [UInt8]) -> UHIDDevice.OutputResponder? {
        switch self {
        case .switchProUSB, .switchProBluetooth:
            let length = max(descriptor.reportLength(.input, id: 0x21) ?? 64, 50)
            return Self.switchProResponder(inputLength: length, mac: mac)
        default:
            return nil
        }
    }

    /// A fresh locally administered MAC address, unique in this machine (the drivers refuse a
    /// second controller with the same address).
    public static func uniqueMAC() -> [UInt8] {
        let n = VMRig.serial.add(1, ordering: .relaxed).newValue
        let pid = UInt32(truncatingIfNeeded: getpid())
        return [0x02, 0x56, UInt8(truncatingIfNeeded: pid >> 8), UInt8(truncatingIfNeeded: pid),
                UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
    }

    /// `aa:bb:cc:dd:ee:ff` (lower case, as HIDP puts it in `uniq`).
    public static func macString(_ mac: [UInt8]) -> String {
        mac.map { String(format: "%02x", $0) }.joined(separator: ":")
    }

    /// Plays a Switch Pro Controller's side of `hid-nintendo`'s probe: answers the USB commands
    /// (output 0x80 → input 0x81) and every subcommand (output 0x01 → input 0x21 with an ACK),
    /// with device info (type Pro, `mac`) and SPI flash reads served from a small flash image
    /// holding factory stick and IMU calibration (user calibration absent, as on a new pad).
    public static func switchProResponder(inputLength: Int, mac: [UInt8]) -> UHIDDevice.OutputResponder {
        let flash = switchProFlash()
        return { report in
            let data = report.data
            guard let id = data.first else { return [] }
            var input = [UInt8](repeating: 0, count: inputLength)
            switch id {
            case 0x80 where data.count >= 2:
                // 0x01 status, 0x02 handshake, 0x03 baud rate: acknowledged; 0x04/0x05 timeouts: no answer.
                guard [0x01, 0x02, 0x03].contains(data[1]) else { return [] }
                input[0] = 0x81
                input[1] = data[1]
                if data[1] == 0x01 {
                    input[3] = 0x03
                    input.replaceSubrange(4...9, with: mac.reversed())
                }
                return [input]
            case 0x01 where data.count >= 11:
                let subcommand = data[10]
                input[0] = 0x21
                input[1] = UInt8(truncatingIfNeeded: report.timestamp / 5_000_000)  // timer
                input[2] = 0x8E  // battery full, USB powered
                input[6] = 0x00; input[7] = 0x08; input[8] = 0x80  // left stick centred (0x800, 0x800)
                input[9] = 0x00; input[10] = 0x08; input[11] = 0x80  // right stick centred
                input[12] = 0x0C  // vibrator report
                input[13] = 0x80  // ACK
                input[14] = subcommand
                switch subcommand {
                case 0x02:  // device info: firmware 3.72, type Pro (3), MAC, colours in SPI
                    input[13] = 0x82
                    let info: [UInt8] = [0x03, 0x48, 0x03, 0x02] + mac + [0x01, 0x01]
                    input.replaceSubrange(15..<(15 + info.count), with: info)
                case 0x10 where data.count >= 16:  // SPI flash read: echo address and size, then data
                    input[13] = 0x90
                    let address = Int(data[11]) | Int(data[12]) << 8 | Int(data[13]) << 16 | Int(data[14]) << 24
                    let size = min(Int(data[15]), inputLength - 20)
                    input.replaceSubrange(15...19, with: data[11...15])
                    for k in 0..<size { input[20 + k] = flash[address + k] ?? 0xFF }
                case 0x50:  // regulated voltage
                    input[13] = 0xD0
                    input[15] = 0x60; input[16] = 0x06
                default:
                    break
                }
                return [input]
            default:
                return []
            }
        }
    }

    /// The few SPI flash bytes `hid-nintendo` reads: factory stick calibration (left at
    /// 0x603D, right at 0x6046; 12-bit values) and factory IMU calibration at 0x6020.
    static func switchProFlash() -> [Int: UInt8] {
        var flash: [Int: UInt8] = [:]
        func pack(_ a: Int, _ b: Int) -> [UInt8] {  // two 12-bit values in three bytes
            [UInt8(a & 0xFF), UInt8((a >> 8) & 0x0F | (b & 0x0F) << 4), UInt8((b >> 4) & 0xFF)]
        }
        let center = 2048, above = 1400, below = 1400
        let left = pack(above, above) + pack(center, center) + pack(below, below)
        let right = pack(center, center) + pack(below, below) + pack(above, above)
        for (k, byte) in left.enumerated() { flash[0x603D + k] = byte }
        for (k, byte) in right.enumerated() { flash[0x6046 + k] = byte }
        var imu = [UInt8]()
        for value: Int16 in [0, 0, 0, 16384, 16384, 16384, 0, 0, 0, 13371, 13371, 13371] {
            imu += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        for (k, byte) in imu.enumerated() { flash[0x6020 + k] = byte }
        return flash
    }

    /// Gyro/accelerometer calibration in the PlayStation layout at bytes 1…34: biases 0, gyro
    /// ranges ±8800, speed 540 + 540, accelerometer ranges ±8192 (1 g). `sonyBluetoothGyroOrder`:
    /// hid-sony's Bluetooth layout lists the three "plus" values before the three "minus" ones.
    static func fillCalibration(_ buffer: inout [UInt8], sonyBluetoothGyroOrder: Bool) {
        let gyro: [Int16] = sonyBluetoothGyroOrder
            ? [8800, 8800, 8800, -8800, -8800, -8800]
            : [8800, -8800, 8800, -8800, 8800, -8800]
        let values: [Int16] = [0, 0, 0] + gyro + [540, 540, 8192, -8192, 8192, -8192, 8192, -8192]
        for (k, value) in values.enumerated() { put16(UInt16(bitPattern: value), into: &buffer, at: 1 + 2 * k) }
    }

    /// Writes the PlayStation Bluetooth CRC-32 (seed byte 0xA3) into the last four bytes.
    static func sealPlayStationCRC(_ report: inout [UInt8]) {
        let crc = RigCRC32.checksum(report[0..<(report.count - 4)], continuing: RigCRC32.checksum([0xA3]))
        put32(crc, into: &report, at: report.count - 4)
    }

    static func put16(_ value: UInt16, into buffer: inout [UInt8], at offset: Int) {
        buffer[offset] = UInt8(truncatingIfNeeded: value)
        buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    static func put32(_ value: UInt32, into buffer: inout [UInt8], at offset: Int) {
        for k in 0..<4 { buffer[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
    }
}

extension UHIDDevice {
    /// Creates a virtual `controller` with its real descriptor, ids and name, a unique MAC
    /// address, and the feature-report answers (and Switch Pro handshake) its kernel driver needs.
    ///
    /// - Parameters:
    ///   - controller: which controller.
    ///   - extraFeatureReports: more (or replacement) GET_REPORT answers.
    public convenience init(controller: VirtualController, extraFeatureReports: [UInt8: [UInt8]] = [:]) throws {
        let descriptor = try controller.descriptor()
        let mac = VirtualController.uniqueMAC()
        try self.init(
            descriptor: descriptor, name: controller.deviceName, bus: controller.bus,
            vendorID: controller.vendorID, productID: controller.productID, version: 0x0100,
            uniq: controller.bus == .bluetooth ? VirtualController.macString(mac) : "",
            featureReports: controller.featureReports(mac: mac).merging(extraFeatureReports) { $1 },
            outputResponder: controller.outputResponder(descriptor: descriptor, mac: mac))
    }
}
