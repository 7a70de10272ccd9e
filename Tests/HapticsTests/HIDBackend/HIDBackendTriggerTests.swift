import Foundation
import HIDReports
import Haptics
import Testing
import VMRig

extension GuestKernelTests {
    /// Guest side: adaptive-trigger effects through the real path (the `hid` plugin through dlopen,
    /// hidapi, hidraw, uhid) on a virtual DualSense, USB and Bluetooth. Each effect reaches the pad
    /// as the report the pure encoder gives (whose bytes `HIDDualSenseTriggerTests` pins), with the
    /// counter running on from the reports before it; rumble played meanwhile leaves the triggers
    /// alone; releasing the triggers, and closing the device while they are engaged, set both free
    /// before the node closes; an effect the pad cannot play is a typed error and writes nothing.
    /// (Every kind of process death: the stop guard's table, `StopGuardKernel`.)
    @Suite struct HIDBackendTriggers {
        static let effects: [(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?)] = [
            (.feedback(position: 0.3, strength: 0.6), .weapon(startPosition: 0.25, endPosition: 0.6, strength: 1)),
            (.vibration(position: 0, amplitude: 0.5, frequency: 40), nil),
            (nil, .slopeFeedback(startPosition: 0, endPosition: 1, startStrength: 0.125, endStrength: 1)),
            (.multiplePositionVibration(amplitudes: (0..<10).map { $0 < 5 ? 0 : 1 }, frequency: 200), .multiplePositionFeedback(strengths: (0..<10).map { Double($0) / 9 })),
        ]

        @Test("each effect on the wire as encoded; rumble leaves the triggers; release and close set them free", arguments: [VirtualController.dualSenseUSB, .dualSenseBluetooth])
        func effects(_ controller: VirtualController) async throws {
            let facts = PadFacts(controller)
            let pad = try await HIDGuest.plug(controller)
            defer { try? pad.destroy() }
            let node = try pad.hidrawPath()
            let system = HIDGuest.system()
            let id = try HIDGuest.expectedID(pad, controller)
            #expect(try await HIDGuest.description(system, id: id).hasAdaptiveTriggers)
            let device = try system.openDevice(id)
            defer { device.close() }
            let start = HIDGuest.now()
            let triggers = try AdaptiveTriggers(device: device)
            /// The backend's reports since `start`: rumble and trigger reports.
            func reports() -> [UHIDOutputReport] { ReportCheck.ours(pad, facts, since: start) }

            for (index, effect) in Self.effects.enumerated() {
                let before = reports().count
                try triggers.set(right: effect.right, left: effect.left)
                try await HIDGuest.wait(for: "trigger report \(index)", timeout: 5) { reports().count > before }
                let report = reports()[before]
                let sequence = ReportCheck.sequence(report.data, facts)
                #expect(
                    report.data == (try DualSense.triggerReport(right: effect.right, left: effect.left, transport: facts.transport, sequence: sequence)),
                    "effect \(index) on the wire: \(HIDGuest.hex(report.data))")
                if controller == .dualSenseBluetooth {
                    #expect(Int(sequence) == before & 0x0F, "effect \(index): counter \(sequence) after \(before) reports")
                }
            }
            #expect(device.powerState == .active, "engaged triggers hold the device awake")

            // Bad input: a typed error naming the parameter and its range, and nothing written.
            let written = reports().count
            #expect(throws: DeviceError.invalidTriggerEffect(deviceID: id, .outOfRange(parameter: "startPosition", value: 0.05, expected: "0.167…0.833 (zones 2…7)"))) {
                try triggers.set(right: .off, left: .weapon(startPosition: 0.05, endPosition: 0.5, strength: 1))
            }

            // Rumble on top: its reports set no trigger flag, so the triggers keep their effects.
            let engine = try HapticEngine(devices: [device], policy: HapticPolicy())
            try engine.makeAdvancedPlayer(with: try .transient(at: 0, intensity: 1, sharpness: 0.5)).start(atTime: 0)
            try await HIDGuest.wait(for: "the tap's rumble", timeout: 5) { reports().dropFirst(written).contains { !ReportCheck.isOff($0, facts) } }
            try await Task.sleep(for: .milliseconds(300))
            engine.stop()
            let rumble = reports().dropFirst(written)
            #expect(rumble.allSatisfy { $0.data[facts.transport == .usb ? 1 : 3] & 0x0C == 0 }, "a rumble report touched the triggers")
            #expect(device.powerState == .active && HIDGuest.openNodes().contains(node), "the tap's end let the device idle under engaged triggers")

            // Release: both triggers free, then the device idles (motors off, node closed).
            let released = reports().count
            triggers.release()
            try await HIDGuest.wait(for: "\(node) to be closed after the release", timeout: 5) { !HIDGuest.openNodes().contains(node) }
            let after = Array(reports().dropFirst(released))
            let freeing = try #require(after.first, "no report after the release").data
            #expect(freeing == (try DualSense.triggerReport(right: .off, left: .off, transport: facts.transport, sequence: ReportCheck.sequence(freeing, facts))))
            #expect(after.dropFirst().allSatisfy { ReportCheck.isOff($0, facts) }, "after the release: \(after.map { HIDGuest.hex($0.data) })")
            #expect(throws: DeviceError.closed(deviceID: id)) { try triggers.set(right: .off) }

            // Engaged, then the device closed under them: sleeping releases them before the node closes.
            let again = try AdaptiveTriggers(device: device)
            try again.set(right: .feedback(position: 0, strength: 1))
            let engaged = reports().count
            device.close()
            #expect(!HIDGuest.openNodes().contains(node))
            let closing = reports().dropFirst(engaged).map(\.data)
            #expect(
                closing.contains { $0 == (try? DualSense.triggerReport(right: .off, left: .off, transport: facts.transport, sequence: ReportCheck.sequence($0, facts))) },
                "closing with engaged triggers: \(closing.map(HIDGuest.hex))")
        }
    }
}
