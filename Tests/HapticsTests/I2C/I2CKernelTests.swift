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

        static func system(boards: String) -> HapticSystem {
            HapticSystem(
                configuration: .init(
                    searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                    settings: ["i2c.boards": boards, "gpio.boards": boards, "recording.devices": "none"], clock: ManualClock(), daemon: .never))
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

        @Test("SIGKILL while driving: the stop guard's supervisor writes RTP zero and standby")
        func sigkill() throws {
            let chip = try I2CStubChip()
            defer { chip.finish() }
            let directory = TestSupport.makeTemporaryDirectory("i2c-kill")
            let board = try chip.writeBoard(name: "stub-kill", actuator: "lra", drive: Self.lraDrive, limits: Self.lraLimits, in: directory)
            chip.startSampling()
            let probe = try ChildProcess(
                [CrashProbe.path, "kill", "--plugins", TestSupport.buildDirectory, "--set", "i2c.boards=\(board)", "--set", "gpio.boards=\(board)",
                 "--set", "recording.devices=none", "--continuous", "i2c:stub-kill:lra", "--settle", "0.5"],
                outputPath: directory + "/probe.txt")
            #expect(try probe.wait(timeout: 60) == .signaled(SIGKILL), "\(probe.output)")
            let died = try #require(CrashProbe.deathTime(probe.output), "\(probe.output)")
            #expect(ChildProcess.waitUntil(timeout: 2) { chip.read(0x01) == 0x40 })
            usleep(20_000)
            let samples = chip.samples
            #expect(samples.contains { $0.time < died && $0.mode == 0x05 && $0.rtp > 0 }, "it drove before dying")
            let stopped = samples.first { $0.time > died && $0.mode == 0x40 && $0.rtp == 0 }
            let delay = try milliseconds(from: died, to: #require(stopped, "never stopped").time)
            print("i2c: RTP zero and standby \(String(format: "%.1f", delay)) ms after SIGKILL")
            #expect(delay < 250, "stopped \(delay) ms after the death")
            let writes = chip.backendWrites()
            #expect(Array(writes.suffix(2)) == [.init(.rtpInput, 0x00), .init(.mode, 0x40)], "\(writes.suffix(4))")
        }
    }
}
