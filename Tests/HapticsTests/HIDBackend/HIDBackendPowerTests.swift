import Foundation
import HIDReports
import Haptics
import Synchronization
import Testing
import VMRig

extension GuestKernelTests {
    /// Guest side: the power model on a real node. Idle holds no file descriptor; `prepare()` opens
    /// the node and completes the controller's hand-shake, so the trigger that follows is one write;
    /// the device idles (off report, node closed) when the trigger ends; the next `prepare()` reopens
    /// the node without repeating the hand-shake. A Switch Pro over USB has
    /// the longest set-up (the bridge hand-shake and sub-command 0x48).
    @Suite struct HIDBackendPower {
        @Test("idle closes the node; prepare opens it and shakes hands; the first trigger is one write")
        func prepareThenTrigger() async throws {
            let controller = VirtualController.switchProUSB
            let facts = PadFacts(controller)
            let pad = try await HIDGuest.plug(controller)
            defer { try? pad.destroy() }
            let node = try pad.hidrawPath()
            let system = HIDGuest.system()
            let id = try HIDGuest.expectedID(pad, controller)
            _ = try await HIDGuest.description(system, id: id)
            let start = HIDGuest.now()
            let device = try system.openDevice(id)
            defer { device.close() }
            #expect(device.powerState == .idle)
            #expect(!HIDGuest.openNodes().contains(node), "an idle device holds \(node) open")
            #expect(ReportCheck.ours(pad, facts, since: start).isEmpty)

            let hold = device.hold()
            defer { hold.release() }
            hold.prepare()
            #expect(device.powerState == .prepared, "prepare failed: \(String(describing: device.lastError))")
            #expect(HIDGuest.openNodes().contains(node))
            // The set-up is done inside prepare: it is on the wire before any trigger.
            try await HIDGuest.wait(for: "the set-up reports", timeout: 5) {
                ReportCheck.ours(pad, facts, since: start).count >= facts.setupReports().count
            }
            #expect(ReportCheck.ours(pad, facts, since: start).map(\.data) == facts.setupReports())
            // The measured wake (open, hand-shake, the 30 ms spacing after 0x48) is now the device's wake latency.
            let measured = try #require(system.devices().first { $0.id == id }).wakeLatency
            #expect(measured >= facts.interval && measured < 2, "wake latency \(measured) s")

            let engine = try HapticEngine(devices: [device], policy: HapticPolicy())
            let player = try engine.makeAdvancedPlayer(with: try .transient(at: 0, intensity: 1, sharpness: 0.5))
            let finished = Mutex(false)
            player.completionHandler = { _ in finished.withLock { $0 = true } }
            let trigger = HIDGuest.now()
            try player.start(atTime: 0)
            try await HIDGuest.wait(for: "the first report after the trigger", timeout: 5) {
                pad.outputReports.contains { $0.timestamp >= trigger && facts.isOurs($0) }
            }
            let first = try #require(ReportCheck.ours(pad, facts, since: trigger).first)
            #expect(first.reportID == SwitchPro.rumbleReportID && !ReportCheck.isOff(first, facts), "the trigger's first write is \(HIDGuest.hex(first.data))")
            print("hid-backend: prepared Switch Pro (USB): trigger to uhid \(String(format: "%.3f", HIDGuest.seconds(first.timestamp, since: trigger) * 1000)) ms; wake latency \(String(format: "%.1f", measured * 1000)) ms")

            try await HIDGuest.wait(for: "the tap to end", timeout: 5) { finished.withLock { $0 } }
            // The trigger consumed the preparation: the device idles, silences the pad and closes the node.
            try await HIDGuest.wait(for: "\(node) to be closed after the trigger", timeout: 5) { !HIDGuest.openNodes().contains(node) }
            #expect(device.powerState == .idle)
            let last = try #require(ReportCheck.ours(pad, facts, since: start).last)
            #expect(ReportCheck.isOff(last, facts), "the device idled without the off report: \(HIDGuest.hex(last.data))")

            // Prepared again: the node opens, but the controller kept its set-up, so nothing is
            // written until the next trigger, which continues the packet counter.
            let written = ReportCheck.ours(pad, facts, since: start).count
            hold.prepare()
            #expect(device.powerState == .prepared)
            #expect(HIDGuest.openNodes().contains(node))
            finished.withLock { $0 = false }
            let again = HIDGuest.now()
            try player.start(atTime: 0)
            try await HIDGuest.wait(for: "the second tap to end", timeout: 5) { finished.withLock { $0 } }
            try await HIDGuest.wait(for: "\(node) to be closed after the second trigger", timeout: 5) { !HIDGuest.openNodes().contains(node) }
            let second = ReportCheck.ours(pad, facts, since: start).dropFirst(written)
            #expect(second.first.map { $0.timestamp >= again && $0.reportID == SwitchPro.rumbleReportID } == true, "after the second prepare: \(second.map { HIDGuest.hex(Array($0.data.prefix(12))) })")
            #expect(second.first.map { ReportCheck.sequence($0.data, facts) } == UInt8((written) & 0x0F), "the counter continues across wakes")
            #expect(second.last.map { ReportCheck.isOff($0, facts) } == true)
            ReportCheck.spacing(ReportCheck.ours(pad, facts, since: start), facts: facts, since: start)
            engine.stop()
        }
    }
}
