import HIDReports
import Testing

@Suite("HID: Xbox One / Series Bluetooth reports")
struct HIDXboxOneBluetoothTests {
    @Test("report 0x03, 9 bytes: all motors enabled, LT RT strong weak in 0–100, 1.5 s once, no delay")
    func vector() {
        let state = RumbleState(strong: 1, weak: 0.5, leftTrigger: 0.25, rightTrigger: nil)
        #expect(
            XboxOneBluetooth.rumbleReport(state: state, transport: .bluetooth, sequence: 0)
                == HIDBytes.hex("03 0f 19 00 64 32 96 00 00"))
        let triggers = RumbleState(strong: 0.1, weak: 0.02, leftTrigger: 0.999, rightTrigger: 0.333)
        #expect(
            XboxOneBluetooth.rumbleReport(state: triggers, transport: .bluetooth, sequence: 0)
                == HIDBytes.hex("03 0f 64 21 0a 02 96 00 00"))
    }

    @Test("stop programs every motor to 0 with the same bounded duration")
    func stop() {
        #expect(XboxOneBluetooth.stopReport(transport: .bluetooth, sequence: 0) == HIDBytes.hex("03 0f 00 00 00 00 96 00 00"))
    }

    @Test("the duration outlasts the refresh interval but stays bounded (a dead host stops within 1.5 s)")
    func boundedDuration() throws {
        let refresh = try #require(XboxOneBluetooth.refreshInterval(for: .bluetooth))
        let duration = Double(XboxOneBluetooth.rumbleDurationUnits) / 100  // 10 ms units
        #expect(duration == XboxOneBluetooth.rumbleDuration)
        #expect(duration > refresh + XboxOneBluetooth.minimumWriteInterval(for: .bluetooth))
        #expect(duration <= 2.0)
        let report = XboxOneBluetooth.rumbleReport(state: RumbleState(strong: 1), transport: .bluetooth, sequence: 0)
        #expect(report[7] == 0 && report[8] == 0, "no start delay, played once")
    }

    @Test("magnitudes never exceed the descriptor's Logical Maximum of 100")
    func magnitudeRange() {
        for step in 0...40 {
            let value = Double(step) / 40
            let report = XboxOneBluetooth.rumbleReport(
                state: RumbleState(strong: value, weak: value, leftTrigger: value, rightTrigger: value), transport: .bluetooth,
                sequence: UInt8(step))
            #expect(report[2...5].allSatisfy { $0 <= 100 })
            #expect(report[4] == UInt8((value * 100).rounded()))
        }
    }

    @Test("four channels at 101 steps, 50 ms spacing, Bluetooth-only ids")
    func description() {
        #expect(XboxOneBluetooth.channels.map(\.name) == ["strong", "weak", "left-trigger", "right-trigger"])
        #expect(XboxOneBluetooth.channels.allSatisfy { $0.amplitudeSteps == 101 })
        #expect(XboxOneBluetooth.minimumWriteInterval(for: .bluetooth) == 0.050)
        #expect(XboxOneBluetooth.setupReports(for: .bluetooth, sequence: 0).isEmpty)
        #expect(XboxOneBluetooth.models.allSatisfy { $0.transports == [.bluetooth] && $0.vendorID == 0x045E })
        #expect(Set(XboxOneBluetooth.models.map(\.productID)).isSuperset(of: [0x02FD, 0x0B13, 0x0B20, 0x0B22]))
    }
}
