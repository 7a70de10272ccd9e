import Foundation
import Haptics
import Synchronization
import Testing
import VMRig

extension GuestKernelTests.Evdev {
    /// Guest side: pads driven by the real kernel drivers (hid-playstation, hid-sony, hid-nintendo on
    /// uhid devices with the controllers' own report descriptors), played through their event nodes:
    /// the output reports the drivers write reach the uhid side with the motor levels asked for; a
    /// killed or stalled player leaves the motors off; a pad both backends reach is listed once.
    @Suite struct EvdevKernelDrivers {
        /// The motor levels a driver's output report carries, or nil for a report that sets none.
        /// - DualSense (hid-playstation): report 0x02; a rumble update sets HAPTICS_SELECT (0x02) in
        ///   valid_flag0 (byte 1); byte 3 is the weak (right) motor, byte 4 the strong (left), magnitude / 256.
        /// - DualShock 4 over USB (hid-sony): report 0x05, 32 bytes, every one carrying the motors:
        ///   byte 4 the weak (right), byte 5 the strong (left), magnitude / 256.
        /// - Switch Pro (hid-nintendo): reports 0x10 (rumble only) and 0x01 (sub-commands) carry the
        ///   rumble data in bytes 2–9, left (strong) first; the amplitude's table index is in the low
        ///   byte of each half's last pair (bytes 5 and 9): 0x40 is off, 0x72 full.
        static func levels(_ controller: VirtualController, _ report: UHIDOutputReport) -> (strong: Int, weak: Int)? {
            let data = report.data
            switch controller {
            case .dualSenseUSB:
                guard data.count >= 48, data[0] == 0x02, data[1] & 0x02 != 0 else { return nil }
                return (Int(data[4]), Int(data[3]))
            case .dualShock4USB, .dualShock4v1USB:
                guard data.count == 32, data[0] == 0x05 else { return nil }
                return (Int(data[5]), Int(data[4]))
            case .switchProUSB:
                guard data.count >= 10, data[0] == 0x10 || data[0] == 0x01 else { return nil }
                return (Int(data[5]), Int(data[9]))
            default:
                return nil
            }
        }

        /// The level a report carries when the motors are off.
        static func offLevel(_ controller: VirtualController) -> Int { controller == .switchProUSB ? 0x40 : 0 }

        /// Plugs `controller` (real driver bound) and returns it with the evdev id and physical id its
        /// event node must get, read from sysfs.
        static func plug(_ controller: VirtualController) throws -> (pad: UHIDDevice, id: String, node: String, physical: String) {
            try EvdevGuest.loadModules()
            let pad = try EvdevGuest.plugPad(controller)
            let directory = try #require(pad.sysfsPath)
            let (node, input) = try EvdevGuest.eventNode(belowHID: directory)
            let uniq = (try? SysFS.value(input + "/uniq")) ?? "", phys = (try? SysFS.value(input + "/phys")) ?? ""
            let driver = try #require(pad.driverName)
            let id = String(format: "evdev:%@:%04x:%04x:usb:", driver, controller.vendorID, controller.productID) + (uniq.isEmpty ? phys : uniq)
            let physical = try #require(realpath(directory, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            })
            return (pad, id, node, physical)
        }

        @Test(
            "played through the event node, the driver's output reports carry the motor levels asked for; both backends list the pad under one physical id",
            .enabled(if: !VMRig.ignoresSpecialHIDDrivers, "needs the real HID drivers"),
            arguments: [VirtualController.dualSenseUSB, .dualShock4USB, .switchProUSB])
        func motorLevels(_ controller: VirtualController) async throws {
            try await HIDGuest.onThread {
                let (pad, id, node, physical) = try Self.plug(controller)
                defer { try? pad.destroy() }
                let system = EvdevGuest.system()
                let listed = try EvdevGuest.description(system, id: id)
                #expect(listed.physicalID == physical)
                #expect(listed.actuator == .dualRumble && listed.channels.map(\.name) == ["strong", "weak"])
                let hidID = try HIDGuest.expectedID(pad, controller)
                let hid = try EvdevGuest.merged(system, id: hidID)
                #expect(hid.physicalID == physical, "the hid backend states the same physical device")
                #expect(hid.alternatives == [id], "served by hid, reachable through evdev: \(hid.alternatives)")
                #expect(!system.devices().contains { $0.id == id }, "listed once")
                let steps: [(strong: Double, weak: Double)] = [(1, 0.25), (0.5, 0), (0, 1), (0, 0)]
                let start = HIDGuest.now()
                let seen = try { () throws -> [(strong: Int, weak: Int)] in
                    #expect(try system.resolve(id).backend == "evdev", "an exact id names the hidden listing")
                    let device = try EvdevGuest.backend(system).open(deviceID: id)
                    defer { device.close() }
                    try device.wake()
                    var seen: [(strong: Int, weak: Int)] = []
                    for step in steps {
                        let before = HIDGuest.now()
                        try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: step.strong), ChannelDrive(amplitude: step.weak)]))
                        let reports = try pad.waitForOutputReports(count: 1, timeout: .seconds(5)) { report in
                            report.timestamp >= before && Self.levels(controller, report).map { Self.matches($0, step, controller) } == true
                        }
                        seen.append(Self.levels(controller, reports.last!)!)
                        HIDGuest.pause(0.1)  // hid-nintendo sends rumble at most every 50 ms
                    }
                    try device.sleep()
                    return seen
                }()
                #expect(zip(seen, steps).allSatisfy { Self.matches($0, $1, controller) }, "\(seen)")
                if controller == .switchProUSB {
                    // Through the driver's amplitude table: a quarter below a half.
                    #expect(seen[0].weak < seen[1].strong, "\(seen)")
                }
                // The node is closed again after sleep (effects belong to the descriptor).
                #expect(!EvdevGuest.openNodes(of: getpid()).contains(node))
                let driven = pad.outputReports.filter { $0.timestamp >= start }.compactMap { Self.levels(controller, $0) }
                print("evdev: \(controller) [\(pad.driverName ?? "?")] through \(node): levels \(seen), \(driven.count) driver reports")
            }
        }

        /// Whether a report's levels are what the driver must write for amplitudes `step`: magnitude /
        /// 256 for the Sony drivers; for hid-nintendo its table's ends for 0 and 1 (0x40, 0x72) and a
        /// level strictly between them otherwise.
        static func matches(_ levels: (strong: Int, weak: Int), _ step: (strong: Double, weak: Double), _ controller: VirtualController) -> Bool {
            func level(_ amplitude: Double, _ seen: Int) -> Bool {
                guard controller == .switchProUSB else { return seen == Int(EvdevGuest.magnitude16(amplitude)) / 256 }
                return amplitude == 0 ? seen == 0x40 : amplitude == 1 ? seen == 0x72 : seen > 0x40 && seen < 0x72
            }
            return level(step.strong, levels.strong) && level(step.weak, levels.weak)
        }

        /// Starts `haptic-cal play ID --duration 10` and waits until `driving` sees the drive.
        static func startLongPlay(id: String, label: String, _ driving: () throws -> Bool) throws -> ChildProcess {
            let child = try ChildProcess(
                [EvdevGuest.hapticCal, "play", id, "--duration", "10", "--intensity", "1", "--sharpness", "0"],
                outputPath: "/tmp/evdev-\(label)-\(getpid()).log")
            let started = try ChildProcess.waitUntil(timeout: 60, driving)
            try #require(started, "haptic-cal never drove \(id): \(child.output)")
            return child
        }

        @Test(
            "SIGKILL of the playing process: the kernel erases its effect and the driver sends motors off",
            .enabled(if: !VMRig.ignoresSpecialHIDDrivers, "needs the real HID drivers"))
        func killedPlayerStopsTheMotors() async throws {
            try await HIDGuest.onThread {
                let controller = VirtualController.dualSenseUSB
                let (pad, id, _, _) = try Self.plug(controller)
                defer { try? pad.destroy() }
                let begin = HIDGuest.now()
                let (driven, off) = try { () throws -> (UHIDOutputReport, UHIDOutputReport) in
                    let child = try Self.startLongPlay(id: id, label: "sigkill") {
                        pad.outputReports.contains { $0.timestamp >= begin && (Self.levels(controller, $0)?.strong ?? 0) > 0 }
                    }
                    let killed = HIDGuest.now()
                    child.send(SIGKILL)
                    #expect(try child.wait(timeout: 30) == .signaled(SIGKILL))
                    let off = try pad.waitForOutputReports(count: 1, timeout: .seconds(5)) { report in
                        report.timestamp >= killed && Self.levels(controller, report).map { $0 == (0, 0) } == true
                    }
                    let driven = pad.outputReports.last { $0.timestamp < killed && (Self.levels(controller, $0)?.strong ?? 0) > 0 }!
                    return (driven, off[0])
                }()
                let after = HIDGuest.seconds(off.timestamp, since: driven.timestamp)
                #expect(after < 2, "motors off \(after) s after the last driven report")
                print("evdev: SIGKILL: motors off \(String(format: "%.1f", after * 1000)) ms after the last driven report")
            }
        }

        @Test(
            "a stalled player (SIGSTOP) stops refreshing: the kernel ends the effect after replay.length; SIGCONT drives it again",
            .enabled(if: !VMRig.ignoresSpecialHIDDrivers, "needs the real HID drivers"))
        func stalledPlayerStops() async throws {
            try await HIDGuest.onThread {
                let controller = VirtualController.dualShock4USB
                let (pad, id, _, _) = try Self.plug(controller)
                defer { try? pad.destroy() }
                let begin = HIDGuest.now()
                let (stoppedAt, lastDriven, off, resumed) = try { () throws -> (UInt64, UInt64, UInt64, Bool) in
                    let child = try Self.startLongPlay(id: id, label: "sigstop") {
                        pad.outputReports.contains { $0.timestamp >= begin && (Self.levels(controller, $0)?.strong ?? 0) > 0 }
                    }
                    defer {
                        child.send(SIGKILL)
                        _ = try? child.wait(timeout: 30)
                    }
                    HIDGuest.pause(0.5)  // a few refreshes
                    let stoppedAt = HIDGuest.now()
                    child.send(SIGSTOP)
                    let offReports = try pad.waitForOutputReports(count: 1, timeout: .seconds(5)) { report in
                        report.timestamp >= stoppedAt && Self.levels(controller, report).map { $0 == (0, 0) } == true
                    }
                    let lastDriven = pad.outputReports.last { $0.timestamp < offReports[0].timestamp && (Self.levels(controller, $0)?.strong ?? 0) > 0 }!.timestamp
                    let continued = HIDGuest.now()
                    child.send(SIGCONT)
                    let resumed = (try? pad.waitForOutputReports(count: 1, timeout: .seconds(5)) { report in
                        report.timestamp >= continued && (Self.levels(controller, report)?.strong ?? 0) > 0
                    }) != nil
                    return (stoppedAt, lastDriven, offReports[0].timestamp, resumed)
                }()
                let afterRefresh = HIDGuest.seconds(off, since: lastDriven), afterStop = HIDGuest.seconds(off, since: stoppedAt)
                // replay.length is 500 ms from the last play (or refresh); ff-memless's timer runs on jiffies.
                #expect(afterRefresh >= 0.45 && afterRefresh < 1.0, "motors off \(afterRefresh) s after the last refresh")
                #expect(afterStop < 1.0, "motors off \(afterStop) s after SIGSTOP")
                #expect(resumed, "after SIGCONT the refresh drives the motors again")
                print("evdev: SIGSTOP: motors off \(String(format: "%.0f", afterRefresh * 1000)) ms after the last refresh, \(String(format: "%.0f", afterStop * 1000)) ms after the stop")
            }
        }

        @Test(
            "haptic-cal list shows a pad both backends reach once, served by hid; without access to hidraw, served by evdev",
            .enabled(if: !VMRig.ignoresSpecialHIDDrivers, "needs the real HID drivers"))
        func listedOnce() async throws {
            try await HIDGuest.onThread {
                let controller = VirtualController.dualSenseUSB
                let (pad, id, node, physical) = try Self.plug(controller)
                defer { try? pad.destroy() }
                let hidID = try HIDGuest.expectedID(pad, controller)
                let hidraw = try pad.hidrawPath()
                // And a pad only evdev reaches: a user-space driver's, through uinput.
                let (virtualPad, _) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput pad"))
                defer { try? virtualPad.destroy() }
                let virtualID = EvdevGuest.expectedID(virtualPad)
                _ = try EvdevGuest.merged(EvdevGuest.system(), id: hidID)
                _ = try EvdevGuest.merged(EvdevGuest.system(), id: virtualID)

                let list = try EvdevGuest.run([EvdevGuest.hapticCal, "list"])
                let lines = list.output.split(separator: "\n").map(String.init)
                #expect(lines.filter { $0.hasPrefix("  \(hidID) ") }.count == 1, "the pad's line:\n\(list.output)")
                #expect(lines.filter { $0.hasPrefix("  \(virtualID) ") }.count == 1, "the uinput pad's line:\n\(list.output)")
                #expect(lines.contains { $0.contains("served by hid; also reachable as \(id)") }, "\(list.output)")
                #expect(!lines.contains { $0.hasPrefix("  \(id)") }, "the evdev listing has no line of its own:\n\(list.output)")
                let hidInfo = try EvdevGuest.run([EvdevGuest.hapticCal, "info", hidID])
                #expect(hidInfo.output.contains("also reachable:   \(id) (served by hid)"), "\(hidInfo.output)")
                #expect(hidInfo.output.contains("physical device:  \(physical)"), "\(hidInfo.output)")

                // A user who may open the event node but not the hidraw node gets the pad through evdev.
                #expect(chmod(hidraw, 0o600) == 0 && chmod(node, 0o666) == 0)
                defer { _ = chmod(node, 0o600) }
                let asUser = try UnprivilegedProcess.run(EvdevGuest.hapticCal, ["list"])
                let userLines = asUser.output.split(separator: "\n").map(String.init)
                #expect(userLines.contains { $0.hasPrefix("  \(id)") }, "served by evdev for nobody:\n\(asUser.output)")
                #expect(userLines.contains { $0.contains("served by evdev; also reachable as \(hidID)") }, "\(asUser.output)")
                let play = try UnprivilegedProcess.run(EvdevGuest.hapticCal, ["play", id, "--duration", "0.05"])
                #expect(play.status == 0, "nobody plays the pad through evdev: \(play.output)")
                print("evdev: haptic-cal list (root):\n\(list.output)\nhaptic-cal list (nobody, event node open to them, hidraw not):\n\(userLines.filter { $0.contains(hidID) || $0.contains(id) }.joined(separator: "\n"))")
            }
        }

        @Test(
            "under hid-generic a pad has no force feedback: the evdev backend does not list it",
            .enabled(if: VMRig.ignoresSpecialHIDDrivers, "hid-generic binds pads only in the ignore_special_drivers boot"))
        func genericDriverHasNoForceFeedback() async throws {
            try await HIDGuest.onThread {
                try EvdevGuest.loadModules()
                let pad = try EvdevGuest.plugPad(.dualSenseUSB)
                defer { try? pad.destroy() }
                let physical = try #require(pad.sysfsPath.flatMap { directory in realpath(directory, nil).map { pointer in
                    defer { free(pointer) }
                    return String(cString: pointer)
                } })
                let listed = try EvdevGuest.backend(EvdevGuest.system()).devices()
                #expect(!listed.contains { $0.physicalID == physical }, "listed: \(listed.map(\.id))")
            }
        }
    }
}
