import DRV260x
import Foundation
import Haptics
import Testing
import VMRig

extension GuestExclusiveKernelTests {
    /// The `i2c` backend on the kernel's own I²C path: `libhaptics-i2c.so` through dlopen, i2c-dev,
    /// and an `i2c-stub` chip played by ``I2CStubChip``; every write is read back from the kernel
    /// log. Serialized: one stub chip per boot. In the exclusive pass, since the SIGKILL test starts
    /// a Swift program and times the stop.
    @Suite("I2C backend (i2c-stub, i2c-dev)", .serialized)
    struct I2CBackendKernel {
        static let lraDrive = #"{"rated_voltage": 2.0, "overdrive_voltage": 2.5}"#
        static let lraLimits = #"{"resonant_frequency_hz": 175, "max_continuous_ms": 5000}"#
        static let ermDrive = #"{"rated_voltage": 3.0, "overdrive_voltage": 3.5, "loop": "open", "library": "b"}"#
        static let ermLimits = #"{"overdrive_max_ms": 30, "max_continuous_ms": 5000}"#

        /// The plan the backend must follow for the board file's drive.
        static func plan(_ actuator: DRV260xDrive.Actuator) throws -> DRV260xPlan {
            switch actuator {
            case .lra:
                try DRV260xPlan(drive: DRV260xDrive(chip: .drv2605l, actuator: .lra, ratedVoltage: 2.0, overdriveVoltage: 2.5, resonantFrequency: 175, library: .lra))
            case .erm:
                try DRV260xPlan(drive: DRV260xDrive(chip: .drv2605l, actuator: .erm, ratedVoltage: 3.0, overdriveVoltage: 3.5, loop: .open, library: .b))
            }
        }

        static func system(boards: String, clock: any HapticClock = ManualClock()) -> HapticSystem {
            HapticSystem(
                configuration: .init(
                    searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                    settings: ["i2c.boards": boards, "gpio.boards": boards, "recording.devices": "none"], clock: clock, daemon: .never,
                    profileStore: nil))
        }

        @Test("listing shows the stub chip as i2c:BOARD:ACTUATOR, reads its id and writes nothing; haptic-cal list shows it")
        func listing() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-list")
            let board = try chip.writeBoard(name: "stub-list", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            let listed = Self.system(boards: board).everyListing().devices.filter { $0.id.hasPrefix("i2c:") }
            #expect(listed.map(\.id) == ["i2c:stub-list:lra"])
            #expect(listed.first?.isAvailable == true, "\(listed)")
            #expect(chip.backendWrites() == [], "listing must not write")

            let output = directory + "/list.txt"
            let cal = try ChildProcess(
                [TestSupport.buildDirectory + "/haptic-cal", "list"],
                environment: ["HAPTICS_I2C_BOARDS": board, "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory, "HAPTICS_DAEMON": "never"],
                outputPath: output)
            #expect(try cal.wait(timeout: 60) == .exited(0), "\(cal.output)")
            #expect(cal.output.contains("i2c:stub-list:lra"), "\(cal.output)")
            #expect(chip.backendWrites() == [], "haptic-cal list must not write")

            // Another chip id at the address is named, and the device is unavailable.
            chip.latchFaults(0)
            _ = try? FileManager.default.removeItem(atPath: board)
            let wrong = try chip.writeBoard(name: "stub-list", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            try String(contentsOfFile: wrong, encoding: .utf8).replacingOccurrences(of: "drv2605l", with: "drv2604").write(toFile: wrong, atomically: false, encoding: .utf8)
            let mismatch = Self.system(boards: wrong).everyListing().devices.first { $0.id == "i2c:stub-list:lra" }
            #expect(mismatch?.unavailableReason?.contains("reads device id 7 (a drv2605l), but the board file says drv2604 (id 4)") == true, "\(String(describing: mismatch))")
        }

        @Test("open writes the exact set-up (LRA closed loop; ERM open loop) and leaves the chip in standby", arguments: [DRV260xDrive.Actuator.lra, .erm])
        func setup(_ actuator: DRV260xDrive.Actuator) throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-setup")
            let board = try chip.writeBoard(
                name: "stub-\(actuator.rawValue)", actuator: actuator.rawValue, drive: actuator == .lra ? Self.lraDrive : Self.ermDrive,
                limits: actuator == .lra ? Self.lraLimits : Self.ermLimits, in: directory)
            let device = try Self.system(boards: board).openDevice("i2c:stub-\(actuator.rawValue):\(actuator.rawValue)")
            let plan = try Self.plan(actuator)
            // (The reset BEMF_GAIN, 2, is kept: no calibration is stored.)
            #expect(chip.backendWrites() == plan.setup(calibration: nil))
            #expect(chip.read(0x01) == 0x40, "standby after open")
            device.close()
            #expect(chip.backendWrites() == plan.sleep, "close writes RTP zero and standby")
        }

        @Test("wake is real-time playback; frames become RTP values, written only when they change; stop is RTP zero; sleep is standby")
        func realTimePlayback() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-rtp")
            let board = try chip.writeBoard(name: "stub-rtp", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            let device = try Self.system(boards: board).openDevice("i2c:stub-rtp:lra")
            defer { device.close() }
            _ = chip.backendWrites()
            let actuator = device.actuator
            let now = device.clock.now()
            func frame(_ amplitude: Double) -> DriveFrame { DriveFrame(time: now, channels: [ChannelDrive(amplitude: amplitude)]) }
            try actuator.wake()
            for amplitude in [0.5, 0.5, 1.0, 0.25] { try actuator.submit(frame(amplitude)) }
            try actuator.stop()
            #expect(
                chip.backendWrites() == [
                    .init(.mode, 0x05), .init(.rtpInput, 0x80), .init(.rtpInput, 0xFF), .init(.rtpInput, 0x40), .init(.rtpInput, 0x00),
                ])
            try actuator.submit(frame(0.75))
            try actuator.sleep()
            #expect(chip.backendWrites() == [.init(.rtpInput, 0xBF), .init(.rtpInput, 0x00), .init(.mode, 0x40)])
            #expect(chip.read(0x01) == 0x40 && chip.read(0x02) == 0x00)
        }

        @Test("EN on a GPIO line: low while idle; raised, settled and set up again at wake; low after sleep, close and SIGKILL")
        func enableLine() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let sim = try GPIOSim(lines: 4)
            defer { try? sim.remove() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-en")
            let board = try chip.writeBoard(
                name: "stub-en", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, enable: #"{"chip": "\#(sim.devicePath)", "enable": 2}"#,
                in: directory)
            let listed = Self.system(boards: board).everyListing().devices.first { $0.id == "i2c:stub-en:lra" }
            #expect(listed?.isAvailable == true && chip.backendWrites() == [], "listed without touching EN or the chip: \(String(describing: listed))")
            #expect(try sim.value(line: 2) == 0)
            let plan = try Self.plan(.lra)
            do {
                let device = try Self.system(boards: board).openDevice("i2c:stub-en:lra")
                #expect(chip.backendWrites() == plan.setup(calibration: nil), "set up while EN was high")
                #expect(try sim.value(line: 2) == 0, "idle: EN low")
                try device.actuator.wake()
                #expect(try sim.value(line: 2) == 1, "awake: EN high")
                #expect(chip.backendWrites() == plan.setup(calibration: nil) + plan.wake, "registers written again after EN rose, then real-time playback")
                try device.actuator.submit(DriveFrame(time: device.clock.now(), channels: [ChannelDrive(amplitude: 0.5)]))
                try device.actuator.sleep()
                #expect(chip.backendWrites() == [.init(.rtpInput, 0x80)] + plan.sleep)
                #expect(try sim.value(line: 2) == 0, "asleep: EN low")
                try device.actuator.wake()
                device.close()
                #expect(try sim.value(line: 2) == 0, "closed: EN low")
                _ = chip.backendWrites()
            }
            chip.startSampling()
            let probe = try ChildProcess(
                [CrashProbe.path, "kill", "--plugins", TestSupport.buildDirectory, "--set", "i2c.boards=\(board)", "--set", "gpio.boards=\(board)",
                 "--set", "recording.devices=none", "--continuous", "i2c:stub-en:lra", "--settle", "0.5"],
                outputPath: directory + "/probe.txt")
            #expect(try probe.wait(timeout: 60) == .signaled(SIGKILL), "\(probe.output)")
            #expect(ChildProcess.waitUntil(timeout: 2) { (try? sim.value(line: 2)) == 0 && chip.read(0x01) == 0x40 }, "EN low and standby after SIGKILL")
            #expect(chip.samples.contains { $0.mode == 0x05 && $0.rtp > 0 }, "it drove before dying")
        }

        @Test("an over-current or over-temperature flag is reported as a device fault at stop, naming it")
        func faults() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-fault")
            let board = try chip.writeBoard(name: "stub-fault", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            let device = try Self.system(boards: board).openDevice("i2c:stub-fault:lra")
            defer { device.close() }
            try device.actuator.wake()
            chip.latchFaults(0x01)
            #expect {
                try device.actuator.stop()
            } throws: { error in
                "\(error)".contains("over-current (OC_DETECT)")
            }
            chip.latchFaults(0)
            try device.actuator.stop()
        }

        /// Runs haptic-cal with the stub's board, in-process, its profiles under `directory`.
        static func halCal(_ arguments: [String], board: String, directory: String) throws -> (ChildProcess.Ending, String) {
            let child = try ChildProcess(
                [TestSupport.buildDirectory + "/haptic-cal"] + arguments,
                environment: [
                    "HAPTICS_I2C_BOARDS": board, "HAPTICS_GPIO_BOARDS": board, "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory, "HAPTICS_DAEMON": "never",
                    "XDG_CONFIG_HOME": directory, "HAPTICS_RECORDING_DEVICES": "none",
                ],
                outputPath: directory + "/haptic-cal-\(arguments.first ?? "").txt")
            return (try child.wait(timeout: 60), child.output)
        }

        @Test("haptic-cal play drv2605:… plays a ROM sequence: the library, WAVESEQ slots, GO; back to real-time playback at zero; a bad step writes nothing")
        func romSequence() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-rom")
            let board = try chip.writeBoard(name: "stub-rom", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            let (ending, output) = try Self.halCal(["play", "i2c:stub-rom:lra", "drv2605:strong-click-100,wait:100ms,sharp-click-60"], board: board, directory: directory)
            #expect(ending == .exited(0), "\(output)")
            #expect(output.contains("played drv2605:strong-click-100,wait:100ms,sharp-click-60 on i2c:stub-rom:lra"), "\(output)")
            let writes = chip.backendWrites()
            let plan = try Self.plan(.lra)
            let rom = plan.romSequence(try ROMSequence(parsing: "strong-click-100,wait:100ms,sharp-click-60"))
            #expect(rom.map(\.register) == [0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0C])
            let start = try #require((0...(writes.count - rom.count)).first { Array(writes[$0..<($0 + rom.count)]) == rom }, "no ROM sequence in \(writes)")
            #expect(writes[start - 1] == .init(.mode, 0x05), "woken to real-time playback first: \(writes)")
            #expect(Array(writes[(start + rom.count)...].prefix(2)) == [.init(.mode, 0x05), .init(.rtpInput, 0x00)], "\(writes)")
            #expect(Array(writes.suffix(2)) == plan.sleep, "left in standby: \(writes)")
            #expect(chip.read(0x01) == 0x40)

            let (badEnding, badOutput) = try Self.halCal(["play", "i2c:stub-rom:lra", "drv2605:strong-click-100,bogus-click"], board: board, directory: directory)
            #expect(badEnding != .exited(0))
            #expect(badOutput.contains("\"bogus-click\" is not a ROM effect"), "\(badOutput)")
            let afterBad = chip.backendWrites()
            #expect(!afterBad.contains { (0x04...0x0B).contains($0.register) } && !afterBad.contains(.init(.go, 1)), "a bad sequence writes no slot and no GO: \(afterBad)")
        }

        @Test(
            "the feedback vocabulary on the ROM: a tap starts its ROM click with no RTP drive and idles once the chip has played it; the intensity picks the strength; a rhythm renders through RTP; a drive ends a started click"
        )
        func feedbackOnROM() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-feedback")
            let board = try chip.writeBoard(name: "stub-fb", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            let plan = try Self.plan(.lra)
            func rom(_ text: String) throws -> [DRV260x.Write] { plan.romSequence(try ROMSequence(parsing: text)) }
            let device = try Self.system(boards: board, clock: SystemClock(name: "i2c-feedback")).openDevice("i2c:stub-fb:lra")
            defer { device.close() }
            let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
            defer { engine.stop() }
            _ = chip.backendWrites()

            // impact.heavy at full and at half intensity: strong-click-100, then -60 (nearest to 50 %).
            let impact = ImpactFeedbackGenerator(style: .heavy, engine: engine)
            for (intensity, effect) in [(1.0, "strong-click-100"), (0.5, "strong-click-60")] {
                impact.impactOccurred(intensity: intensity)
                usleep(250_000)
                let writes = chip.allWrites()
                let backend = writes.filter { !$0.own }.map(\.write)
                #expect(backend == [.init(.mode, 0x05)] + (try rom(effect)) + plan.halt, "\(effect): \(backend)")
                // Idled after the chip ended the click itself (its own GO clear), not by cutting it.
                let chipEnded = writes.firstIndex { $0.own && $0.write == .init(.go, 0) }
                let halted = writes.lastIndex { !$0.own && $0.write == .init(.mode, 0x40) }
                #expect(chipEnded != nil && halted != nil && chipEnded! < halted!, "\(writes)")
                #expect(chip.read(0x01) == 0x40 && chip.read(0x02) == 0x00)
            }

            // A rhythm has no ROM equivalent whose timing is known: RTP frames, no sequence.
            NotificationFeedbackGenerator(engine: engine).notificationOccurred(.success)
            usleep(400_000)
            let rhythm = chip.backendWrites()
            #expect(!rhythm.contains(.init(.go, 1)) && rhythm.contains { $0.register == 0x02 && $0.value != 0 }, "\(rhythm)")
            #expect(Array(rhythm.suffix(2)) == plan.sleep, "\(rhythm)")

            // A pattern's drive right after a started click ends it and returns to real-time playback.
            impact.impactOccurred()
            let buzz = try HapticPattern(events: [
                HapticEvent(
                    eventType: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0.5)],
                    relativeTime: 0, duration: 0.05)
            ])
            try engine.makePlayer(with: buzz).start(atTime: 0)
            usleep(400_000)
            let preempted = chip.backendWrites()
            let click = try rom("strong-click-100")
            let started = try #require((0...max(0, preempted.count - click.count)).first { Array(preempted[$0..<min($0 + click.count, preempted.count)]) == click }, "\(preempted)")
            let after = Array(preempted[(started + click.count)...])
            #expect(after.prefix(2) == [.init(.go, 0), .init(.mode, 0x05)], "\(preempted)")
            #expect(after.dropFirst(2).first.map { $0.register == 0x02 && $0.value != 0 } == true, "\(preempted)")
            #expect(Array(preempted.suffix(2)) == plan.sleep, "\(preempted)")

            // haptic-cal plays a vocabulary name the same way, and says which ROM effect played it.
            let (ending, output) = try Self.halCal(["play", "i2c:stub-fb:lra", "impact.rigid"], board: board, directory: directory)
            #expect(ending == .exited(0), "\(output)")
            #expect(output.contains("i2c:stub-fb:lra plays impact.rigid from its own effects: sharp-click-100"), "\(output)")
            let cli = chip.backendWrites()
            #expect(cli.contains(.init(address: 0x04, 4)) && cli.contains(.init(.go, 1)) && !cli.contains { $0.register == 0x02 && $0.value != 0 }, "\(cli)")
        }

        @Test("haptic-cal calibrate runs auto-calibration, stores its results in the profile; the next open writes them back")
        func calibration() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            chip.answerCalibration(.init(compensation: 0x0D, backEMF: 0x7A, gain: 3, lraPeriod: 0x39))
            let directory = TestSupport.makeTemporaryDirectory("i2c-cal")
            let board = try chip.writeBoard(name: "stub-cal", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            let (ending, output) = try Self.halCal(["calibrate", "i2c:stub-cal:lra"], board: board, directory: directory)
            #expect(ending == .exited(0), "\(output)")
            for line in ["a_cal_comp         13", "a_cal_bemf         122", "bemf_gain          3", "lra_period         57", "resonance          178.2 Hz"] {
                #expect(output.contains(line), "\(line) in \(output)")
            }
            let plan = try Self.plan(.lra)
            let writes = chip.backendWrites()
            let start = try #require((0...(writes.count - plan.calibration.count)).first { Array(writes[$0..<($0 + plan.calibration.count)]) == plan.calibration }, "\(writes)")
            let stored = DRV260xCalibration(compensation: 0x0D, backEMF: 0x7A, backEMFGain: 3, lraPeriod: 0x39)
            #expect(Array(writes[(start + plan.calibration.count)...].prefix(plan.setup(calibration: stored).count)) == plan.setup(calibration: stored), "\(writes)")

            let profiles = directory + "/haptics/profiles"
            let store = ProfileStore(userDirectory: profiles, shippedDirectories: [])
            let entry = try #require(store.lookup(for: try Self.system(boards: board).resolve("i2c:stub-cal:lra")).entry, "no profile in \(profiles)")
            #expect(entry.profile.deviceCalibration == ["a_cal_comp": 13, "a_cal_bemf": 122, "bemf_gain": 3, "lra_period": 57])
            #expect(entry.profile.source == .device)

            // A new start: the set-up, then the stored results, with no calibration.
            let system = HapticSystem(
                configuration: .init(
                    searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                    settings: ["i2c.boards": board, "gpio.boards": board, "recording.devices": "none"], clock: ManualClock(), daemon: .never,
                    profileStore: store))
            let device = try system.openDevice("i2c:stub-cal:lra")
            defer { device.close() }
            let reopened = chip.backendWrites()
            #expect(Array(reopened.suffix(plan.setup(calibration: stored).count)) == plan.setup(calibration: stored), "\(reopened)")
            #expect(!reopened.contains(.init(.go, 1)), "no new calibration")
            #expect(chip.read(0x18) == 0x0D && chip.read(0x19) == 0x7A && chip.read(0x1A) & 0x03 == 3)
        }

        @Test("a failed auto-calibration (DIAG_RESULT) is an error naming it; nothing is stored; the chip is back in standby")
        func failedCalibration() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            chip.answerCalibration(.init(fails: true))
            let directory = TestSupport.makeTemporaryDirectory("i2c-calfail")
            let board = try chip.writeBoard(name: "stub-calfail", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            let (ending, output) = try Self.halCal(["calibrate", "i2c:stub-calfail:lra"], board: board, directory: directory)
            #expect(ending != .exited(0))
            #expect(output.contains("auto-calibration failed (STATUS DIAG_RESULT set): the actuator is missing, open or shorted"), "\(output)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/haptics/profiles"), "nothing stored")
            #expect(chip.read(0x01) == 0x40)
        }

        @Test("every way of dying while driving: GO cleared, RTP zero and standby, by the process itself or (SIGKILL) its supervisor, within the bound", arguments: ProbeDeath.allCases)
        func death(_ death: ProbeDeath) throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-death")
            let board = try chip.writeBoard(name: "stub-death", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            chip.startSampling()
            let probe = try ChildProcess(
                [CrashProbe.path, death.rawValue, "--plugins", TestSupport.buildDirectory, "--set", "i2c.boards=\(board)", "--set", "gpio.boards=\(board)",
                 "--set", "recording.devices=none", "--continuous", "i2c:stub-death:lra", "--settle", "0.3"],
                environment: ["SWIFT_BACKTRACE": "enable=no"], outputPath: directory + "/probe.txt")
            let ending = try probe.wait(timeout: 60)
            #expect(ending == death.ending, "\(death): \(probe.output)")
            let died = try #require(CrashProbe.deathTime(probe.output), "\(death): \(probe.output)")
            #expect(ChildProcess.waitUntil(timeout: 3) { chip.read(0x01) == 0x40 && chip.read(0x02) == 0 })
            usleep(20_000)
            let samples = chip.samples
            #expect(samples.contains { $0.time < died && $0.mode == 0x05 && $0.rtp > 0 }, "\(death): it drove before dying")
            let stopped = samples.first { $0.time > died && $0.mode == 0x40 && $0.rtp == 0 }
            let delay = try milliseconds(from: died, to: #require(stopped, "\(death): never stopped").time)
            print("i2c stop guard [\(death)]: GO 0, RTP 0, standby \(String(format: "%.1f", delay)) ms after the death (bound \(StopBound.of(death)) ms)")
            #expect(delay <= StopBound.of(death), "\(death): stopped \(delay) ms after the death")
            let writes = chip.backendWrites()
            #expect(Array(writes.suffix(3)) == [.init(.go, 0x00), .init(.rtpInput, 0x00), .init(.mode, 0x40)], "\(death): \(writes.suffix(4))")
            if death == .kill {
                #expect(probe.output.contains("haptics-stop-guard: process \(probe.pid) ended without stopping i2c:stub-death:lra"), "\(probe.output)")
            } else {
                #expect(!probe.output.contains("ended without stopping"), "\(death): the supervisor had to stop it:\n\(probe.output)")
            }
        }
    }
}
