import HIDReports
import Testing

@Suite("HID: DualSense reports and firmware info")
struct HIDDualSenseTests {
    /// weak 0x40, strong 0x80: the drive of the facts file's Bluetooth vector.
    let state = RumbleState(strong: 128.0 / 255, weak: 64.0 / 255)

    @Test("Bluetooth, compatible mode, sequence 1 is the facts file's vector exactly: CRC 61 87 45 58")
    func bluetoothFactsVector() {
        #expect(
            DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 1, mode: .compatible)
                == HIDBytes.padded("31 10 10 03 00 40 80", to: 78, suffix: "61 87 45 58"))
        // The protocol's entry point uses the compatible mode.
        #expect(
            DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 1)
                == DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 1, mode: .compatible))
    }

    @Test("Bluetooth, v2 mode, sequence 15: flag0 02, valid_flag2 04 at [41], its own CRC")
    func bluetoothV2() {
        var expected = HIDBytes.padded("31 f0 10 02 00 40 80", to: 78, suffix: "38 8e 48 dd")
        expected[41] = 0x04
        #expect(DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 15, mode: .compatibleV2) == expected)
    }

    @Test("the Bluetooth sequence wraps: only its low 4 bits reach the high nibble of [1]")
    func sequenceWrap() {
        let tags = (0...40).map { DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: UInt8($0))[1] }
        #expect(tags[0] == 0x00 && tags[1] == 0x10 && tags[15] == 0xF0)
        #expect(tags[16] == 0x00 && tags[17] == 0x10 && tags[31] == 0xF0)
        #expect(tags.allSatisfy { $0 & 0x0F == 0 })
        #expect(
            DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 0xFF)
                == DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 0x0F))
        #expect(
            DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 2)
                != DualSense.rumbleReport(state: state, transport: .bluetooth, sequence: 3))
    }

    @Test("USB report 0x02 is 48 bytes (the descriptor's 47 data bytes, not the kernel's 63)")
    func usbVectors() {
        #expect(
            DualSense.rumbleReport(state: state, transport: .usb, sequence: 7, mode: .compatible)
                == HIDBytes.padded("02 03 00 40 80", to: 48))
        var v2 = HIDBytes.padded("02 02 00 40 80", to: 48)
        v2[39] = 0x04
        #expect(DualSense.rumbleReport(state: state, transport: .usb, sequence: 7, mode: .compatibleV2) == v2)
    }

    @Test("stop keeps the mode's flags with both motors at 0 and the lightbar flags clear")
    func stop() {
        #expect(DualSense.stopReport(transport: .usb, sequence: 0) == HIDBytes.padded("02 03", to: 48))
        #expect(
            DualSense.stopReport(transport: .bluetooth, sequence: 0)
                == HIDBytes.padded("31 00 10 03", to: 78, suffix: "cc 64 2e 96"))
        var v2 = HIDBytes.padded("02 02", to: 48)
        v2[39] = 0x04
        #expect(DualSense.stopReport(transport: .usb, sequence: 0, mode: .compatibleV2) == v2)
        for mode in DualSense.VibrationMode.allCases {
            let report = DualSense.rumbleReport(state: RumbleState(strong: 1, weak: 1), transport: .usb, sequence: 0, mode: mode)
            #expect(report[2] == 0, "valid_flag1 (lightbar, player LEDs, mic LED) stays clear")
            #expect(report[45...47] == [0, 0, 0])
        }
    }

    @Test("audio haptics: every valid flag clear (SDL's zeroed block), so rumble emulation is off and nothing else changes")
    func audioHaptics() {
        #expect(DualSense.audioHapticsReport(transport: .usb, sequence: 3) == HIDBytes.padded("02", to: 48))
        // The CRC (seed 0xA2) worked out by zlib's crc32 over a2 31 00 10 and 71 zeros.
        #expect(DualSense.audioHapticsReport(transport: .bluetooth, sequence: 0) == HIDBytes.padded("31 00 10", to: 78, suffix: "b5 01 15 23"))
        #expect(DualSense.audioHapticsReport(transport: .bluetooth, sequence: 5)[1] == 0x50)
    }

    @Test("the trigger values are ignored: the DualSense has no trigger rumble motors")
    func triggersIgnored() {
        let withTriggers = RumbleState(strong: 0.5, weak: 0.5, leftTrigger: 1, rightTrigger: 1)
        #expect(
            DualSense.rumbleReport(state: withTriggers, transport: .usb, sequence: 0)
                == DualSense.rumbleReport(state: RumbleState(strong: 0.5, weak: 0.5), transport: .usb, sequence: 0))
        #expect(DualSense.channels.map(\.name) == ["strong", "weak"])
    }

    /// A firmware-info feature report with the given versions, sealed for Bluetooth when asked.
    func firmwareReport(hardware: UInt32, firmware: UInt32, update: UInt16, bluetooth: Bool) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: 64)
        report[0] = 0x20
        for offset in 0..<4 {
            report[24 + offset] = UInt8(truncatingIfNeeded: hardware >> (8 * UInt32(offset)))
            report[28 + offset] = UInt8(truncatingIfNeeded: firmware >> (8 * UInt32(offset)))
        }
        report[44] = UInt8(truncatingIfNeeded: update)
        report[45] = UInt8(truncatingIfNeeded: update >> 8)
        for index in 1..<24 { report[index] = UInt8(index) }  // noise where the parser must not look
        if bluetooth { PlayStationCRC.seal(&report, seed: PlayStationCRC.featureSeed) }
        return report
    }

    @Test("feature report 0x20: hardware LE32 at 24, firmware LE32 at 28, update version LE16 at 44")
    func parsesFirmwareInfo() {
        let usb = firmwareReport(hardware: 0x0103_0000, firmware: 0x0110_002A, update: 0x0215, bluetooth: false)
        #expect(
            DualSense.parseFirmwareInfo(usb, transport: .usb)
                == DualSense.FirmwareInfo(hardwareVersion: 0x0103_0000, firmwareVersion: 0x0110_002A, updateVersion: 0x0215))
        let bluetooth = firmwareReport(hardware: 1, firmware: 2, update: 0x0224, bluetooth: true)
        #expect(DualSense.parseFirmwareInfo(bluetooth, transport: .bluetooth)?.updateVersion == 0x0224)
    }

    @Test("a firmware report with the wrong id, the wrong length or (on Bluetooth) a bad CRC is rejected")
    func rejectsBadFirmwareInfo() {
        var bluetooth = firmwareReport(hardware: 1, firmware: 2, update: 0x0224, bluetooth: true)
        bluetooth[44] = 0x25
        #expect(DualSense.parseFirmwareInfo(bluetooth, transport: .bluetooth) == nil)
        // USB reports carry no CRC, so the same bytes parse there.
        #expect(DualSense.parseFirmwareInfo(bluetooth, transport: .usb)?.updateVersion == 0x0225)
        var wrongID = firmwareReport(hardware: 1, firmware: 2, update: 3, bluetooth: false)
        wrongID[0] = 0x21
        #expect(DualSense.parseFirmwareInfo(wrongID, transport: .usb) == nil)
        let short = Array(firmwareReport(hardware: 1, firmware: 2, update: 3, bluetooth: false).prefix(46))
        #expect(DualSense.parseFirmwareInfo(short, transport: .usb) == nil)
        #expect(DualSense.parseFirmwareInfo([], transport: .usb) == nil)
    }

    @Test("vibration mode: every Edge uses v2; a DualSense from update version 0x0215 (the kernel's 2.21)")
    func vibrationMode() {
        #expect(DualSense.featureVersion(major: 2, minor: 21) == 0x0215)
        #expect(DualSense.vibrationV2MinimumUpdateVersion == 0x0215)
        #expect(DualSense.vibrationMode(productID: 0x0DF2, updateVersion: nil) == .compatibleV2)
        #expect(DualSense.vibrationMode(productID: 0x0DF2, updateVersion: 0x0100) == .compatibleV2)
        #expect(DualSense.vibrationMode(productID: 0x0CE6, updateVersion: nil) == .compatible)
        #expect(DualSense.vibrationMode(productID: 0x0CE6, updateVersion: 0x0214) == .compatible)
        #expect(DualSense.vibrationMode(productID: 0x0CE6, updateVersion: 0x0215) == .compatibleV2)
        #expect(DualSense.vibrationMode(productID: 0x0CE6, updateVersion: 0x0221) == .compatibleV2)
        #expect(DualSense.vibrationMode(productID: 0x0CE6, updateVersion: 0x0224) == .compatibleV2)
    }

    @Test("set-up reads feature report 0x20 and its encoder takes the vibration mode from it; a missing or malformed one gives the compatible mode, with a note")
    func setupChoosesMode() {
        for transport in HIDTransport.allCases {
            #expect(DualSense.setupPlan(for: transport, sequence: 0) == [.readFeature(id: 0x20, length: 64)])
            let state = RumbleState(strong: 0.7, weak: 0.2)
            let recent = firmwareReport(hardware: 1, firmware: 2, update: 0x0224, bluetooth: transport == .bluetooth)
            let chosen = DualSense.encoder(transport: transport, productID: 0x0CE6, features: [0x20: recent])
            #expect(chosen.note == nil)
            #expect(chosen.report(state, sequence: 3) == DualSense.rumbleReport(state: state, transport: transport, sequence: 3, mode: .compatibleV2))
            #expect(chosen.carriesSequence == (transport == .bluetooth))
            let missing = DualSense.encoder(transport: transport, productID: 0x0CE6, features: [:])
            #expect(missing.report(state, sequence: 3) == DualSense.rumbleReport(state: state, transport: transport, sequence: 3, mode: .compatible))
            #expect(missing.note?.contains("could not be read") == true)
            let malformed = DualSense.encoder(transport: transport, productID: 0x0CE6, features: [0x20: Array(recent.prefix(40))])
            #expect(malformed.report(state, sequence: 3) == missing.report(state, sequence: 3))
            #expect(malformed.note?.contains("malformed (40 bytes") == true)
            // The Edge uses v2 whatever its firmware says.
            #expect(
                DualSense.encoder(transport: transport, productID: 0x0DF2, features: [:]).report(state, sequence: 3)
                    == chosen.report(state, sequence: 3))
        }
    }

    @Test("nothing written at set-up, 10 ms spacing, no refresh")
    func timing() {
        for transport in HIDTransport.allCases {
            #expect(DualSense.setupReports(for: transport, sequence: 0).isEmpty)
            #expect(DualSense.minimumWriteInterval(for: transport) == 0.010)
            #expect(DualSense.refreshInterval(for: transport) == nil)
        }
    }
}
