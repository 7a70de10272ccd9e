import HIDReports
import Testing

@Suite("HID: DualShock 4 reports")
struct HIDDualShock4Tests {
    /// weak 0x40, strong 0x80: the drive of the facts file's Bluetooth vector.
    let state = RumbleState(strong: 128.0 / 255, weak: 64.0 / 255)

    @Test("USB report 0x05, 32 bytes: motor flag only, weak at [4], strong at [5]")
    func usbVector() {
        #expect(
            DualShock4.rumbleReport(state: state, transport: .usb, sequence: 0)
                == HIDBytes.padded("05 01 00 00 40 80", to: 32))
    }

    @Test("Bluetooth report 0x11 is the facts file's vector exactly: hw_control c0, flag 01, CRC 34 d9 31 0a")
    func bluetoothVector() {
        #expect(
            DualShock4.rumbleReport(state: state, transport: .bluetooth, sequence: 0)
                == HIDBytes.padded("11 c0 00 01 00 00 40 80", to: 78, suffix: "34 d9 31 0a"))
    }

    @Test("the stop report keeps the motor flag with both motors at 0, and never the lightbar flag")
    func stop() {
        #expect(DualShock4.stopReport(transport: .usb, sequence: 0) == HIDBytes.padded("05 01", to: 32))
        #expect(
            DualShock4.stopReport(transport: .bluetooth, sequence: 9)
                == HIDBytes.padded("11 c0 00 01", to: 78, suffix: "8d f5 2d e0"))
        for amplitude in stride(from: 0.0, through: 1.0, by: 0.125) {
            let report = DualShock4.rumbleReport(state: RumbleState(strong: amplitude, weak: amplitude), transport: .usb, sequence: 0)
            #expect(report[1] & 0x02 == 0, "lightbar flag must stay clear")
            #expect(report[6...10].allSatisfy { $0 == 0 })
        }
    }

    @Test("amplitudes round onto 0…255; the sequence is ignored")
    func quantization() {
        let full = DualShock4.rumbleReport(state: RumbleState(strong: 1, weak: 0.5), transport: .usb, sequence: 0)
        #expect(full[5] == 0xFF)
        #expect(full[4] == 0x80)  // 127.5 rounds away from zero
        #expect(
            DualShock4.rumbleReport(state: state, transport: .bluetooth, sequence: 0)
                == DualShock4.rumbleReport(state: state, transport: .bluetooth, sequence: 0xFF))
    }

    @Test("no set-up, 10 ms spacing, a refresh every 2 s (the pad stops after about 5 s)")
    func timing() {
        for transport in HIDTransport.allCases {
            #expect(DualShock4.setupReports(for: transport, sequence: 0).isEmpty)
            #expect(DualShock4.minimumWriteInterval(for: transport) == 0.010)
            #expect(DualShock4.refreshInterval(for: transport) == 2.0)
        }
        #expect(DualShock4.channels.map(\.name) == ["strong", "weak"])
        #expect(DualShock4.channels.allSatisfy { $0.amplitudeSteps == 256 && $0.frequencyRange == nil })
    }
}
