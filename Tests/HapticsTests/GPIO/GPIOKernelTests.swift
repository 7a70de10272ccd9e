import CGpiod
import Foundation
import Haptics
import Testing
import VMRig

/// A board file with one actuator `a` of `topology`; `extra` adds members to the actuator and
/// `limits` replaces the default limits (rated 1, no kick, 600 s continuous, rest 0, so the
/// real-time safety rules stay out of the manual-clock sequences).
func gpioBoard(
    _ names: GPIOKernelRig.Names, topology: String, actuator: String? = nil, gpio: String? = nil, pwm: String, driver: String? = nil,
    limits: String = #""rated_level": 1, "max_continuous_ms": 600000, "rest_ms": 0"#, extraLimits: String = "", steps: Int = 101,
    chipByName: Bool = false
) -> String {
    var members = [#""name": "a""#, #""topology": "\#(topology)""#, #""amplitude_steps": \#(steps)"#]
    if let actuator { members.append(#""actuator": "\#(actuator)""#) }
    if let gpio { members.append(#""gpio": {"chip": "\#(chipByName ? names.gpioChipName : names.gpioChip)", \#(gpio)}"#) }
    members.append(#""pwm": {"chip": "\#(names.pwmChip)", \#(pwm)}"#)
    if let driver { members.append(#""driver": {\#(driver)}"#) }
    members.append(#""limits": {\#(limits)\#(extraLimits.isEmpty ? "" : ", " + extraLimits)}"#)
    return #"{"format": 1, "name": "\#(names.board)", "actuators": [{\#(members.joined(separator: ", "))}]}"#
}

extension GuestKernelTests {
    /// Guest side: every topology plays a pattern through the engine (on a manual clock) and the
    /// gpio-sim lines and pwm-sim channels go through the expected states, in order.
    @Suite(.serialized)
    struct GPIOTopologies {
        typealias State = PWMSim.State

        /// Plays ``HapticPattern/gpioSequence`` and checks the hardware at each time.
        func play(
            _ rig: GPIOKernelRig, pattern: HapticPattern, lines: [Int], expected: [(Double, GPIOKernelRig.Snapshot)], idle: GPIOKernelRig.Snapshot,
            opened: GPIOKernelRig.Snapshot? = nil, sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let system = rig.system()
            let device = try system.openDevice(rig.id())
            defer { device.close() }
            let afterOpen = try rig.snapshot(lines: lines)
            #expect(afterOpen == opened ?? idle, "after open: \(afterOpen)", sourceLocation: sourceLocation)
            let engine = try HapticEngine(devices: [device], clock: rig.clock, policy: HapticPolicy())
            let player = try engine.makePlayer(with: pattern)
            try player.start(atTime: 0)
            for (time, snapshot) in expected {
                rig.advance(to: time)
                let actual = try rig.snapshot(lines: lines)
                #expect(actual == snapshot, "at \(time) s: \(actual)", sourceLocation: sourceLocation)
            }
            rig.advance(to: 0.3)
            let after = try rig.snapshot(lines: lines)
            #expect(after == idle, "after the pattern: \(after)", sourceLocation: sourceLocation)
            engine.stop()
        }

        @Test("driver IC (DRV2603 class): enable line, duty 50 % (zero) … 100 % (full scale); chip and line found by name")
        func driverIC() throws {
            let rig = try GPIOKernelRig(lineNames: [nil, nil, "motor-en"]) { names in
                gpioBoard(
                    names, topology: "driver-ic", actuator: "lra", gpio: #""enable": "motor-en""#, pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                    driver: #""zero_duty": 0.5, "full_duty": 1.0, "enable_to_ready_us": 1000"#, extraLimits: #""resonant_frequency_hz": 175"#, chipByName: true)
            }
            func at(_ enable: Int, _ duty: UInt64, enabled: Bool = true) -> GPIOKernelRig.Snapshot {
                .init(lines: [2: enable], pwm: [State(period: 50_000, dutyCycle: duty, enabled: enabled)])
            }
            try play(
                rig, pattern: try .gpioSequence(), lines: [2],
                expected: [
                    (0, at(1, 37_500)),  // intensity 0.5 → 0.5 + 0.5 × 0.5 of the period
                    (0.05, at(1, 37_500)),
                    (0.1, at(1, 25_000)),  // between events: awake, zero output (50 %)
                    (0.15, at(1, 25_000)),
                    (0.2, at(1, 49_000)),  // the tap's kick: 0.6 × 1.6 = 0.96 → 98 %
                    (0.215, at(1, 40_000)),  // the tap: 0.6 → 80 %
                ],
                idle: at(0, 0, enabled: false))
        }

        @Test("pwm-vibrator: active-low enable line, amplitude PWM over the dead zone, direction PWM at 50 % while vibrating")
        func pwmVibrator() throws {
            let rig = try GPIOKernelRig(pwmChannels: 2) { names in
                gpioBoard(
                    names, topology: "pwm-vibrator", actuator: "erm", gpio: #""enable": {"line": 4, "active_low": true}"#,
                    pwm: #""channel": \#(names.channels[0]), "frequency_hz": 25000, "direction_channel": \#(names.channels[1]), "direction_duty": 0.5"#,
                    extraLimits: #""dead_zone": 0.2"#)
            }
            func at(_ enable: Int, _ duty: UInt64, direction: Bool, enabled: Bool = true) -> GPIOKernelRig.Snapshot {
                .init(
                    lines: [4: enable],
                    pwm: [State(period: 40_000, dutyCycle: duty, enabled: enabled), State(period: 40_000, dutyCycle: direction ? 20_000 : 0, enabled: direction)])
            }
            try play(
                rig, pattern: try .gpioSequence(), lines: [4],
                expected: [
                    (0, at(0, 24_000, direction: true)),  // 0.2 + 0.5 × 0.8 = 0.6; enable active = low
                    (0.1, at(0, 0, direction: false)),
                    (0.2, at(0, 38_720, direction: true)),  // 0.2 + 0.96 × 0.8 = 0.968
                    (0.215, at(0, 27_200, direction: true)),  // 0.2 + 0.6 × 0.8 = 0.68
                ],
                idle: at(1, 0, direction: false, enabled: false))
        }

        @Test("ERM on a transistor: PWM duty as speed, lifted over the dead zone, no lines")
        func ermTransistor() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(names, topology: "erm-transistor", pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#, extraLimits: #""dead_zone": 0.25"#)
            }
            func at(_ duty: UInt64, enabled: Bool = true) -> GPIOKernelRig.Snapshot {
                .init(lines: [:], pwm: [State(period: 50_000, dutyCycle: duty, enabled: enabled)])
            }
            try play(
                rig, pattern: try .gpioSequence(), lines: [],
                expected: [(0, at(31_250)), (0.1, at(0)), (0.2, at(48_500)), (0.215, at(35_000))],
                idle: at(0, enabled: false))
        }

        @Test("LRA on an H-bridge: sharpness sets the PWM period (drive frequency), duty asin(level)/π, direction and enable lines")
        func lraHBridge() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "lra-hbridge", gpio: #""enable": 1, "direction": 5"#, pwm: #""channel": \#(names.channels[0])"#,
                    extraLimits: #""resonant_frequency_hz": 175, "frequency_min_hz": 130, "frequency_max_hz": 260"#)
            }
            // The uncalibrated band is 131.25 … 260 Hz: sharpness 1 → 260 Hz (3 846 154 ns), sharpness 0 → 131.25 Hz (7 619 048 ns).
            func at(_ enable: Int, _ direction: Int, _ period: UInt64, _ duty: UInt64, enabled: Bool = true) -> GPIOKernelRig.Snapshot {
                .init(lines: [1: enable, 5: direction], pwm: [State(period: period, dutyCycle: duty, enabled: enabled)])
            }
            try play(
                rig, pattern: try .gpioSequence(continuousSharpness: 1, transientSharpness: 0), lines: [1, 5],
                expected: [
                    (0, at(1, 1, 3_846_154, 641_026)),  // asin(0.5)/π = 1/6 of the period
                    (0.1, at(1, 0, 3_846_154, 0, enabled: false)),  // between drives: awake, the PWM stopped until the next push
                    (0.2, at(1, 1, 7_619_048, 1_560_631)),  // asin(0.6)/π of the period
                ],
                idle: at(0, 0, 7_619_048, 0, enabled: false),
                opened: at(0, 0, 5_714_286, 0, enabled: false))  // idle at the resonance period
        }

        @Test("prepare() wakes (PWM at zero output first, then enable) and the prepare timeout idles (enable first); the wake latency is measured")
        func prepareAndIdle() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "driver-ic", actuator: "lra", gpio: #""enable": 3"#, pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                    driver: #""enable_to_ready_us": 1000"#, extraLimits: #""resonant_frequency_hz": 175"#)
            }
            let system = rig.system()
            let device = try system.openDevice(rig.id())
            defer { device.close() }
            let latency = device.description.wakeLatency
            print("gpio: measured wake latency of \(rig.id()): \(latency * 1e6) µs (including the documented 1000 µs)")
            #expect(latency > 0.001 && latency < 0.5)
            let trace = try GPIOValueTrace(chip: rig.sim)
            defer { try? trace.remove() }
            try rig.pwm.clearHistory(channel: rig.channel)

            let hold = device.hold()
            hold.prepare()
            #expect(device.powerState == .prepared)
            #expect(try rig.snapshot(lines: [3]) == .init(lines: [3: 1], pwm: [PWMSim.State(period: 50_000, dutyCycle: 25_000, enabled: true)]))
            rig.advance(to: 2.1)
            #expect(device.powerState == .idle)
            #expect(try rig.snapshot(lines: [3]) == .init(lines: [3: 0], pwm: [PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false)]))
            hold.release()

            let history = try rig.pwm.history(channel: rig.channel)
            let enable = try trace.events().filter { $0.line == 3 }
            #expect(enable.map(\.value) == [1, 0])
            #expect(history.map(\.state) == [
                PWMSim.State(period: 50_000, dutyCycle: 25_000, enabled: false), PWMSim.State(period: 50_000, dutyCycle: 25_000, enabled: true),
                PWMSim.State(period: 50_000, dutyCycle: 0, enabled: true), PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false),
            ])
            if enable.count == 2, history.count == 4 {
                // Wake: the PWM runs at zero output before the enable line rises; sleep: the line falls first.
                #expect(enable[0].time / 1_000 >= history[1].time / 1_000, "enable rose at \(enable[0]) before the PWM ran at zero output \(history[1])")
                #expect(enable[1].time / 1_000 <= history[2].time / 1_000, "enable fell at \(enable[1]) after the PWM changed \(history[2])")
            }
        }
    }

    /// Guest side: the safety rules on real kernel interfaces: SIGTERM and SIGINT of `haptic-cal`
    /// driving an actuator, what a dead process without its supervisor leaves for the next open, the
    /// continuous-drive cut and the bounded kick. (Every other death: `StopGuardKernel`.)
    @Suite(.serialized)
    struct GPIOSafety {
        static var hapticCal: String { TestSupport.buildDirectory + "/haptic-cal" }

        static func driverBoard(_ names: GPIOKernelRig.Names) -> String {
            gpioBoard(
                names, topology: "driver-ic", actuator: "lra", gpio: #""enable": 6"#, pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                extraLimits: #""resonant_frequency_hz": 175"#)
        }

        /// Starts `haptic-cal play ID --duration 10` and waits until it drives the actuator at full scale.
        static func startLongPlay(_ rig: GPIOKernelRig) throws -> ChildProcess {
            let child = try ChildProcess(
                [hapticCal, "play", rig.id(), "--duration", "10", "--set", "gpio.boards=\(rig.boardPath)", "--set", "recording.devices=none"],
                outputPath: rig.directory + "/play.log")
            let driving = try ChildProcess.waitUntil(timeout: 60) {
                try rig.pwm.history(channel: rig.channel).contains { $0.state.enabled && $0.state.dutyCycle == 50_000 }
            }
            try #require(driving, "haptic-cal never drove the actuator: \(child.output)")
            #expect(try rig.sim.value(line: 6) == 1)
            return child
        }

        @Test(
            "SIGTERM or SIGINT during a long continuous event: the handler drops the enable line, then duty 0 and disabled; the process dies of the signal",
            arguments: [SIGTERM, SIGINT])
        func interrupted(by signal: Int32) throws {
            let rig = try GPIOKernelRig(board: Self.driverBoard)
            let trace = try GPIOValueTrace(chip: rig.sim)
            defer { try? trace.remove() }
            let child = try Self.startLongPlay(rig)
            child.send(signal)
            let ending = try child.wait(timeout: 30)
            #expect(ending == .signaled(signal), "\(child.output)")
            // The stop guard's supervisor applies the stop once more after the process is gone, then exits.
            #expect(ChildProcess.waitUntil(timeout: 10) { CrashProbe.supervisors(of: child.pid).isEmpty })

            #expect(try rig.pwm.state(channel: rig.channel) == PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false))
            let enable = try trace.events().filter { $0.line == 6 }
            #expect(enable.last?.value == 0, "enable line history: \(enable)")
            #expect(try !rig.lineIsUsed(6))
            let history = try rig.pwm.history(channel: rig.channel)
            let stopIndex = try #require(history.lastIndex { $0.state.dutyCycle == 50_000 && $0.state.enabled }) + 1
            let stops = Array(history[stopIndex...])
            #expect(stops.map(\.state) == [PWMSim.State(period: 50_000, dutyCycle: 0, enabled: true), PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false)])
            if let low = enable.first(where: { $0.value == 0 && $0.time >= history[stopIndex - 1].time }), let first = stops.first {
                #expect(low.time / 1_000 <= first.time / 1_000, "the enable line fell at \(low), after the PWM stopped at \(first)")
            }
        }

        @Test("what a process killed with its supervisor leaves (PWM running, enable line pulled up): the next open forces the actuator stopped")
        func leftoverThenOpen() throws {
            let rig = try GPIOKernelRig(board: Self.driverBoard)
            // A cgroup kill takes the supervisor too; so does a process without it: the channel stays
            // exported and driving, and the released enable line keeps its level (here its pull-up).
            try rig.pwm.configure(channel: rig.channel, PWMSim.State(period: 50_000, dutyCycle: 50_000, enabled: true))
            try rig.sim.setPull(line: 6, .up)
            #expect(try rig.sim.value(line: 6) == 1)

            let system = rig.system()
            let device = try system.openDevice(rig.id())
            #expect(try rig.pwm.state(channel: rig.channel) == PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false))
            #expect(try rig.sim.value(line: 6) == 0)
            device.close()
            #expect(!SysFS.exists(rig.pwm.channelPath(rig.channel)))
            #expect(try rig.lastState() == PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false))
        }

        @Test("the continuous-drive limit cuts a 1 s event at max_continuous_ms = 200 without any further frame")
        func continuousLimit() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "erm-transistor", pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                    limits: #""rated_level": 1, "max_continuous_ms": 200, "rest_ms": 20"#)
            }
            let system = rig.system()
            let device = try system.openDevice(rig.id())
            defer { device.close() }
            let engine = try HapticEngine(devices: [device], clock: rig.clock, policy: HapticPolicy())
            try rig.pwm.clearHistory(channel: rig.channel)
            try engine.makePlayer(with: .continuous(duration: 1, intensity: 1, sharpness: 0.5)).start(atTime: 0)
            let cut = try ChildProcess.waitUntil(timeout: 5) { try rig.pwm.state(channel: rig.channel).dutyCycle == 0 }
            #expect(cut)
            #expect(try rig.pwm.state(channel: rig.channel) == PWMSim.State(period: 50_000, dutyCycle: 0, enabled: true))
            let history = try rig.pwm.history(channel: rig.channel)
            let on = try #require(history.firstIndex { $0.state.dutyCycle == 50_000 && $0.state.enabled })
            let off = try #require(history[on...].firstIndex { $0.state.dutyCycle == 0 })
            let driven = Double(history[off].time - history[on].time) / 1e6
            // The watchdog meets the deadline within 1 ms; under TCG with other suites running, allow for scheduling delays.
            // The drive is timed from the limiter's clock reading, which lies between the write before
            // (the wake's) and the drive's first duty write: the chip may see up to that gap less.
            let lead = on > 0 ? Double(history[on].time - history[on - 1].time) / 1e6 : 0
            #expect(driven >= 199 - lead && driven < 600, "driven for \(driven) ms (first write \(lead) ms after the one before); history \(history)")
            #expect(history[on...].allSatisfy { $0.time <= history[off].time || $0.state.dutyCycle == 0 })
            // Still asked to drive (the manual clock has not moved): still cut.
            usleep(100_000)
            #expect(try rig.pwm.state(channel: rig.channel).dutyCycle == 0)
            rig.advance(to: 1.1)
            #expect(try rig.pwm.state(channel: rig.channel) == PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false))
            engine.stop()
        }

        @Test("above the rated level only during a kick bounded by overdrive_max_ms = 50, even without a further frame")
        func boundedKick() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "erm-transistor", pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                    limits: #""rated_level": 0.5, "overdrive_level": 1, "overdrive_max_ms": 50, "max_continuous_ms": 5000"#)
            }
            let system = rig.system()
            let device = try system.openDevice(rig.id())
            defer { device.close() }
            let engine = try HapticEngine(devices: [device], clock: rig.clock, policy: HapticPolicy())
            try rig.pwm.clearHistory(channel: rig.channel)
            try engine.makePlayer(with: .continuous(duration: 1, intensity: 1, sharpness: 0.5)).start(atTime: 0)
            let capped = try ChildProcess.waitUntil(timeout: 5) { try rig.pwm.state(channel: rig.channel).dutyCycle == 25_000 }
            #expect(capped)
            let history = try rig.pwm.history(channel: rig.channel)
            let kick = try #require(history.firstIndex { $0.state.dutyCycle == 50_000 })
            let rated = try #require(history[kick...].firstIndex { $0.state.dutyCycle == 25_000 })
            let kicked = Double(history[rated].time - history[kick].time) / 1e6
            // As above: the kick may look shorter by the gap between the wake's write and the kick's
            // (36 ms seen on a starved emulator, with the kick's write 15.6 ms after the wake's).
            let lead = kick > 0 ? Double(history[kick].time - history[kick - 1].time) / 1e6 : 0
            #expect(kicked >= 49 - lead && kicked < 400, "kick lasted \(kicked) ms (its write \(lead) ms after the one before); history \(history)")
            #expect(history.allSatisfy { $0.state.dutyCycle <= 25_000 || ($0.time >= history[kick].time && $0.time < history[rated].time) })
            engine.stop()
        }
    }

    /// Guest side: bad board files and hardware problems give errors naming the file, key, chip or
    /// line, and leave nothing driven.
    @Suite(.serialized)
    struct GPIOBadInput {
        static func openError(_ rig: GPIOKernelRig) throws -> String {
            let system = rig.system()
            do {
                let device = try system.openDevice(rig.id())
                device.close()
                Issue.record("opening \(rig.id()) succeeded")
                return ""
            } catch {
                return "\(error)"
            }
        }

        /// The channel is unexported and its last state (if it ever had one) stopped.
        static func expectStopped(_ rig: GPIOKernelRig, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(!SysFS.exists(rig.pwm.channelPath(rig.channel)), sourceLocation: sourceLocation)
            if let last = try rig.lastState() {
                #expect(!last.enabled && last.dutyCycle == 0, "\(last)", sourceLocation: sourceLocation)
            }
        }

        @Test("a line the chip does not have, by offset or by name")
        func missingLine() throws {
            for line in ["12", #""no-such-line""#] {
                let rig = try GPIOKernelRig { names in
                    gpioBoard(
                        names, topology: "driver-ic", actuator: "lra", gpio: #""enable": \#(line)"#, pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                        extraLimits: #""resonant_frequency_hz": 175"#)
                }
                let message = try Self.openError(rig)
                #expect(message.contains("\(rig.id()): open failed: \(rig.boardPath): $.actuators[0].gpio.enable: "), "\(message)")
                if line == "12" {
                    #expect(message.contains("line 12 does not exist on \(rig.sim.devicePath) (\"\(rig.sim.label)\", 8 lines: 0...7)"), "\(message)")
                } else {
                    #expect(message.contains("\(rig.sim.devicePath) (\"\(rig.sim.label)\") has no line named \"no-such-line\""), "\(message)")
                }
                try Self.expectStopped(rig)
            }
        }

        @Test("a PWM channel the chip does not have")
        func missingChannel() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "driver-ic", actuator: "lra", gpio: #""enable": 0"#, pwm: #""channel": 40, "frequency_hz": 20000"#,
                    extraLimits: #""resonant_frequency_hz": 175"#)
            }
            let message = try Self.openError(rig)
            #expect(
                message.contains(
                    "\(rig.boardPath): $.actuators[0].pwm.channel: cannot use channel 40 of \(rig.pwm.chipPath): No such device (the chip has \(rig.pwm.channelCount) channels (npwm = \(rig.pwm.channelCount)): channel 40 does not exist)"
                ), "\(message)")
            #expect(try !rig.lineIsUsed(0))
        }

        @Test("a PWM channel a kernel driver has requested: at once an error that says so, no wait for the export; no line is left requested")
        func channelOwnedByKernelDriver() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "driver-ic", actuator: "lra", gpio: #""enable": 2"#, pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                    extraLimits: #""resonant_frequency_hz": 175"#)
            }
            try rig.pwm.claimForDriver(channel: rig.channel)
            defer { try? rig.pwm.releaseDriverClaim(channel: rig.channel) }
            #expect(try rig.pwm.driverClaims().contains(rig.channel))
            let chip = rig.pwm.chipPath.split(separator: "/").last.map(String.init) ?? ""
            let message = try Self.openError(rig)
            #expect(
                message.contains("$.actuators[0].pwm.channel: ") && message.contains("channel \(rig.channel) of \(chip) is owned by a kernel driver"),
                "\(message)")
            // The export wait would have said the channel "did not appear".
            #expect(!message.contains("did not appear"), "\(message)")
            #expect(!SysFS.exists(rig.pwm.channelPath(rig.channel)))
            #expect(try !rig.lineIsUsed(2))
            // Freed by the driver, the same board opens.
            try rig.pwm.releaseDriverClaim(channel: rig.channel)
            let device = try rig.system().openDevice(rig.id())
            device.close()
            try Self.expectStopped(rig)
        }

        @Test("a line already in use names its consumer; the PWM is left stopped and unexported")
        func lineInUse() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "driver-ic", actuator: "lra", gpio: #""enable": 2"#, pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                    extraLimits: #""resonant_frequency_hz": 175"#)
            }
            let chip = try #require(gpiod_chip_open(rig.sim.devicePath))
            defer { gpiod_chip_close(chip) }
            let line = try #require(gpiod_chip_get_line(chip, 2))
            #expect(gpiod_line_request_output(line, "other-app", 0) == 0)
            defer { gpiod_line_release(line) }
            // A leftover running PWM, as a killed process leaves it.
            try rig.pwm.configure(channel: rig.channel, PWMSim.State(period: 50_000, dutyCycle: 40_000, enabled: true))
            let message = try Self.openError(rig)
            #expect(message.contains("$.actuators[0].gpio.enable: line 2 of \(rig.sim.devicePath) is already in use by \"other-app\"; free it or choose another line"), "\(message)")
            try Self.expectStopped(rig)
        }

        @Test("permission denied for an unprivileged process: first the PWM export, then (PWM opened to it) the GPIO chip")
        func permissionDenied() throws {
            let rig = try GPIOKernelRig { names in
                gpioBoard(
                    names, topology: "driver-ic", actuator: "lra", gpio: #""enable": 2"#, pwm: #""channel": \#(names.channels[0]), "frequency_hz": 20000"#,
                    extraLimits: #""resonant_frequency_hz": 175"#)
            }
            let tmp = rig.directory + "/tmp"
            mkdir(tmp, 0o777)
            chmod(tmp, 0o777)
            func runUnprivileged(_ label: String) throws -> (ChildProcess.Ending, String) {
                let child = try ChildProcess(
                    [
                        "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", GPIOSafety.hapticCal, "play", rig.id(), "--duration", "0.05",
                        "--set", "gpio.boards=\(rig.boardPath)", "--set", "recording.devices=none",
                    ], environment: ["HOME": tmp, "TMPDIR": tmp, "XDG_CONFIG_HOME": tmp], outputPath: rig.directory + "/\(label).log")
                let ending = try child.wait(timeout: 60)
                return (ending, child.output)
            }

            let (first, exportOutput) = try runUnprivileged("export")
            #expect(first != .exited(0))
            #expect(exportOutput.contains("cannot write \"\(rig.channel)\" to \(rig.pwm.chipPath)/export: Permission denied"), "\(exportOutput)")
            #expect(exportOutput.contains("$.actuators[0].pwm.channel"), "\(exportOutput)")
            try Self.expectStopped(rig)
            #expect(try !rig.lineIsUsed(2))

            // Give the unprivileged user the channel (as a udev rule would), left running by "someone".
            try rig.pwm.configure(channel: rig.channel, PWMSim.State(period: 50_000, dutyCycle: 40_000, enabled: true))
            let channelDirectory = rig.pwm.channelPath(rig.channel)
            for entry in ["", "/period", "/duty_cycle", "/enable", "/polarity"] {
                #expect(chown(channelDirectory + entry, 65534, 65534) == 0, "chown \(channelDirectory + entry)")
            }
            let (second, chipOutput) = try runUnprivileged("chip")
            #expect(second != .exited(0))
            #expect(chipOutput.contains("$.actuators[0].gpio.chip: GPIO chip \(rig.sim.devicePath): Permission denied"), "\(chipOutput)")
            #expect(chipOutput.contains("add the user to the gpio group"), "\(chipOutput)")
            #expect(try rig.pwm.state(channel: rig.channel) == PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false))
            #expect(try !rig.lineIsUsed(2))
        }
    }
}
