import Foundation
import HIDReports
import Haptics
import Synchronization
import Testing
import VMRig

extension GuestKernelTests {
    /// Guest side: controllers come and go while the engine runs, and the backend refuses a node the
    /// user may not open with a message that says how to fix it.
    @Suite struct HIDBackendHotplug {
        /// A DualShock 4 over Bluetooth with a fixed MAC address, so that plugging it again gives the
        /// same `HID_UNIQ`, hence the same device id.
        static func plugDualShock4(mac: [UInt8]) async throws -> UHIDDevice {
            try await HIDGuest.onThread {
                let controller = VirtualController.dualShock4Bluetooth
                try HIDGuest.loadModules(for: controller)
                let descriptor = try controller.descriptor()
                let pad = try UHIDDevice(
                    descriptor: descriptor, name: controller.deviceName, bus: controller.bus, vendorID: controller.vendorID,
                    productID: controller.productID, uniq: VirtualController.macString(mac), featureReports: controller.featureReports(mac: mac))
                _ = try pad.waitForDriver(timeout: .seconds(30))
                _ = try pad.hidrawPath()
                return pad
            }
        }

        /// Steps in the unplug test's pattern: 8 s, well past what two DualShock 4 reports have ever
        /// taken to arrive.
        static let unplugSteps = 40

        /// `count` steps of 0.2 s of changing drive (4 s by default), so reports keep coming on every
        /// device: long enough that an unplug after two updates comes mid-pattern even when the
        /// emulated CPU is slow (two reports once took 3.4 s to arrive, past the end of a 1.6 s
        /// pattern, and under CI's two parallel boots 4.7 s). The evdev test keeps the default.
        static func steps(count: Int = 20) throws -> HapticPattern {
            let intensities = [0.3, 0.9, 0.5, 1.0, 0.4, 0.8, 0.6, 0.2]
            return try HapticPattern(
                events: (0..<count).map { intensities[$0 % intensities.count] }.enumerated().map { index, intensity in
                    HapticEvent(
                        eventType: .hapticContinuous,
                        parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: 0.5)],
                        relativeTime: Double(index) * 0.2, duration: 0.2)
                })
        }

        @Test("unplug mid-pattern: device lost, the other device plays on, and the same id comes back on replug")
        func unplugAndReplug() async throws {
            let mac = VirtualController.uniqueMAC()
            let lostFacts = PadFacts(.dualShock4Bluetooth), otherFacts = PadFacts(.dualSenseUSB)
            let lostPad = try await Self.plugDualShock4(mac: mac)
            var lostPadDestroyed = false
            defer { if !lostPadDestroyed { try? lostPad.destroy() } }
            let otherPad = try await HIDGuest.plug(.dualSenseUSB)
            defer { try? otherPad.destroy() }

            let system = HIDGuest.system()
            let events = Mutex<[BackendEvent]>([])
            system.onDeviceEvent { event in events.withLock { $0.append(event) } }
            let lostID = try HIDGuest.expectedID(lostPad, .dualShock4Bluetooth)
            let otherID = try HIDGuest.expectedID(otherPad, .dualSenseUSB)
            #expect(lostID == "hid:054c:05c4:bluetooth:" + VirtualController.macString(mac))
            _ = try await HIDGuest.description(system, id: lostID)
            _ = try await HIDGuest.description(system, id: otherID)

            let start = HIDGuest.now()
            var unplugged: UInt64 = 0
            // Kept open across the replug: the system must not hand this lost object back.
            var lostKeptOpen: HapticDevice?
            do {
                let lostDevice = try system.openDevice(lostID), otherDevice = try system.openDevice(otherID)
                let engine = try HapticEngine(devices: [lostDevice, otherDevice], policy: HapticPolicy())
                let stopped = Mutex<[(reason: HapticEngine.StoppedReason, at: UInt64)]>([])
                engine.stoppedHandler = { reason in stopped.withLock { $0.append((reason, HIDGuest.now())) } }
                let player = try engine.makeAdvancedPlayer(with: try Self.steps(count: Self.unplugSteps))
                let finished = Mutex<(done: Bool, error: String?)>((false, nil))
                player.completionHandler = { error in finished.withLock { $0 = (true, error.map { "\($0)" }) } }
                try player.start(atTime: 0)
                // Unplug once the DualShock 4 has played two of its steps, from a thread of its own
                // so the moment is exact.
                unplugged = try await HIDGuest.onThread {
                    try HIDGuest.block(for: "two steps on the DualShock 4", timeout: 5) {
                        ReportCheck.ours(lostPad, lostFacts, since: start).count >= 2
                    }
                    let at = HIDGuest.now()
                    try lostPad.destroy()
                    return at
                }
                lostPadDestroyed = true
                // Mid-pattern: at least two steps (0.2 s each) are still to come on the other device. On a
                // busy emulated CPU two reports have taken 0.72 s, once 3.4 s and once 4.7 s, to arrive.
                let length = Double(Self.unplugSteps) * 0.2
                #expect(HIDGuest.seconds(unplugged, since: start) < length - 0.5, "the unplug came \(HIDGuest.seconds(unplugged, since: start)) s into the \(length) s pattern")
                try await HIDGuest.wait(for: "the engine to report \(lostID) lost", timeout: 5) {
                    stopped.withLock { $0.contains { $0.reason == .deviceLost(deviceID: lostID) } }
                }
                let reported = stopped.withLock { $0.first { $0.reason == .deviceLost(deviceID: lostID) }!.at }
                print("hid-backend: device lost reported \(String(format: "%.1f", HIDGuest.seconds(reported, since: unplugged) * 1000)) ms after the unplug")
                try await HIDGuest.wait(for: "the pattern to finish on the other device", timeout: 12) { finished.withLock { $0.done } }
                #expect(finished.withLock { $0.error } == nil, "the player did not play to its end")
                #expect(lostDevice.isLost)
                #expect(!otherDevice.isLost)
                #expect(stopped.withLock { $0.map(\.reason) } == [.deviceLost(deviceID: lostID)])
                engine.stop()
                otherDevice.close()
                lostKeptOpen = lostDevice
            }
            // The other device played on: states after the unplug, ending silent.
            try await HIDGuest.wait(for: "the DualSense's off report", timeout: 5) {
                ReportCheck.ours(otherPad, otherFacts, since: start).last.map { ReportCheck.isOff($0, otherFacts) } ?? false
            }
            let after = ReportCheck.ours(otherPad, otherFacts, since: unplugged + 50_000_000)
            let drivenAfter = Set(after.filter { !ReportCheck.isOff($0, otherFacts) }.map(\.data))
            #expect(drivenAfter.count >= 2, "the DualSense got \(after.count) reports after the unplug")
            ReportCheck.spacing(ReportCheck.ours(otherPad, otherFacts, since: start), facts: otherFacts, since: start)
            try await HIDGuest.wait(for: "device-removed for \(lostID)", timeout: 5) {
                events.withLock { $0.contains(.deviceRemoved(id: lostID)) }
            }

            // Plug it in again: same id, announced, and it plays.
            let replugged = try await Self.plugDualShock4(mac: mac)
            defer { try? replugged.destroy() }
            try await HIDGuest.wait(for: "device-added for \(lostID)", timeout: 10) {
                events.withLock { $0.contains(.deviceAdded(id: lostID)) }
            }
            let again = HIDGuest.now()
            let device = try system.openDevice(lostID)
            defer { device.close() }
            #expect(!device.isLost, "the system handed back the lost device object")
            #expect(device !== lostKeptOpen, "the lost device object was handed out again")
            #expect(lostKeptOpen?.isLost == true)
            let engine = try HapticEngine(devices: [device], policy: HapticPolicy())
            let player = try engine.makeAdvancedPlayer(with: try .transient(at: 0, intensity: 1, sharpness: 0.3))
            let finished = Mutex(false)
            player.completionHandler = { _ in finished.withLock { $0 = true } }
            try player.start(atTime: 0)
            try await HIDGuest.wait(for: "the replugged pad to play", timeout: 5) { finished.withLock { $0 } }
            engine.stop()
            try await HIDGuest.wait(for: "the replugged pad's off report", timeout: 5) {
                ReportCheck.ours(replugged, lostFacts, since: again).last.map { ReportCheck.isOff($0, lostFacts) } ?? false
            }
            #expect(ReportCheck.ours(replugged, lostFacts, since: again).count >= 2)
        }

        @Test("without access to the node, open fails with EACCES naming the node and the udev rule")
        func permissionDenied() async throws {
            let controller = VirtualController.dualShock4v1USB
            let pad = try await HIDGuest.plug(controller)
            defer { try? pad.destroy() }
            let node = try pad.hidrawPath()
            // devtmpfs creates hidraw nodes root-only already; make sure, as a distribution without the rule would.
            #expect(chown(node, 0, 0) == 0 && chmod(node, 0o600) == 0)
            let system = HIDGuest.system()
            let id = try HIDGuest.expectedID(pad, controller)
            _ = try await HIDGuest.description(system, id: id)
            let cal = TestSupport.buildDirectory + "/haptic-cal"
            try #require(FileManager.default.isExecutableFile(atPath: cal), "build haptic-cal first (swift build)")

            // Listing needs no access to the node: the controller shows up for the unprivileged user,
            // marked unavailable with the fix.
            let list = try UnprivilegedProcess.run(cal, ["list"])
            #expect(list.output.contains(id), "haptic-cal list as nobody:\n\(list.output)")
            #expect(list.output.contains("unavailable: \(id): permission denied opening \(node)"), "haptic-cal list as nobody:\n\(list.output)")
            // Playing does: the error names the node, the rule file and the fix.
            let play = try UnprivilegedProcess.run(cal, ["play", id, "--duration", "0.05"])
            #expect(play.status != 0)
            #expect(play.output.contains(node), "haptic-cal play as nobody:\n\(play.output)")
            #expect(play.output.contains("permission denied"))
            #expect(play.output.contains("Hardware/udev/70-haptics-gamepads.rules"))
            #expect(play.output.contains("/etc/udev/rules.d/70-haptics-gamepads.rules"))
            #expect(play.output.contains("udevadm"))

            // Root may open it: the refusal above is the permission, not a broken node.
            let fd = open(node, O_RDWR | O_CLOEXEC)
            #expect(fd >= 0)
            if fd >= 0 { close(fd) }
        }
    
        @Test("listing opens no controller: the wake latency is an estimate until the first wake measures it")
        func listingOpensNothing() async throws {
            // With hid-generic (the second boot) nothing else opens a virtual pad, so any UHID_OPEN is ours.
            guard VMRig.ignoresSpecialHIDDrivers else { return }
            let controller = VirtualController.dualSenseUSB
            let pad = try await HIDGuest.plug(controller)
            defer { try? pad.destroy() }
            let system = HIDGuest.system()
            let id = try HIDGuest.expectedID(pad, controller)
            let listed = try await HIDGuest.description(system, id: id)
            for _ in 0..<3 { _ = system.devices() }
            #expect(pad.openCount == 0, "listing opened the hidraw node \(pad.openCount) time(s)")
            #expect(listed.physicalID?.hasPrefix("/sys/devices/") == true, "\(String(describing: listed.physicalID))")
            #expect(listed.preference == 200)
            let device = try system.openDevice(id)
            defer { device.close() }
            let hold = device.hold()
            hold.prepare()
            #expect(pad.openCount == 1, "prepare opened the node once")
            hold.release()
            let measured = try #require(system.devices().first { $0.id == id }).wakeLatency
            #expect(measured != listed.wakeLatency, "the wake was measured: \(measured) s vs the estimate \(listed.wakeLatency) s")
        }

        @Test("listing while controllers come and go: every scan completes (nodes vanishing between two sysfs reads are skipped)")
        func listingDuringUnplugs() async throws {
            let controller = VirtualController.dualShock4v1USB
            let system = HIDGuest.system()
            let stop = Mutex(false)
            let scans = Mutex(0)
            // One thread lists as fast as it can while pads are created and destroyed under it.
            let lister = Thread {
                while !stop.withLock({ $0 }) {
                    _ = system.devices()
                    scans.withLock { $0 += 1 }
                }
            }
            lister.start()
            defer { stop.withLock { $0 = true } }
            for _ in 0..<8 {
                let pad = try await HIDGuest.plug(controller)
                try pad.destroy()
            }
            stop.withLock { $0 = true }
            try await HIDGuest.wait(for: "the lister to finish", timeout: 5) { lister.isFinished }
            #expect(scans.withLock { $0 } > 8, "the listing ran while the pads came and went")
        }
}
}
