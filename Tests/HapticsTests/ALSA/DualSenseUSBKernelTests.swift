import Foundation
import HIDReports
import Haptics
import Synchronization
import Testing
import VMRig

#if canImport(Glibc)
import Glibc
#endif

extension GuestExclusiveKernelTests {
    /// Guest side, alone in the guest (timing): the DualSense's voice coils over a real USB bus. A
    /// virtual pad (``USBGadget``: UAC2 + HID on `dummy_hcd_iso`) is enumerated by the kernel's own
    /// `snd-usb-audio` and `usbhid`; `libhaptics-alsa.so` finds it with no device file, by its USB
    /// ids, and what it plays is captured on the gadget's side of the bus by `arecord`; the output
    /// reports that switch the pad's rumble emulation off and on are read at `/dev/hidg0`. Runs in the
    /// boot that ignores the special HID drivers, where `hid-generic` gives the pad a hidraw node
    /// (`hid-playstation` refuses a pad whose feature reports are zeros).
    @Suite(.serialized, .enabled(if: VMRig.ignoresSpecialHIDDrivers, "hid-generic must bind the gadget's HID interface"))
    struct DualSenseUSB {
        static let rate = 48_000.0

        static func gadget() throws -> USBGadget {
            try USBGadget(dualSenseDescriptor: VirtualController.dualSenseUSB.descriptor())
        }

        static func system() -> HapticSystem {
            HapticSystem(
                configuration: .init(
                    searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                    // 40 ms queued: under TCG the emulated bus starves the guest now and then, and a
                    // 15 ms buffer (the default) underran up to 14 times a second.
                    settings: ["alsa.devices": TestSupport.makeTemporaryDirectory("none"), "alsa.dualsense-period-us": "20000", "alsa.dualsense-periods": "4", "recording.devices": "none"],
                    logger: TestSupport.quietLogger, daemon: .never))
        }

        /// `arecord` on the gadget's card, 4 channels, started (and given time to start) before
        /// anything plays. `-N`: the gadget's capture fails with EIO while the host is silent.
        static func capture(_ gadget: USBGadget, into path: String) throws -> ChildProcess {
            let process = try ChildProcess(
                ["/usr/bin/arecord", "-q", "-N", "-D", "hw:CARD=\(gadget.gadgetCardID),DEV=0", "-t", "raw", "-f", "S16_LE", "-c", "4", "-r", "48000", path],
                outputPath: path + ".log")
            usleep(500_000)
            return process
        }

        @Test("the pad on a USB bus is found by its ids; the left coil plays on channel 3, the right on 4, 1–2 stay silent; rumble emulation is off while they play, back after")
        func coilsOnTheirChannels() throws {
            let gadget = try Self.gadget()
            defer { gadget.remove() }
            let system = Self.system()
            let pad = try #require(system.devices().first { $0.backend == "alsa" }, "no alsa device among \(system.devices().map(\.id))")
            let port = String(gadget.usbDevice.split(separator: "/").last ?? "")
            #expect(pad.id == "alsa:054c:0ce6:usb-\(port)", "\(pad.id)")
            #expect(pad.name == "DualSense voice coils (USB)" && pad.isAvailable, "\(pad.name): \(pad.unavailableReason ?? "")")
            #expect(pad.channels.map(\.name) == ["left", "right"])
            // The key that ties the coils to the pad's HID interface: the HID device behind its hidraw
            // node, under the same USB device.
            let hidDevice = try #require(gadget.hidDevice)
            #expect(hidDevice.hasPrefix(gadget.usbDevice + "/"))
            #expect(pad.physicalID == hidDevice, "\(pad.physicalID ?? "nil") is not \(hidDevice)")

            let directory = TestSupport.makeTemporaryDirectory("dsusb")
            // The pad's end of its HID interface: the output reports the host sent it.
            let hidg = open(gadget.hidgPath, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            try #require(hidg >= 0, "open \(gadget.hidgPath): errno \(errno)")
            defer { close(hidg) }
            let recorder = try Self.capture(gadget, into: directory + "/captured.raw")
            let device = try system.openDevice(pad.id)
            try device.beginActivity()
            // Frames for what is to come, all at once: their times, not this thread's sleeps (which
            // overshoot under load), decide when each plays.
            let start = HapticInstant.monotonicNow().nanoseconds + 100_000_000
            let at = { (seconds: Double) in HapticInstant(nanoseconds: start + UInt64(seconds * 1e9)) }
            try device.submit(DriveFrame(time: at(0), channels: [ChannelDrive(amplitude: 0.8, frequency: 150), .off]))
            try device.submit(DriveFrame(time: at(0.4), channels: [.off, ChannelDrive(amplitude: 0.5, frequency: 250)]))
            try device.submit(.silence(channelCount: 2, at: at(0.8)))
            usleep(1_200_000)
            device.endActivity()
            let underruns = (device.actuator as? PluginActuator)?.underruns ?? -1
            device.close()
            usleep(500_000)
            recorder.send(SIGINT)
            _ = try recorder.wait(timeout: 10)
            let captured = try Signal.channels(ofRawS16: directory + "/captured.raw", channels: 4)
            print("DualSense USB gadget: \(captured[0].count) frames captured, \(underruns) underruns")
            #expect(captured[0].allSatisfy { $0 == 0 } && captured[1].allSatisfy { $0 == 0 }, "channels 1–2 (speaker, headphones) carry no coil")
            let left = try #require(Signal.extent(captured[2]), "nothing reached channel 3")
            let right = try #require(Signal.extent(captured[3]), "nothing reached channel 4")
            for (name, samples, span, frequency, level) in [("left", captured[2], left, 150.0, 0.8), ("right", captured[3], right, 250.0, 0.5)] {
                // An underrun (the emulated bus starves the guest now and then) restarts the stream,
                // and what follows is placed later: about 30 ms each under TCG, 50 allowed.
                let seconds = Double(span.count) / Self.rate
                #expect(seconds > 0.35 && seconds < 0.45 + 0.05 * Double(max(underruns, 0)), "\(name) sounded \(seconds) s with \(underruns) underruns")
                let middle = samples[(span.lowerBound + 2_400)..<(span.upperBound - 2_400)]
                let peak = Signal.peak(of: middle, in: Int(frequency) - 30...Int(frequency) + 30, rate: Self.rate)
                #expect(abs(peak - frequency) <= 1, "\(name) peaks at \(peak) Hz")
                let amplitude = Signal.amplitude(of: middle, at: frequency, rate: Self.rate)
                #expect(abs(amplitude - level) < 0.03, "\(name) amplitude \(amplitude) for \(level)")
            }
            // The pad was switched to its coils on wake (every valid flag clear: SDL's "restore audio
            // haptics"), and back to rumble emulation, motors off, when the device slept.
            let reports = Self.received(hidg)
            let coils = [0x02] + [UInt8](repeating: 0, count: 47)
            var rumble = coils
            rumble[1] = 0x03  // HAPTICS_SELECT | COMPATIBLE_VIBRATION
            #expect(reports == [coils, rumble], "output reports \(reports.map { $0.prefix(4).map { String(format: "%02x", $0) }.joined() })")

            // The right coil takes over where the left one stops: one stream, one clock.
            let gap = Double(right.lowerBound - left.upperBound) / Self.rate
            #expect(abs(gap) < 0.02 + 0.05 * Double(max(underruns, 0)), "the right coil started \(gap) s after the left stopped")
        }

        /// The output reports the pad received since the last call, read at its end of the bus.
        static func received(_ hidg: Int32) -> [[UInt8]] {
            var reports: [[UInt8]] = []
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(hidg, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                reports.append(Array(buffer[0..<n]))
            }
            return reports
        }

        @Test("the pad's adaptive triggers while its coils serve it: the reports on the wire, released before the pad idles, and by the stop guard when the process is killed")
        func triggers() throws {
            let gadget = try Self.gadget()
            defer { gadget.remove() }
            let system = Self.system()
            let pad = try #require(system.devices().first { $0.backend == "alsa" }, "no alsa device among \(system.devices().map(\.id))")
            #expect(pad.hasAdaptiveTriggers)
            let hidg = open(gadget.hidgPath, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            try #require(hidg >= 0, "open \(gadget.hidgPath): errno \(errno)")
            defer { close(hidg) }
            func hex(_ reports: [[UInt8]]) -> String { reports.map { $0.prefix(36).map { String(format: "%02x", $0) }.joined() }.joined(separator: "\n") }
            let coils = DualSense.audioHapticsReport(transport: .usb, sequence: 0)
            let stop = DualSense.stopReport(transport: .usb, sequence: 0, mode: .compatible)

            let device = try system.openDevice(pad.id)
            let triggers = try AdaptiveTriggers(device: device)
            let right = AdaptiveTriggerEffect.weapon(startPosition: 0.3, endPosition: 0.7, strength: 1)
            try triggers.set(right: right)
            try triggers.set(left: .vibration(position: 0.5, amplitude: 0.5, frequency: 100))
            usleep(300_000)
            var reports = Self.received(hidg)
            let set = [
                coils, try DualSense.triggerReport(right: right, left: nil, transport: .usb, sequence: 0),
                try DualSense.triggerReport(right: nil, left: .vibration(position: 0.5, amplitude: 0.5, frequency: 100), transport: .usb, sequence: 0),
            ]
            #expect(reports == set, "\(hex(reports))")
            // Released: both free, then the idle pad gets its rumble emulation back.
            triggers.release()
            usleep(300_000)
            reports = Self.received(hidg)
            #expect(reports == [try DualSense.triggerReport(right: .off, left: .off, transport: .usb, sequence: 0), stop], "\(hex(reports))")
            device.close()

            // Killed with an effect held: the stop guard's supervisor writes the release.
            let directory = TestSupport.makeTemporaryDirectory("dsusb-kill")
            let child = try ChildProcess(
                [
                    CrashProbe.path, "kill", "--set", "alsa.devices=\(directory)", "--set", "alsa.dualsense-period-us=20000", "--set", "alsa.dualsense-periods=4",
                    "--set", "recording.devices=none", "--continuous", pad.id, "--trigger", pad.id, "--settle", "0.3",
                ], environment: ["SWIFT_BACKTRACE": "enable=no"], outputPath: directory + "/probe.log")
            _ = try child.wait(timeout: 60)
            let output = child.output
            #expect(output.contains("triggers \(pad.id)") && output.contains("dying"), "\(output)")
            let released = DualSense.releasingTriggers(stop, transport: .usb)
            var all: [[UInt8]] = []
            let seen = ChildProcess.waitUntil(timeout: 5) {
                all += Self.received(hidg)
                return all.last == released
            }
            #expect(seen, "after the kill the pad received:\n\(hex(all))\nthe probe said:\n\(output)")
            #expect(all.contains(try DualSense.triggerReport(right: StopGuardKernel.probeRightTrigger, left: StopGuardKernel.probeLeftTrigger, transport: .usb, sequence: 0)))
        }

        @Test("the pad unplugged while its coils play: the device is marked lost by the stream thread itself, mid-event, and closes at once")
        func unplugged() throws {
            let gadget = try Self.gadget()
            defer { gadget.remove() }
            let system = Self.system()
            let pad = try #require(system.devices().first { $0.backend == "alsa" })
            let device = try system.openDevice(pad.id)
            let lost = Mutex<DeviceError?>(nil)
            _ = device.onLost { error in lost.withLock { $0 = error } }
            let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
            try engine.start()
            // One long event: the engine sends no frame while it plays, so only the stream can tell.
            try engine.makePlayer(with: try .continuous(duration: 20, intensity: 0.8, sharpness: 0.5)).start(atTime: 0)
            usleep(700_000)
            let unplugged = HapticInstant.monotonicNow().seconds
            gadget.remove()
            let noticed = ChildProcess.waitUntil(timeout: 5) { lost.withLock { $0 } != nil }
            let after = HapticInstant.monotonicNow().seconds - unplugged
            let error = lost.withLock { $0 }
            #expect(noticed && error?.isDeviceLost == true, "\(String(describing: error))")
            #expect(device.isLost)
            print("DualSense USB gadget: unplugged mid-event, device lost after \(after) s: \(error.map { "\($0)" } ?? "nil")")
            let closing = HapticInstant.monotonicNow().seconds
            engine.stop()
            device.close()
            let closed = HapticInstant.monotonicNow().seconds - closing
            #expect(closed < 2, "closing took \(closed) s")
        }

        @Test("a pad plugged in while a program runs is announced, and announced gone when unplugged")
        func hotplug() throws {
            let system = Self.system()
            let events = Mutex<[BackendEvent]>([])
            system.onDeviceEvent { event in events.withLock { $0.append(event) } }
            #expect(!system.devices().contains { $0.backend == "alsa" }, "a pad before any was plugged in")
            let gadget = try Self.gadget()
            var removed = false
            defer { if !removed { gadget.remove() } }
            let port = String(gadget.usbDevice.split(separator: "/").last ?? "")
            let id = "alsa:054c:0ce6:usb-\(port)"
            try HIDGuest.block(for: "device-added for \(id)", timeout: 10) { events.withLock { $0.contains(.deviceAdded(id: id)) } }
            gadget.remove()
            removed = true
            try HIDGuest.block(for: "device-removed for \(id)", timeout: 10) { events.withLock { $0.contains(.deviceRemoved(id: id)) } }
            #expect(!system.devices().contains { $0.id == id })
        }

        @Test("haptic-cal list shows the pad once: its coils, found with no device file, with its hid rumble behind them; the rumble while another process holds the card")
        func listed() throws {
            let gadget = try Self.gadget()
            defer { gadget.remove() }
            let directory = TestSupport.makeTemporaryDirectory("dslist")
            func list(_ name: String) throws -> String {
                let lister = try ChildProcess(
                    [TestSupport.buildDirectory + "/haptic-cal", "list"],
                    environment: ["HAPTICS_ALSA_DEVICES": directory, "HAPTICS_DAEMON": "never", "HAPTICS_RECORDING_DEVICES": "none"],
                    outputPath: directory + "/\(name).log")
                let ending = try lister.wait(timeout: 60)
                let output = (try? String(contentsOfFile: directory + "/\(name).log", encoding: .utf8)) ?? ""
                #expect(ending == .exited(0), "haptic-cal list \(ending): \(output)")
                return output
            }
            // The hid backend reaches the same pad through its hidraw node.
            let lines = { (output: String) in output.split(separator: "\n").map(String.init) }
            let free = try list("free")
            let coils = try #require(lines(free).first { $0.contains("alsa:054c:0ce6:usb-") }, "\(free)")
            #expect(coils.contains("DualSense voice coils (USB)"), "\(free)")
            #expect(free.contains("samples 48 kHz, 5.0 ms periods × 3"), "\(free)")
            // The gadget's hid listing (other suites' uhid pads, going away, may be listed too).
            let served = try #require(lines(free).first { $0.contains("served by alsa; also reachable as hid:054c:0ce6:usb") }, "\(free)")
            let rumble = String(served[served.range(of: "also reachable as ")!.upperBound...])
            // Its rumble channels are shown under it, and it is not listed by itself.
            #expect(lines(free).contains { $0.contains(rumble + ": strong (") && $0.contains(" + weak (") }, "\(free)")
            #expect(!lines(free).contains { $0.hasPrefix("  " + rumble + " ") }, "the pad is listed twice: \(free)")

            // A sound server holds the card (aplay stands for it): the rumble serves the pad.
            let holder = try ChildProcess(
                ["/usr/bin/aplay", "-q", "-D", "hw:CARD=\(gadget.cardID),DEV=0", "-t", "raw", "-f", "S16_LE", "-c", "4", "-r", "48000", "/dev/zero"],
                outputPath: directory + "/aplay.log")
            defer {
                holder.send(SIGTERM)
                _ = try? holder.wait(timeout: 10)
            }
            let status = (0..<32).map { "/proc/asound/card\($0)" }.first { (try? SysFS.value($0 + "/id")) == gadget.cardID }.map { $0 + "/pcm0p/sub0/status" }
            try HIDGuest.block(for: "aplay to hold the pad's card", timeout: 10) { (status.flatMap { try? SysFS.value($0) })?.contains("owner_pid") == true }
            let held = try list("held")
            #expect(lines(held).contains { $0.hasPrefix("  " + rumble + " ") }, "\(held)")
            #expect(held.contains("served by hid; also reachable as alsa:054c:0ce6:usb-"), "\(held)")
            // The coils under it, saying why they do not serve the pad now.
            #expect(lines(held).contains { $0.contains("unavailable: its sound card Controller is in use by pid \(holder.pid) (aplay)") }, "\(held)")
        }
    }
}
