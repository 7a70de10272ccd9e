import Foundation
import Testing
import VMRig

/// Host side: boots the kernel VM rig and runs every guest-side suite (everything nested in
/// ``GuestKernelTests``) inside it, once per HID driver situation, so a `swift test` makes
/// exactly two VM boots. Each guest issue becomes an issue of the host test here, at the
/// guest's source location, with the guest's message.
///
/// Skipped (with the reason) only when the VM cannot start at all: no `qemu-system-x86_64`,
/// not x86_64, already inside the VM, or `HAPTICS_VM_RIG_SKIP=1`. If qemu is there but the
/// set-up has not run, the test runs `Scripts/vm/setup` first (cached; a no-op when done).
@Suite(
    "VM rig runner (host side)",
    .enabled(
        Comment(rawValue: VMRig.unavailableReason.map { "VM rig skipped: \($0)" } ?? "VM rig available"),
        { VMRig.unavailableReason == nil }),
    .tags(.kernel))
struct VMRigRunner {
    /// Loads every HID module the rig knows (in situation (b) hid-generic still takes all devices).
    static let modprobe =
        #"modprobe -d "$HAPTICS_VM_RIG_ROOT" -a uhid hid_generic hid_playstation hid_sony hid_nintendo"#

    @Test("guest suites with the real HID drivers loaded (hid_playstation, hid_sony, hid_nintendo)")
    func realDrivers() async throws {
        try await runGuestSuites(situation: "real drivers", kernelArguments: [])
    }

    @Test("guest suites with hid.ignore_special_drivers=1 (hid-generic takes every device)")
    func ignoreSpecialDrivers() async throws {
        try await runGuestSuites(situation: "ignore_special_drivers", kernelArguments: ["hid.ignore_special_drivers=1"])
    }

    func runGuestSuites(situation: String, kernelArguments: [String]) async throws {
        let setup = try await VMRig.prepare()
        print("vm-rig [\(situation)]: set-up checked in \(format(setup))")
        // The time limit only catches a guest that hangs. A boot takes 1.5–4 minutes under emulation
        // on two shared cores (the other boot and the host's suites run beside it); a limit near that
        // cut off a healthy run on a slower machine.
        // HAPTICS_VM_GUEST_FILTER (a Swift Testing --filter) runs only the guest tests it names, in one
        // pass: for chasing one guest test through repeated boots.
        let only = ProcessInfo.processInfo.environment["HAPTICS_VM_GUEST_FILTER"].flatMap { $0.isEmpty ? nil : [$0] }
        let report = try await VMRig.runGuestTests(
            filters: only ?? [VMRig.guestSuiteFilter, VMRig.exclusiveGuestSuiteFilter, VMRig.realtimeGuestSuiteFilter],
            kernelArguments: kernelArguments, preparation: [Self.modprobe], timeout: .seconds(600))
        print("vm-rig [\(situation)]: \(report.summary)")
        if ProcessInfo.processInfo.environment["HAPTICS_VM_VERBOSE"] == "1" {
            print(report.run.output)
        }
        for issue in report.failures {
            let location = issue.filePath.flatMap { path in
                issue.line.map {
                    SourceLocation(fileID: issue.fileID ?? path, filePath: path, line: $0, column: issue.column ?? 1)
                }
            }
            let text = "[guest, \(situation)] \(issue.testID): " + issue.messages.joined(separator: "\n")
            if let location {
                Issue.record(Comment(rawValue: text), sourceLocation: location)
            } else {
                Issue.record(Comment(rawValue: text))
            }
        }
        if !report.succeeded && (report.failures.isEmpty || !report.runEnded) {
            // Crash, time-out, or nothing ran: show the end of the guest console.
            Issue.record(
                Comment(
                    rawValue: "[guest, \(situation)] the guest test run did not complete cleanly: \(report.summary)"
                        + (report.runEnded ? "" : " (no end of run in the event stream)")
                        + "\n--- guest console (tail) ---\n" + String(report.run.output.suffix(6000))))
        }
        if report.succeeded {
            try? FileManager.default.removeItem(atPath: (report.run.resultsDirectory as NSString).deletingLastPathComponent)
        } else {
            print("vm-rig [\(situation)]: results kept in \(report.run.resultsDirectory)")
        }
    }

    func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.2f s", Double(seconds) + Double(attoseconds) / 1e18)
    }
}

/// Host side, no VM: the descriptor fixtures parse and check, and the rig's report-size
/// arithmetic matches what the kernel drivers expect.
@Suite("VM rig helpers (host side)")
struct VMRigHelperTests {
    @Test("every descriptor fixture parses and matches its stated length and crc32")
    func fixturesParse() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: VMRig.descriptorFixtures)
            .filter { $0.hasSuffix(".rdesc.txt") }
        #expect(names.count >= 9)
        for name in names {
            let descriptor = try HIDReportDescriptor.fixture(name)
            #expect(!descriptor.bytes.isEmpty, "\(name)")
        }
        for controller in VirtualController.allCases {
            _ = try controller.descriptor()
        }
    }

    @Test("a wrong crc32 or length in a fixture comment is reported")
    func fixtureChecksFail() {
        #expect(throws: RigError.self) {
            try HIDReportDescriptor(fixtureText: "# length: 3 bytes; crc32(zlib): 0x12345678\n05 01 09\n")
        }
        #expect(throws: RigError.self) { try HIDReportDescriptor(fixtureText: "# length: 4 bytes\n05 01 09\n") }
        #expect(throws: RigError.self) { try HIDReportDescriptor(fixtureText: "05 01 zz\n") }
        let ok = try? HIDReportDescriptor(
            fixtureText: "# length: 3 bytes; crc32(zlib): 0x\(String(RigCRC32.checksum([0x05, 0x01, 0x09]), radix: 16))\n05 01 09\n")
        #expect(ok?.bytes == [0x05, 0x01, 0x09])
    }

    @Test("report lengths computed from the descriptors match the kernel drivers' sizes")
    func reportLengths() throws {
        let dualSense = try VirtualController.dualSenseUSB.descriptor()
        #expect(dualSense.reportLength(.output, id: 0x02) == 48)
        #expect(dualSense.reportLength(.input, id: 0x01) == 64)
        #expect(dualSense.reportLength(.feature, id: 0x05) == 41)  // DS_FEATURE_REPORT_CALIBRATION_SIZE
        #expect(dualSense.reportLength(.feature, id: 0x09) == 20)  // DS_FEATURE_REPORT_PAIRING_INFO_SIZE
        #expect(dualSense.reportLength(.feature, id: 0x20) == 64)  // DS_FEATURE_REPORT_FIRMWARE_INFO_SIZE
        let ds4 = try VirtualController.dualShock4USB.descriptor()
        #expect(ds4.reportLength(.feature, id: 0x02) == 37)  // DS4_FEATURE_REPORT_0x02_SIZE
        #expect(ds4.reportLength(.feature, id: 0x81) == 7)  // DS4_FEATURE_REPORT_0x81_SIZE
        #expect(ds4.reportLength(.feature, id: 0xA3) == 49)  // DS4_FEATURE_REPORT_0xA3_SIZE
        #expect(ds4.reportLength(.output, id: 0x05) == 32)  // DS4_OUTPUT_REPORT_0x05_SIZE
        let pro = try VirtualController.switchProUSB.descriptor()
        #expect(pro.reportLength(.input, id: 0x21) == 64)
    }

    @Test("feature answers have the drivers' sizes, a valid Bluetooth CRC and non-zero calibration ranges")
    func featureAnswers() throws {
        let mac: [UInt8] = [0x02, 0x56, 0, 1, 2, 3]
        for controller in [VirtualController.dualSenseUSB, .dualSenseBluetooth, .dualShock4USB, .dualShock4Bluetooth] {
            let descriptor = try controller.descriptor()
            for (id, answer) in controller.featureReports(mac: mac) {
                #expect(answer.first == id)
                if let declared = descriptor.reportLength(.feature, id: id) {
                    #expect(answer.count >= declared, "\(controller) 0x\(String(id, radix: 16))")
                }
            }
        }
        let bt = VirtualController.dualSenseBluetooth.featureReports(mac: mac)[0x05]!
        let crc = RigCRC32.checksum(bt[0..<37], continuing: RigCRC32.checksum([0xA3]))
        #expect(Array(bt[37..<41]) == [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) })
        let usb = VirtualController.dualShock4USB.featureReports(mac: mac)[0x02]!
        func s16(_ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(usb[offset]) | UInt16(usb[offset + 1]) << 8)) }
        for plus in [7, 11, 15] { #expect(s16(plus) - s16(plus + 2) != 0) }  // gyro ranges
        for plus in [23, 27, 31] { #expect(s16(plus) - s16(plus + 2) != 0) }  // accelerometer ranges
    }

    @Test("a guest-side call on the host fails with a clear error")
    func guestOnlyOnHost() throws {
        if VMRig.isInsideVM { return }
        #expect(throws: RigError.self) { try VMRig.loadKernelModule("uhid") }
    }
}
