import Foundation
import HIDReports
import Haptics
import Testing
import VMRig

/// One hand-written vector per controller: a frame to submit and the bytes that must arrive, written
/// out from the report layouts in rumble-reports.md (and its two CRC examples), not from the
/// HIDReports encoders, so that the encoders and the backend are checked against something
/// independent. The CRCs of the two Bluetooth off reports were computed with Python's zlib
/// (`zlib.crc32(b"\xa2" + report[:74])`, little-endian).
struct PinnedVector: Sendable {
    let controller: VirtualController
    /// Drives per channel: (amplitude 0…1, frequency in Hz or 0).
    let drives: [(Double, Double)]
    /// The set-up reports after the wake (counter from 0), the rumble report, the off report.
    let setup: [[UInt8]]
    let rumble: [UInt8]
    let off: [UInt8]
    /// Feature report 0x20 to answer instead of the rig's (a DualSense): which vibration mode.
    var firmware: [UInt8]? = nil
    /// A state submitted first, so that `rumble` carries counter 1 (DualSense Bluetooth).
    var before: [(Double, Double)]? = nil

    static let byte64: Double = 64.0 / 255.0, byte128: Double = 128.0 / 255.0

    /// DualSense firmware info with update version 2.16 (0x0210), older than COMPATIBLE_VIBRATION2
    /// (2.21), with the Bluetooth CRC (seed 0xA3) when `bluetooth`.
    static func oldFirmware(bluetooth: Bool) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: 64)
        report[0] = 0x20
        report[44] = 0x10
        report[45] = 0x02
        if bluetooth { PlayStationCRC.seal(&report, seed: PlayStationCRC.featureSeed) }
        return report
    }

    /// The vector for `controller`.
    static func vector(for controller: VirtualController) -> PinnedVector {
        let sony: [(Double, Double)] = [(byte128, 0), (byte64, 0)]  // strong 0x80, weak 0x40
        let tones: [(Double, Double)] = [(1, 160), (1, 320)]
        let xbox: [(Double, Double)] = [(1, 0), (0.5, 0), (0.25, 0), (0.75, 0)]
        switch controller {
        case .dualShock4USB, .dualShock4v1USB:
            // [1] valid_flag0 = motor only, [4] weak, [5] strong, 32 bytes.
            return PinnedVector(
                controller: controller, drives: sony, setup: [], rumble: HIDBytes.padded("05 01 00 00 40 80", to: 32),
                off: HIDBytes.padded("05 01", to: 32))
        case .dualShock4Bluetooth:
            // rumble-reports.md: "DS4 BT, hw_control 0xC0, flag0=0x01, weak=0x40, strong=0x80 … CRC 34 d9 31 0a".
            return PinnedVector(
                controller: controller, drives: sony, setup: [],
                rumble: HIDBytes.padded("11 c0 00 01 00 00 40 80", to: 78, suffix: "34 d9 31 0a"),
                off: HIDBytes.padded("11 c0 00 01", to: 78, suffix: "8d f5 2d e0"))
        case .dualSenseUSB:
            // The rig's firmware 2.36: HAPTICS_SELECT in valid_flag0 ([1] = 0x02), COMPATIBLE_VIBRATION2
            // in valid_flag2 ([39] = 0x04); [3] weak, [4] strong; 48 bytes, as the descriptor declares.
            return PinnedVector(
                controller: controller, drives: sony, setup: [],
                rumble: HIDBytes.padded("02 02 00 40 80", to: 48).replacing(at: 39, with: 0x04),
                off: HIDBytes.padded("02 02", to: 48).replacing(at: 39, with: 0x04))
        case .dualSenseBluetooth:
            // rumble-reports.md: "DualSense BT, seq 1, flag0=0x03, weak=0x40, strong=0x80 … CRC 61 87 45 58":
            // firmware 2.16 (compatible mode), and a first report so that this one carries counter 1.
            return PinnedVector(
                controller: controller, drives: sony, setup: [],
                rumble: HIDBytes.padded("31 10 10 03 00 40 80", to: 78, suffix: "61 87 45 58"),
                off: HIDBytes.padded("31 20 10 03", to: 78, suffix: "9e 8d 57 6e"), firmware: oldFirmware(bluetooth: true),
                before: [(1, 0), (1, 0)])
        case .xboxOneSBluetooth, .xboxSeriesBluetooth:
            // Enable all four (0x0f); left trigger 25, right trigger 75, strong 100, weak 50 (of 100);
            // duration 1.5 s = 150 (0x96) in 10 ms units; no delay, played once.
            return PinnedVector(
                controller: controller, drives: xbox, setup: [], rumble: HIDBytes.hex("03 0f 19 4b 64 32 96 00 00"),
                off: HIDBytes.hex("03 0f 00 00 00 00 96 00 00"))
        case .switchProUSB:
            // The bridge hand-shake (02 03 02 04), sub-command 0x48 with data 01 and neutral rumble
            // (00 01 40 40) at counter 4; then HD rumble at the largest safe amplitude: 160 Hz on the
            // left actuator's low band (00 01 40 72), 320 Hz on the right's (00 01 60 72), counter 5.
            return PinnedVector(
                controller: controller, drives: tones,
                setup: ["80 02", "80 03", "80 02", "80 04", "01 04 00 01 40 40 00 01 40 40 48 01"].map { HIDBytes.padded($0, to: 64) },
                rumble: HIDBytes.padded("10 05 00 01 40 72 00 01 60 72", to: 64),
                off: HIDBytes.padded("10 06 00 01 40 40 00 01 40 40", to: 64))
        case .switchProBluetooth:
            return PinnedVector(
                controller: controller, drives: tones, setup: [HIDBytes.padded("01 00 00 01 40 40 00 01 40 40 48 01", to: 49)],
                rumble: HIDBytes.padded("10 01 00 01 40 72 00 01 60 72", to: 49),
                off: HIDBytes.padded("10 02 00 01 40 40 00 01 40 40", to: 49))
        }
    }

    /// A frame with `drives`.
    static func frame(_ drives: [(Double, Double)]) -> DriveFrame {
        DriveFrame(time: .monotonicNow(), channels: drives.map { ChannelDrive(amplitude: $0.0, frequency: $0.1) })
    }

    /// Drives the device directly (no engine) on the calling thread: wake, the states one by one
    /// (each waited for at the uhid side, or the writer would rightly coalesce it away), stop, sleep,
    /// close; then waits for the off report. Returns the backend's reports.
    func drive(_ backend: Backend, id: String, pad: UHIDDevice, facts: PadFacts) throws -> [UHIDOutputReport] {
        let start = HIDGuest.now()
        let device = try backend.open(deviceID: id)
        try device.wake()
        var count = setup.count
        for drives in [before, drives].compactMap({ $0 }) {
            try device.submit(Self.frame(drives))
            count += 1
            _ = try pad.waitForOutputReports(count: count, timeout: .seconds(5)) { $0.timestamp >= start && facts.isOurs($0) }
        }
        try device.stop()
        try device.sleep()
        device.close()
        try HIDGuest.block(for: "\(controller): the off report", timeout: 5) {
            ReportCheck.ours(pad, facts, since: start).last.map { ReportCheck.isOff($0, facts, dualSenseMode: firmware == nil ? .compatibleV2 : .compatible) } ?? false
        }
        return ReportCheck.ours(pad, facts, since: start)
    }

    /// Checks `reports` against the vector: the set-up, the rumble report, any refreshes of it (the
    /// same bytes, the counter advancing on a Switch Pro), then the off report.
    func check(_ reports: [UHIDOutputReport], facts: PadFacts, sourceLocation: SourceLocation = #_sourceLocation) {
        let got = reports.map(\.data)
        let listing = got.map(HIDGuest.hex).joined(separator: "\n")
        #expect(Array(got.prefix(setup.count)) == setup, "set-up:\n\(listing)", sourceLocation: sourceLocation)
        var rest = Array(got.dropFirst(setup.count + (before == nil ? 0 : 1)))
        #expect(rest.first == rumble, "rumble report:\n\(listing)", sourceLocation: sourceLocation)
        guard !rest.isEmpty else { return }
        rest.removeFirst()
        var refreshes = 0
        while rest.count > 1, rest.first == bumped(rumble, by: refreshes + 1) {
            rest.removeFirst()
            refreshes += 1
        }
        #expect(rest == [bumped(off, by: refreshes)], "off report after \(refreshes) refresh(es):\n\(listing)", sourceLocation: sourceLocation)
    }

    /// `report` with its Switch Pro packet counter advanced by `steps` (other families carry no
    /// counter in a report that can be refreshed).
    func bumped(_ report: [UInt8], by steps: Int) -> [UInt8] {
        guard PadFacts(controller).isSwitch else { return report }
        return report.replacing(at: 1, with: UInt8((Int(report[1]) + steps) & 0x0F))
    }
}

extension Array where Element == UInt8 {
    /// A copy with `self[index] = value`.
    func replacing(at index: Int, with value: UInt8) -> [UInt8] {
        var copy = self
        copy[index] = value
        return copy
    }
}
