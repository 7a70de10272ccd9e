import Foundation
import HIDReports
import Haptics
import Synchronization
import Testing
import VMRig

extension GuestKernelTests {
    /// Guest side: every controller family on every transport, from its real report descriptor,
    /// discovered by the HID backend (loaded through dlopen) and driven; the exact reports arrive at
    /// the uhid side in order, with the spacing kept. Runs in both boots (real drivers bound, and
    /// hid-generic everywhere). One virtual pad per controller serves every step, to keep the boot
    /// short:
    ///
    /// 1. the description (id, channels, resolution, spacing, measured wake latency) and the udev
    ///    rule's match against the kernel's name for the device;
    /// 2. a hand-pinned vector, driving the device directly;
    /// 3. a pattern through the engine, checked report by report against the frames it submitted;
    /// 4. for one pad per spacing rule (10, 30, 50 ms), a burst of submits 1 ms apart: coalescing to
    ///    the newest state with the spacing kept, and submit never waiting for the writer;
    /// 5. for the families that need it, a held drive refreshed (DualShock 4 every 2 s, Switch Pro
    ///    every 50 ms);
    /// 6. on a DualSense, unreadable firmware info: the compatible vibration mode.
    @Suite struct HIDBackendPlayback {
        /// A tap, then a continuous event whose sharpness moves the drive to the other motor (the
        /// other frequency on a Switch Pro): about 0.25 s, several distinct frames.
        static func pattern() throws -> HapticPattern {
            try HapticPattern(events: [
                HapticEvent(
                    eventType: .hapticTransient,
                    parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0.2)],
                    relativeTime: 0),
                HapticEvent(
                    eventType: .hapticContinuous,
                    parameters: [.init(parameterID: .hapticIntensity, value: 0.6), .init(parameterID: .hapticSharpness, value: 0.9)],
                    relativeTime: 0.09, duration: 0.16),
            ])
        }

        @Test(
            "per family and transport: described, pinned bytes, a pattern through the engine, spacing, coalescing, refresh",
            arguments: VirtualController.allCases)
        func family(_ controller: VirtualController) async throws {
            let facts = PadFacts(controller)
            let vector = PinnedVector.vector(for: controller)
            let pad = try await HIDGuest.plug(controller)
            defer { try? pad.destroy() }
            if let firmware = vector.firmware { pad.setFeatureReport(0x20, firmware) }
            let mode: DualSense.VibrationMode = vector.firmware == nil ? .compatibleV2 : .compatible
            let system = HIDGuest.system()
            let id = try HIDGuest.expectedID(pad, controller)
            let description = try await HIDGuest.description(system, id: id)
            let backend = try HIDGuest.backend(system)

            // 1. The description, and the rule that grants access to this device.
            #expect(description.backend == "hid")
            #expect(description.actuator == .dualRumble)
            #expect(description.name.hasSuffix(facts.transport == .usb ? "(USB)" : "(Bluetooth)"))
            #expect(description.channels.map(\.name) == facts.channels.map(\.name))
            #expect(description.channels.map(\.amplitudeSteps) == facts.channels.map(\.steps))
            #expect(abs(description.minimumUpdateInterval - facts.interval) < 1e-9)
            #expect(description.wakeLatency > 0 && description.wakeLatency < 2, "wake latency \(description.wakeLatency) s")
            if facts.isSwitch {
                #expect(description.channels.allSatisfy { $0.frequencyRange == 41...1253 && $0.actuator == .lra })
                #expect(description.channels.map(\.resonantFrequency) == [160, 320])
                #expect(description.wakeLatency >= facts.interval, "a Switch Pro's wake includes the spacing after its set-up")
            } else {
                #expect(description.channels.allSatisfy { $0.frequencyRange == nil })
            }
            if facts.isXbox { #expect(description.channels.suffix(2).allSatisfy { $0.actuator == .trigger }) }
            try Self.checkRuleMatches(pad, controller)

            // 2. The pinned vector.
            let pinned = try await HIDGuest.onThread { try vector.drive(backend, id: id, pad: pad, facts: facts) }
            vector.check(pinned, facts: facts)

            // 3. A pattern through the engine.
            let start = HIDGuest.now()
            let tracer = TracingActuator(try backend.open(deviceID: id))
            let device = HapticDevice(actuator: tracer)
            let engine = try HapticEngine(devices: [device], policy: HapticPolicy())
            let player = try engine.makeAdvancedPlayer(with: try Self.pattern())
            let finished = Mutex<Bool>(false)
            player.completionHandler = { _ in finished.withLock { $0 = true } }
            try player.start(atTime: 0)
            try await HIDGuest.wait(for: "the pattern to finish on \(id)", timeout: 10) { finished.withLock { $0 } }
            engine.stop()
            device.close()
            let frames = tracer.frames
            #expect(frames.count >= 3, "the engine submitted \(frames.count) frames")
            #expect(frames.last?.isSilent == true)
            let states = frames.map(facts.state)
            if facts.isSwitch {
                // Sharpness became frequency: the frames asked for more than one tone.
                #expect(Set(states.filter { !$0.isOff }.map(\.strongFrequency)).count >= 2, "frames: \(frames)")
            }
            try await HIDGuest.wait(for: "the off report on \(id)", timeout: 5) {
                ReportCheck.ours(pad, facts, since: start).last.map { ReportCheck.isOff($0, facts, dualSenseMode: mode) } ?? false
            }
            let reports = ReportCheck.ours(pad, facts, since: start)
            // Every open starts its own counter at 0 (the set-up reports take the first numbers).
            let seen = ReportCheck.stream(reports, facts: facts, states: states, setup: facts.setupReports(), dualSenseMode: mode)
            ReportCheck.spacing(reports, facts: facts, since: start)
            if facts.isDualSense {
                // The firmware info was read on wake (after the driver's own read at bind time, if any).
                #expect(pad.reportRequests.contains { $0.kind == .getReport && $0.reportNumber == 0x20 && $0.timestamp >= start })
            }
            let gaps = ReportCheck.gaps(reports, facts: facts)
            print(
                "hid-backend: \(controller) [\(pad.driverName ?? "?")]: engine \(frames.count) frames -> \(reports.count) reports, \(seen) states seen, smallest gap \(String(format: "%.2f", (gaps.min() ?? 0) * 1000)) ms"
            )

            // 4. A burst, for one pad per spacing rule.
            if [.dualShock4USB, .switchProBluetooth, .xboxSeriesBluetooth].contains(controller) {
                try await Self.burst(backend, id: id, pad: pad, facts: facts)
            }
            // 5. Refresh of a held drive.
            if controller == .dualShock4Bluetooth || controller == .switchProUSB {
                try await Self.refresh(backend, id: id, pad: pad, facts: facts)
            }
            // 6. A DualSense whose firmware info cannot be parsed falls back to the compatible mode.
            if controller == .dualSenseUSB {
                try await Self.unreadableFirmware(backend, id: id, pad: pad, facts: facts)
            }
        }

        /// The udev rule's `KERNELS` pattern for this controller matches the kernel's name for the HID
        /// device behind the node (`0005:054C:05C4.0004`), which is what udev compares it with.
        static func checkRuleMatches(_ pad: UHIDDevice, _ controller: VirtualController) throws {
            let name = try #require(pad.sysfsPath.map { ($0 as NSString).lastPathComponent })
            let patterns = try HIDBackendHostTests.rulePatterns()
            let own = patterns.filter { fnmatch($0, name, 0) == 0 }
            #expect(own.count == 1, "rule patterns matching \(name): \(own)")
        }

        /// 120 submits 1 ms apart on a thread of their own: far fewer reports, each one a submitted
        /// state in order, spaced; once the burst ends, the newest state follows within one interval
        /// (nothing queued behind it); then stop. No submit waits out the spacing.
        static func burst(_ backend: Backend, id: String, pad: UHIDDevice, facts: PadFacts) async throws {
            let start = HIDGuest.now()
            let (states, durations, span, settle) = try await HIDGuest.onThread { () -> ([RumbleState], [UInt64], Double, Double) in
                let device = try backend.open(deviceID: id)
                try device.wake()
                var states: [RumbleState] = []
                var durations: [UInt64] = []
                let begin = HIDGuest.now()
                for step in 1...120 {
                    let level = Double(step) / 120
                    let frame = DriveFrame(
                        time: .monotonicNow(), channels: Array(repeating: ChannelDrive(amplitude: level), count: facts.channels.count))
                    states.append(facts.state(frame))
                    let before = HIDGuest.now()
                    try device.submit(frame)
                    durations.append(HIDGuest.now() &- before)
                    HIDGuest.pause(0.001)
                }
                let end = HIDGuest.now()
                let span = HIDGuest.seconds(end, since: begin)
                let newest = states.last!
                try HIDGuest.block(for: "\(facts.controller): the newest state after the burst", timeout: 2) {
                    ReportCheck.ours(pad, facts, since: start).last.map { facts.encode(newest, sequence: ReportCheck.sequence($0.data, facts)) == $0.data } ?? false
                }
                let settle = HIDGuest.seconds(ReportCheck.ours(pad, facts, since: start).last!.timestamp, since: end)
                try device.stop()
                try device.sleep()
                device.close()
                try HIDGuest.block(for: "\(facts.controller): the off report after the burst", timeout: 5) {
                    ReportCheck.ours(pad, facts, since: start).last.map { ReportCheck.isOff($0, facts) } ?? false
                }
                return (states + [.off], durations, span, settle)
            }
            let reports = ReportCheck.ours(pad, facts, since: start)
            let setup = facts.setupReports()
            ReportCheck.stream(reports, facts: facts, states: states, setup: setup)
            ReportCheck.spacing(reports, facts: facts, since: start)
            let rumble = Array(reports.dropFirst(setup.count))
            #expect(rumble.count >= 2 && rumble.count <= Int(span / facts.interval) + 3, "\(rumble.count) reports for 120 submits in \(span) s")
            // A writer that queued instead of coalescing would still be working through the backlog.
            #expect(settle <= facts.interval + 0.02, "the newest state arrived \(settle * 1000) ms after the burst")
            // A submit hands the state to the writer and returns: it never waits out the spacing. One
            // that did would take about an interval each (10–50 ms), 120 intervals in all; how long
            // a hand-over takes is the benchmark's business (under emulation, 0.2–4 ms).
            let sorted = durations.sorted()
            let median = Double(sorted[sorted.count / 2]) / 1e6
            #expect(median < facts.interval * 1000 / 2, "median submit \(median) ms, spacing \(facts.interval * 1000) ms")
            let inSubmit = Double(durations.reduce(0, +)) / 1e9
            #expect(inSubmit < 120 * facts.interval / 2, "120 submits took \(inSubmit) s between them")
            print(
                "hid-backend: \(facts.controller) burst: 120 submits in \(String(format: "%.0f", span * 1000)) ms -> \(rumble.count) reports, newest state \(String(format: "%.1f", settle * 1000)) ms after the last submit; submit median \(String(format: "%.3f", median)) ms, max \(String(format: "%.3f", Double(sorted.last!) / 1e6)) ms"
            )
        }

        /// Answers feature report 0x20 with 4 bytes (a firmware info is 64): the wake must still
        /// succeed, in the compatible mode every firmware understands (valid_flag0 0x03, no
        /// valid_flag2), written out by hand.
        static func unreadableFirmware(_ backend: Backend, id: String, pad: UHIDDevice, facts: PadFacts) async throws {
            pad.setFeatureReport(0x20, [0x20, 0x01, 0x02, 0x03])
            let start = HIDGuest.now()
            try await HIDGuest.onThread {
                let device = try backend.open(deviceID: id)
                try device.wake()
                try device.submit(PinnedVector.frame([(PinnedVector.byte128, 0), (PinnedVector.byte64, 0)]))
                _ = try pad.waitForOutputReports(count: 1, timeout: .seconds(5)) { $0.timestamp >= start && facts.isOurs($0) }
                try device.stop()
                try device.sleep()
                device.close()
                try HIDGuest.block(for: "the off report in the compatible mode", timeout: 5) {
                    ReportCheck.ours(pad, facts, since: start).count >= 2
                }
            }
            let got = ReportCheck.ours(pad, facts, since: start).map(\.data)
            #expect(got == [HIDBytes.padded("02 03 00 40 80", to: 48), HIDBytes.padded("02 03", to: 48)], "got:\n\(got.map(HIDGuest.hex).joined(separator: "\n"))")
            #expect(pad.reportRequests.contains { $0.kind == .getReport && $0.reportNumber == 0x20 && $0.timestamp >= start })
        }

        /// Holds one drive (DualShock 4: 2.3 s; Switch Pro: 0.3 s), then stops: the drive is written
        /// again every refresh interval (2 s, 50 ms), unchanged but for the Switch's counter.
        static func refresh(_ backend: Backend, id: String, pad: UHIDDevice, facts: PadFacts) async throws {
            let refresh = facts.isSwitch ? 0.050 : 2.0
            let hold = facts.isSwitch ? 0.3 : 2.3
            let start = HIDGuest.now()
            let frame = DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.5), ChannelDrive(amplitude: 0.25)])
            try await HIDGuest.onThread {
                let device = try backend.open(deviceID: id)
                try device.wake()
                try device.submit(frame)
                HIDGuest.pause(hold)
                try device.stop()
                try device.sleep()
                device.close()
                try HIDGuest.block(for: "\(facts.controller): the off report after the hold", timeout: 5) {
                    ReportCheck.ours(pad, facts, since: start).last.map { ReportCheck.isOff($0, facts) } ?? false
                }
            }
            let reports = ReportCheck.ours(pad, facts, since: start)
            let setup = facts.setupReports()
            ReportCheck.stream(reports, facts: facts, states: [facts.state(frame), .off], setup: setup)
            let held = Array(reports.dropFirst(setup.count).dropLast())
            let expected = 1 + Int(hold / refresh)
            #expect(abs(held.count - expected) <= 1, "\(held.count) writes of the held drive in \(hold) s, expected about \(expected)")
            let gaps = zip(held, held.dropFirst()).map { HIDGuest.seconds($1.timestamp, since: $0.timestamp) }
            // Never later than the interval allows (the pad must hear from us in time), and not much
            // earlier either (a late read at the uhid side shortens one gap by that much).
            #expect(gaps.allSatisfy { $0 >= refresh * 0.8 && $0 <= refresh * 1.5 + 0.02 }, "refresh gaps \(gaps)")
        }
    }
}
