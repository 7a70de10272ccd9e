import HIDReports
import Testing

/// Every report an encoder writes must have the id and length the controller's report descriptor
/// declares for that output report: hidraw passes our bytes through, and a mismatch is at best padded
/// and at worst rejected (uhid in the test rig, strict hosts).
@Suite("HID: report lengths against the report descriptors")
struct HIDDescriptorLengthTests {
    /// (fixture, family, transport) for every descriptor in Tests/Fixtures/hid-descriptors.
    static let cases: [(String, String, HIDTransport)] = [
        ("ds4_054c_05c4_bt_hidtools.rdesc.txt", DualShock4.name, .bluetooth),
        ("ds4_v1_054c_05c4_usb.rdesc.txt", DualShock4.name, .usb),
        ("ds4_v2_054c_09cc_bt_alpakka.rdesc.txt", DualShock4.name, .bluetooth),
        ("ds4_v2_054c_09cc_usb.rdesc.txt", DualShock4.name, .usb),
        ("dualsense_054c_0ce6_bt.rdesc.txt", DualSense.name, .bluetooth),
        ("dualsense_054c_0ce6_usb.rdesc.txt", DualSense.name, .usb),
        ("dualsense_054c_0ce6_usb_hidtools257.rdesc.txt", DualSense.name, .usb),
        ("switch_pro_057e_2009_bt.rdesc.txt", SwitchPro.name, .bluetooth),
        ("switch_pro_057e_2009_usb.rdesc.txt", SwitchPro.name, .usb),
        ("xbox_one_s_045e_02fd_bt.rdesc.txt", XboxOneBluetooth.name, .bluetooth),
        ("xbox_series_045e_0b13_bt.rdesc.txt", XboxOneBluetooth.name, .bluetooth),
    ]

    @Test("the cases cover every fixture")
    func coversEveryFixture() throws {
        #expect(Set(Self.cases.map(\.0)) == Set(try HIDDescriptorFixture.allNames()))
    }

    @Test("the descriptor walk finds the output reports the facts file names")
    func walk() throws {
        #expect(try HIDDescriptorFixture("ds4_v1_054c_05c4_usb.rdesc.txt").outputReportLengths() == [0x05: 32])
        #expect(try HIDDescriptorFixture("ds4_054c_05c4_bt_hidtools.rdesc.txt").outputReportLengths()[0x11] == 78)
        #expect(try HIDDescriptorFixture("dualsense_054c_0ce6_bt.rdesc.txt").outputReportLengths()[0x31] == 78)
        #expect(try HIDDescriptorFixture("xbox_one_s_045e_02fd_bt.rdesc.txt").outputReportLengths() == [0x03: 9])
        #expect(
            try HIDDescriptorFixture("switch_pro_057e_2009_usb.rdesc.txt").outputReportLengths()
                == [0x01: 64, 0x10: 64, 0x80: 64, 0x82: 64])
        #expect(
            try HIDDescriptorFixture("switch_pro_057e_2009_bt.rdesc.txt").outputReportLengths()
                == [0x01: 49, 0x10: 49, 0x11: 49, 0x12: 49])
    }

    /// DualSense over USB: the descriptor declares report 0x02 as 47 data bytes, 48 with the id. The
    /// kernel writes 63 (`DS_OUTPUT_REPORT_USB_SIZE`) and would fail this check; SDL writes 48. We chose
    /// the descriptor's 48 (see `DualSense`), and this test holds us to it.
    @Test("DualSense USB report 0x02 is the descriptor's 48 bytes, not the kernel's 63")
    func dualSenseUSBLength() throws {
        for name in ["dualsense_054c_0ce6_usb.rdesc.txt", "dualsense_054c_0ce6_usb_hidtools257.rdesc.txt"] {
            #expect(try HIDDescriptorFixture(name).outputReportLengths()[0x02] == 48)
        }
        #expect(DualSense.rumbleReport(state: .off, transport: .usb, sequence: 0).count == 48)
        #expect(DualSense.usbReportLength != 63)
    }

    @Test("every set-up, rumble and stop report has a declared output id and exactly its length", arguments: cases)
    func reportsMatchDescriptor(fixtureName: String, familyName: String, transport: HIDTransport) throws {
        let family = try #require(ControllerTable.families.first { $0.name == familyName })
        let declared = try HIDDescriptorFixture(fixtureName).outputReportLengths()
        let states = [
            RumbleState.off, RumbleState(strong: 1, weak: 1, leftTrigger: 1, rightTrigger: 1),
            RumbleState(strong: 0.3, weak: 0.7, strongFrequency: 900, weakFrequency: 50),
        ]
        var reports = family.setupReports(for: transport, sequence: 0)
        // Every encoder the set-up may choose (the DualSense's two vibration modes), and the family's plain report.
        for encoder in family.possibleEncoders(for: transport) {
            reports += states.map { encoder.report($0, sequence: 0) }
        }
        let encoders = family.possibleEncoders(for: transport)
        #expect(Set(encoders.map { $0.report(states[1], sequence: 0) }).count == encoders.count, "each encoder the set-up may choose writes its own report")
        reports += states.map { family.rumbleReport(state: $0, transport: transport, sequence: 0) }
        reports.append(family.stopReport(transport: transport, sequence: 0))
        for report in reports {
            let id = try #require(report.first)
            let length = try #require(declared[id], "report 0x\(String(id, radix: 16)) is not an output report of \(fixtureName)")
            #expect(report.count == length, "report 0x\(String(id, radix: 16)) in \(fixtureName)")
        }
    }
}
