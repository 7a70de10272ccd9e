import Foundation
import Haptics
import Synchronization
import Testing
import VMRig

extension GuestKernelTests.Evdev {
    /// Guest side: the evdev backend's devices coming and going, a killed player, and a node the user
    /// may not open; on uinput devices, so both boots run them.
    /// uinput needs no HID driver: this runs in the real-drivers boot only (see ``GuestKernelTests/Evdev``).
    @Suite(.enabled(if: !VMRig.ignoresSpecialHIDDrivers, "runs in the real-drivers boot only"))
    struct EvdevLifecycle {
        @Test("SIGKILL of the playing process: the device sees its effect stopped and erased (effects belong to the descriptor)")
        func killedPlayer() async throws {
            try await HIDGuest.onThread {
                let (pad, _) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput sigkill"))
                defer { try? pad.destroy() }
                let id = EvdevGuest.expectedID(pad)
                _ = try EvdevGuest.description(EvdevGuest.system(), id: id)
                let begin = HIDGuest.now()
                let child = try ChildProcess(
                    [EvdevGuest.hapticCal, "play", id, "--duration", "10", "--intensity", "1"], outputPath: "/tmp/evdev-uinput-sigkill-\(getpid()).log")
                let played = try pad.waitForRecords("haptic-cal to play", timeout: 60) { EvdevGuest.firstPlay(in: $0, since: begin) != nil }
                let effectID = try #require(EvdevGuest.firstPlay(in: played, since: begin).map { record -> Int in
                    guard case .play(let id, _) = record.event else { return -1 }
                    return id
                })
                let killed = HIDGuest.now()
                child.send(SIGKILL)
                #expect(try child.wait(timeout: 30) == .signaled(SIGKILL))
                let records = try pad.waitForRecords("the kernel to erase the killed player's effect") { records in
                    records.contains { $0.time >= killed && $0.event == .erase(id: effectID) }
                }
                let after = records.filter { $0.time >= killed }.map(\.event)
                #expect(after.prefix(2) == [.play(id: effectID, count: 0), .erase(id: effectID)], "the kernel stops, then erases: \(after)")
                #expect(pad.effects.isEmpty, "no effect left: \(pad.effects)")
                #expect(pad.isPlaying(id: effectID, at: HIDGuest.now()) == false)
            }
        }

        @Test("unplug mid-pattern: the device is lost, the engine reports it and the other device plays on; the same id comes back on replug")
        func unplugAndReplug() async throws {
            try await HIDGuest.onThread {
                let phys = "evdev-replug-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
                let spec = UInputDevice.Spec(
                    name: "swift-haptics uinput replug", phys: phys, ffBits: [EvdevGuest.rumble, EvdevGuest.gain],
                    keys: UInputDevice.Spec.gamepadKeys, axes: UInputDevice.Spec.gamepadAxes)
                let (lostPad, lostNode) = try EvdevGuest.plug(spec)
                var lostPadDestroyed = false
                defer { if !lostPadDestroyed { try? lostPad.destroy() } }
                let (otherPad, _) = try EvdevGuest.plug(.vibrator(name: "swift-haptics uinput stays", ffBits: [EvdevGuest.rumble]))
                defer { try? otherPad.destroy() }
                let system = EvdevGuest.system()
                let events = Mutex<[BackendEvent]>([])
                system.onDeviceEvent { event in events.withLock { $0.append(event) } }
                let lostID = EvdevGuest.expectedID(lostPad), otherID = EvdevGuest.expectedID(otherPad)
                _ = try EvdevGuest.description(system, id: lostID)
                _ = try EvdevGuest.description(system, id: otherID)
                #expect(!EvdevGuest.openNodes(of: getpid()).contains(lostNode), "listing opened the node")

                let start = HIDGuest.now()
                var unplugged: UInt64 = 0
                var lostKeptOpen: HapticDevice?
                do {
                    let lostDevice = try system.openDevice(lostID), otherDevice = try system.openDevice(otherID)
                    let engine = try HapticEngine(devices: [lostDevice, otherDevice], profileStore: nil, policy: HapticPolicy())
                    let stopped = Mutex<[HapticEngine.StoppedReason]>([])
                    engine.stoppedHandler = { reason in stopped.withLock { $0.append(reason) } }
                    let player = try engine.makeAdvancedPlayer(with: try GuestKernelTests.HIDBackendHotplug.steps())
                    let finished = Mutex<(done: Bool, error: String?)>((false, nil))
                    player.completionHandler = { error in finished.withLock { $0 = (true, error.map { "\($0)" }) } }
                    try player.start(atTime: 0)
                    unplugged = try { () throws in
                        // Two of the five steps on the device to be unplugged.
                        _ = try lostPad.waitForRecords("two updates") { records in
                            records.filter { record in
                                guard record.time >= start, case .upload(_, .some, 0) = record.event else { return false }
                                return true
                            }.count >= 2
                        }
                        let at = HIDGuest.now()
                        try lostPad.destroy()
                        return at
                    }()
                    lostPadDestroyed = true
                    try HIDGuest.block(for: "the engine to report \(lostID) lost", timeout: 5) {
                        stopped.withLock { $0.contains(.deviceLost(deviceID: lostID)) }
                    }
                    try HIDGuest.block(for: "the pattern to finish on the other device", timeout: 5) { finished.withLock { $0.done } }
                    #expect(finished.withLock { $0.error } == nil)
                    #expect(lostDevice.isLost && !otherDevice.isLost)
                    #expect(stopped.withLock { $0 } == [.deviceLost(deviceID: lostID)])
                    engine.stop()
                    otherDevice.close()
                    lostKeptOpen = lostDevice
                }
                let otherAfter = otherPad.records.filter { record in
                    guard record.time > unplugged + 50_000_000, case .upload(_, .some, 0) = record.event else { return false }
                    return true
                }
                #expect(otherAfter.count >= 2, "the other device got \(otherAfter.count) updates after the unplug")
                try HIDGuest.block(for: "device-removed for \(lostID)", timeout: 5) { events.withLock { $0.contains(.deviceRemoved(id: lostID)) } }

                // Plug it in again: a new input device with the same phys, so the same id.
                let (replugged, _) = try EvdevGuest.plug(spec)
                defer { try? replugged.destroy() }
                try HIDGuest.block(for: "device-added for \(lostID)", timeout: 10) { events.withLock { $0.contains(.deviceAdded(id: lostID)) } }
                let again = HIDGuest.now()
                let device = try system.openDevice(lostID)
                defer { device.close() }
                #expect(device !== lostKeptOpen && !device.isLost)
                let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
                let player = try engine.makeAdvancedPlayer(with: try .transient(at: 0, intensity: 1, sharpness: 0.3))
                let finished = Mutex(false)
                player.completionHandler = { _ in finished.withLock { $0 = true } }
                try player.start(atTime: 0)
                try HIDGuest.block(for: "the replugged device to play", timeout: 5) { finished.withLock { $0 } }
                engine.stop()
                // The driver's thread reads the play a little after the engine wrote it.
                try replugged.waitForRecords("the replugged device to play", timeout: 5) { EvdevGuest.firstPlay(in: $0, since: again) != nil }
            }
        }

        @Test("without access to the node: listed unavailable with the fix, and playing fails with EACCES naming the node and the udev rule")
        func permissionDenied() async throws {
            try await HIDGuest.onThread {
                let (device, node) = try EvdevGuest.plug(.vibrator(name: "swift-haptics uinput private", ffBits: [EvdevGuest.rumble]))
                defer { try? device.destroy() }
                #expect(chown(node, 0, 0) == 0 && chmod(node, 0o600) == 0)
                let id = EvdevGuest.expectedID(device)
                _ = try EvdevGuest.description(EvdevGuest.system(), id: id)
                let list = try UnprivilegedProcess.run(EvdevGuest.hapticCal, ["list"])
                #expect(list.output.contains("unavailable: \(id): permission denied opening \(node)"), "haptic-cal list as nobody:\n\(list.output)")
                let play = try UnprivilegedProcess.run(EvdevGuest.hapticCal, ["play", id, "--duration", "0.05"])
                #expect(play.status != 0)
                #expect(play.output.contains(node) && play.output.contains("permission denied"), "\(play.output)")
                #expect(play.output.contains("Hardware/udev/70-haptics-vibrators.rules") && play.output.contains("/etc/udev/rules.d/70-haptics-vibrators.rules"), "\(play.output)")
                #expect(device.records.isEmpty, "nothing reached the device: \(device.records)")
            }
        }
    }
}
