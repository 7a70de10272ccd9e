import Foundation
import HIDReports
import Synchronization
import Testing
import VMRig

#if canImport(Glibc)
import Glibc
#endif

/// The longest the actuators may keep running after the process started to die, in milliseconds,
/// on the rig: TCG emulation with one vCPU, the other boot and the host's suites beside it, on a
/// machine that may be shared. The figures measured are in `Docs/StopGuard.md`: up to about 60 ms
/// in the process and 75 ms through the supervisor on a quiet machine, up to 290 ms in the process
/// on a starved one; the bounds leave room for that, and still tell "at once" from "never" (the test
/// also checks who stopped them).
enum StopBound {
    /// Stopped by the process's own handler or atexit hook.
    static let inProcess = 1_000.0
    /// Stopped by the supervisor after SIGKILL: the kernel tears the process down first.
    static let supervisor = 2_000.0
    static func of(_ death: ProbeDeath) -> Double { death.stoppedInProcess ? inProcess : supervisor }
}

extension GuestExclusiveKernelTests {
    /// Guest side, alone in the guest (a Swift client started ten times, the runtime's backtracer):
    /// a client (`haptics-crash-probe`, through the plugins) drives three GPIO actuators
    /// on gpio-sim and pwm-sim and seven virtual controllers through uhid, and dies, once per way
    /// of dying: every actuator reads back stopped, within a bound, and every controller's last
    /// report is motors off.
    ///
    /// The actuators, all driving at the moment of death:
    /// - `c`, a DRV2603-class LRA with an enable line, in a long continuous event (75 % duty);
    /// - `k`, the same with a kick, inside it (100 % duty, above its rated 75 %);
    /// - `e`, a coin ERM on a transistor (no enable line), inside its kick (100 % duty, overdrive 1.0).
    /// The enable lines are pulled up: gpio-sim returns a released line to its pull, so a dead
    /// process's enable reads high, as a real SoC's released output keeps its last level, and only
    /// a stop that drives the line low passes. The line's history is the kernel's trace
    /// (`GPIOValueTrace`); the PWM's, pwm-sim's (`PWMSimHistory`).
    ///
    /// The controllers: DualShock 4 (USB, Bluetooth with CRC), DualSense (USB, Bluetooth with CRC
    /// and sequence tag; its adaptive triggers set too, so its stop must release them), Xbox Series (Bluetooth), Switch Pro (USB, Bluetooth, packet counter), all
    /// opened by the one process and shared by the cases.
    @Suite(.serialized)
    struct StopGuardKernel {
        static let controllers: [VirtualController] = [
            .dualShock4USB, .dualShock4Bluetooth, .dualSenseUSB, .dualSenseBluetooth, .xboxSeriesBluetooth, .switchProUSB, .switchProBluetooth,
        ]
        private static let plugged = Mutex<[(VirtualController, UHIDDevice)]?>(nil)

        /// The virtual controllers, plugged once for every case.
        static func pads() async throws -> [(VirtualController, UHIDDevice)] {
            if let pads = plugged.withLock({ $0 }) { return pads }
            var pads: [(VirtualController, UHIDDevice)] = []
            for controller in controllers { pads.append((controller, try await HIDGuest.plug(controller))) }
            plugged.withLock { $0 = pads }
            return pads
        }

        static func board(_ names: GPIOKernelRig.Names) -> String {
            let driver = #""driver": {"zero_duty": 0.5, "full_duty": 1.0}"#
            return #"""
                {"format": 1, "name": "\#(names.board)", "actuators": [
                  {"name": "c", "topology": "driver-ic", "actuator": "lra", "gpio": {"chip": "\#(names.gpioChip)", "enable": 1},
                   "pwm": {"chip": "\#(names.pwmChip)", "channel": \#(names.channels[0]), "frequency_hz": 20000}, \#(driver),
                   "limits": {"resonant_frequency_hz": 175, "rated_level": 1, "max_continuous_ms": 600000}},
                  {"name": "k", "topology": "driver-ic", "actuator": "lra", "gpio": {"chip": "\#(names.gpioChip)", "enable": 2},
                   "pwm": {"chip": "\#(names.pwmChip)", "channel": \#(names.channels[1]), "frequency_hz": 20000}, \#(driver),
                   "limits": {"resonant_frequency_hz": 175, "rated_level": 0.5, "overdrive_level": 1, "overdrive_max_ms": 200, "max_continuous_ms": 600000}},
                  {"name": "e", "topology": "erm-transistor",
                   "pwm": {"chip": "\#(names.pwmChip)", "channel": \#(names.channels[2]), "frequency_hz": 20000},
                   "limits": {"rated_level": 0.6, "overdrive_level": 1, "overdrive_max_ms": 200, "max_continuous_ms": 600000, "rest_ms": 50}}
                ]}
                """#
        }

        /// One GPIO actuator of the board: its channel (index into the rig's), enable line, and the
        /// duty cycles (ns of 50 µs) it may drive at the moment of death.
        struct Actuator {
            var name: String
            var channel: Int
            var enableLine: Int?
            var duty: ClosedRange<UInt64>
        }

        static let actuators = [
            // Intensity 0.5 through the uncalibrated profile: 0.5 + 0.5 × 128/255 of the period.
            Actuator(name: "c", channel: 0, enableLine: 1, duty: 37_500...37_600),
            Actuator(name: "k", channel: 1, enableLine: 2, duty: 50_000...50_000),
            Actuator(name: "e", channel: 2, enableLine: nil, duty: 50_000...50_000),
        ]

        /// Every way of dying with the real HID drivers bound; with hid-generic (the guard writes
        /// through hidraw the same way) one of each mechanism: the supervisor, an interruption, a
        /// fault. A case costs the one vCPU a few seconds, and the host's real-time suites feel it.
        static var deaths: [ProbeDeath] {
            VMRig.ignoresSpecialHIDDrivers ? [.kill, .term, .segv] : ProbeDeath.allCases
        }

        @Test("every way of dying leaves every GPIO actuator and controller stopped, within the bound", arguments: deaths)
        func death(_ death: ProbeDeath) async throws {
            let pads = try await Self.pads()
            let ids = try pads.map { try HIDGuest.expectedID($0.1, $0.0) }
            try await HIDGuest.onThread { try Self.run(death, pads: pads, padIDs: ids) }
        }

        static func run(_ death: ProbeDeath, pads: [(VirtualController, UHIDDevice)], padIDs: [String]) throws {
            let rig = try GPIOKernelRig(pwmChannels: 3, board: board)
            try rig.sim.setPull(line: 1, .up)
            try rig.sim.setPull(line: 2, .up)
            let trace = try GPIOValueTrace(chip: rig.sim)
            defer { try? trace.remove() }
            for (_, pad) in pads { pad.clearOutputReports() }
            let start = HIDGuest.now()

            var arguments = [CrashProbe.path, death.rawValue, "--set", "gpio.boards=\(rig.boardPath)", "--set", "recording.devices=none", "--continuous", rig.id("c")]
            for id in padIDs { arguments += ["--continuous", id] }
            for ((controller, _), id) in zip(pads, padIDs) where PadFacts(controller).isDualSense { arguments += ["--trigger", id] }
            arguments += ["--kick", rig.id("k"), "--kick", rig.id("e")]
            for index in [1, 2] { arguments += ["--kick-duty", rig.pwm.channelPath(rig.channels[index]) + "/duty_cycle=50000"] }
            arguments += ["--settle", "0.3"]
            // The Swift runtime's backtracer stays on for the null pointer and the trap (real-drivers
            // boot): the guard's handler runs before it and then hands the crash on. It symbolicates
            // for seconds under TCG, so the other crashes go without it (the guard's handler is then
            // the only one).
            let backtracer = !VMRig.ignoresSpecialHIDDrivers && [ProbeDeath.segv, .trap].contains(death)
            let quiet = backtracer ? [:] : ["SWIFT_BACKTRACE": "enable=no"]
            let child = try ChildProcess(arguments, environment: quiet, outputPath: rig.directory + "/probe.log")
            let ending = try child.wait(timeout: 120)
            let ended = HIDGuest.now()
            // The supervisor outlives the process by exactly the stop.
            let supervisorGone = ChildProcess.waitUntil(timeout: 10) { CrashProbe.supervisors(of: child.pid).isEmpty }
            let output = child.output
            #expect(ending == death.ending, "\(death): the probe \(ending); its output:\n\(output)")
            #expect(supervisorGone, "\(death): the supervisor of \(child.pid) is still running")
            let died = try #require(CrashProbe.deathTime(output), "\(death): the probe never got to die; its output:\n\(output)")
            if death == .kill {
                #expect(output.contains("haptics-stop-guard: process \(child.pid) ended without stopping"), "\(output)")
            } else {
                // The process stopped every actuator itself, those of both plugins (their handlers
                // chain); the supervisors only repeat it, silently.
                #expect(!output.contains("ended without stopping"), "\(death): the supervisor had to stop what the process left:\n\(output)")
            }

            var summary: [String] = []
            let bound = StopBound.of(death)
            for actuator in actuators {
                let channel = rig.channels[actuator.channel]
                let stopped = PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false)
                #expect(try rig.pwm.state(channel: channel) == stopped, "\(death): \(actuator.name): sysfs state")
                let history = try rig.pwm.history(channel: channel)
                let before = try #require(history.last { $0.time < died }, "\(death): \(actuator.name) never drove; history \(history)")
                #expect(
                    before.state.enabled && actuator.duty.contains(before.state.dutyCycle),
                    "\(death): \(actuator.name) was not driving at \(actuator.duty) ns when the probe died; history \(history)")
                let pwmStop = try #require(
                    history.first { $0.time >= died && $0.state == stopped }, "\(death): \(actuator.name): no stop after the death; history \(history)")
                var stopTime = pwmStop.time
                var text = "\(actuator.name) pwm \(format(milliseconds(from: died, to: pwmStop.time)))"
                if let line = actuator.enableLine {
                    let events = try trace.events().filter { $0.line == line }
                    #expect(events.last?.value == 0, "\(death): \(actuator.name): enable line history \(events)")
                    let low = try #require(events.first { $0.time / 1_000 >= died / 1_000 && $0.value == 0 }, "\(death): \(actuator.name): the enable line never went low after the death: \(events)")
                    stopTime = max(stopTime, low.time)
                    text += " enable \(format(milliseconds(from: died, to: low.time)))"
                    // Lines first: the driver is off before its input falls (a DRV2603 at 0 % duty drives full reverse).
                    if let firstStep = history.first(where: { $0.time >= died && ($0.state.dutyCycle == 0 || !$0.state.enabled) }) {
                        #expect(low.time / 1_000 <= firstStep.time / 1_000, "\(death): \(actuator.name): enable fell at \(low), after the PWM began to stop at \(firstStep)")
                    }
                }
                let took = milliseconds(from: died, to: stopTime)
                #expect(took <= bound, "\(death): \(actuator.name) stopped \(format(took)) after the death (bound \(format(bound)))")
                summary.append(text)
            }

            var padTimes: [Double] = []
            for ((controller, pad), id) in zip(pads, padIDs) {
                let facts = PadFacts(controller)
                let reports = ReportCheck.ours(pad, facts, since: start)
                let beforeDeath = reports.filter { $0.timestamp < died }
                #expect(beforeDeath.contains { !ReportCheck.isOff($0, facts) }, "\(death): \(id) never rumbled before the death")
                guard let last = reports.last else {
                    Issue.record("\(death): \(id): no report at all")
                    continue
                }
                // A DualSense's triggers were set too: its stop also sets them free.
                let isStop = { (report: UHIDOutputReport) in
                    facts.isDualSense ? ReportCheck.isOffReleasingTriggers(report, facts) : ReportCheck.isOff(report, facts)
                }
                if facts.isDualSense {
                    let set = beforeDeath.contains {
                        $0.data == (try? DualSense.triggerReport(right: Self.probeRightTrigger, left: Self.probeLeftTrigger, transport: facts.transport, sequence: ReportCheck.sequence($0.data, facts)))
                    }
                    #expect(set, "\(death): \(id): the probe's trigger effects never reached the pad")
                }
                #expect(isStop(last), "\(death): \(id): the last report is not motors off\(facts.isDualSense ? " with both triggers released" : ""): \(HIDGuest.hex(last.data))")
                guard let firstOff = reports.firstIndex(where: { $0.timestamp >= died && isStop($0) }) else {
                    Issue.record("\(death): \(id): no motors-off report after the death")
                    continue
                }
                // The stop carries the next counter value: the controller takes it as new.
                if firstOff > 0, facts.isSwitch || controller == .dualSenseBluetooth {
                    let previous = ReportCheck.sequence(reports[firstOff - 1].data, facts)
                    let sequence = ReportCheck.sequence(reports[firstOff].data, facts)
                    #expect(sequence == (previous &+ 1) & 0x0F, "\(death): \(id): the stop's counter \(sequence) after \(previous)")
                }
                let took = milliseconds(from: died, to: reports[firstOff].timestamp)
                padTimes.append(took)
                #expect(took <= bound, "\(death): \(id): motors off \(format(took)) after the death (bound \(format(bound)))")
            }
            print(
                "stop-guard [\(VMRig.ignoresSpecialHIDDrivers ? "hid-generic" : "real drivers")] \(death): \(summary.joined(separator: "; ")); pads max \(format(padTimes.max() ?? .nan)) after the death; probe ran \(format(milliseconds(from: start, to: died))), died in \(format(milliseconds(from: died, to: ended)))"
            )
        }

        /// The effects `haptics-crash-probe --trigger` sets (its `probeRightTrigger`, `probeLeftTrigger`).
        static let probeRightTrigger = AdaptiveTriggerEffect.weapon(startPosition: 0.3, endPosition: 0.7, strength: 1)
        static let probeLeftTrigger = AdaptiveTriggerEffect.feedback(position: 0.2, strength: 0.5)

        static func format(_ milliseconds: Double) -> String {
            String(format: "%.1f ms", milliseconds)
        }
    }
}
