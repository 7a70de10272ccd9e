import DRV260x
import Foundation
import GPIOBoards
import Haptics
import HapticsSupport
import Testing

@Suite("DRV260x: voltages, register plans, the ROM library, calibration values")
struct DRV260xTests {
    static let lra = DRV260xDrive(chip: .drv2605l, actuator: .lra, ratedVoltage: 2.0, overdriveVoltage: 2.5, resonantFrequency: 175, library: .lra)

    @Test("voltages against worked values: 2 Vrms at 175 Hz is RATED 0x53; 3.6 V peak is OD_CLAMP 0xA4; ERM 3 V is 0x8E")
    func voltages() throws {
        // TI E2E 342477: a 2 Vrms 175 Hz LRA, SAMPLE_TIME 300 µs → RATED_VOLTAGE 0x53.
        #expect(try Self.lra.ratedVoltageCode() == 0x53)
        // LRA closed-loop clamp 21.96 mV per step: 3.6 V peak → 0xA4 (LGKev/DRV2605_driver's figure).
        var clamp = Self.lra
        clamp.overdriveVoltage = 3.6
        #expect(try clamp.overdriveClampCode() == 0xA4)
        // ERM closed loop 21.18 mV per step: 3 V average → 141.6 → 0x8E.
        let erm = DRV260xDrive(chip: .drv2605l, actuator: .erm, ratedVoltage: 3.0, overdriveVoltage: 3.5)
        #expect(try erm.ratedVoltageCode() == 0x8E)
        // ERM closed-loop clamp: 21.64 mV × (t_drive − 300 µs)/(t_drive + 75 µs + 75 µs), t_drive 4.8 ms.
        let perStep = 21.64e-3 * (4.8e-3 - 300e-6) / (4.8e-3 + 150e-6)
        #expect(try erm.overdriveClampCode() == UInt8((3.5 / perStep).rounded()))
        // Open loop: ERM 21.32 mV per step; LRA × √(1 − 800 µs·f).
        var open = erm
        open.loop = .open
        #expect(try open.overdriveClampCode() == UInt8((3.5 / 21.32e-3).rounded()))
        var openLRA = Self.lra
        openLRA.loop = .open
        #expect(try openLRA.overdriveClampCode() == UInt8((2.5 / (21.32e-3 * (1 - 800e-6 * 175).squareRoot())).rounded()))
        #expect(open.ratedLevel == 3.0 / 3.5 && erm.ratedLevel == 1)
        // DRIVE_TIME: half the LRA's period; the ERM's reset value.
        #expect(Self.lra.driveTimeCode == 24)
        var fast = Self.lra
        fast.resonantFrequency = 250
        #expect(fast.driveTimeCode == 15)
        #expect(erm.driveTimeCode == 19)
    }

    @Test("a voltage the register cannot hold is a typed error naming the register and the reachable range")
    func voltageOutOfReach() {
        let erm = DRV260xDrive(chip: .drv2605l, actuator: .erm, ratedVoltage: 5.45, overdriveVoltage: 5.5)
        do {
            _ = try erm.ratedVoltageCode()
            Issue.record("5.45 V was accepted")
        } catch {
            #expect(error.which == .rated && error.volts == 5.45 && abs(error.range.upperBound - 21.18e-3 * 255) < 1e-12)
            #expect(error.description == "5.45 V is outside what RATED_VOLTAGE can hold here (0.021...5.401 V)")
        }
        let tiny = DRV260xDrive(chip: .drv2605l, actuator: .lra, ratedVoltage: 0.005, overdriveVoltage: 1)
        #expect(throws: DRV260xVoltageError.self) { try tiny.ratedVoltageCode() }
    }

    @Test("the set-up, byte for byte: out of standby with GO cleared, voltages, feedback, controls, library, RTP zero, standby")
    func setup() throws {
        let plan = try DRV260xPlan(drive: Self.lra)
        typealias W = DRV260x.Write
        #expect(
            plan.setup(calibration: nil) == [
                W(.mode, 0x00), W(.go, 0x00), W(.ratedVoltage, 0x53), W(.overdriveClamp, 0x72), W(.feedbackControl, 0xB6), W(.control1, 0x98),
                W(.control2, 0x75), W(.control3, 0x88), W(.control4, 0x20), W(.librarySelect, 0x06), W(.rtpInput, 0x00), W(.mode, 0x40),
            ])
        #expect(plan.setup(calibration: nil, backEMFGain: 1).contains(W(.feedbackControl, 0xB5)), "the chip's own gain kept")
        let calibration = DRV260xCalibration(compensation: 0x0D, backEMF: 0x7A, backEMFGain: 3, lraPeriod: 57)
        #expect(
            plan.setup(calibration: calibration, backEMFGain: 1) == [
                W(.mode, 0x00), W(.go, 0x00), W(.ratedVoltage, 0x53), W(.overdriveClamp, 0x72), W(.feedbackControl, 0xB7),
                W(.calibrationCompensation, 0x0D), W(.calibrationBackEMF, 0x7A), W(.control1, 0x98), W(.control2, 0x75), W(.control3, 0x88),
                W(.control4, 0x20), W(.librarySelect, 0x06), W(.rtpInput, 0x00), W(.mode, 0x40),
            ])
        #expect(plan.wake == [W(.mode, 0x05)])
        #expect(plan.sleep == [W(.rtpInput, 0x00), W(.mode, 0x40)])
        #expect(
            plan.calibration == [
                W(.mode, 0x07), W(.ratedVoltage, 0x53), W(.overdriveClamp, 0x72), W(.feedbackControl, 0xB6), W(.control1, 0x98), W(.control2, 0x75),
                W(.control3, 0x88), W(.control4, 0x20), W(.go, 0x01),
            ])
        // An ERM in open loop: bidirectional input, ERM_OPEN_LOOP, mid-scale zero.
        let erm = try DRV260xPlan(drive: DRV260xDrive(chip: .drv2605l, actuator: .erm, ratedVoltage: 3, overdriveVoltage: 3.5, loop: .open, library: .b))
        #expect(erm.control2 == 0xF5 && erm.control3 == 0xA8 && erm.feedbackControl() == 0x36)
        #expect(erm.sleep == [W(.rtpInput, 0x80), W(.mode, 0x40)])
        #expect(Array(erm.setup(calibration: nil).suffix(2)) == [W(.rtpInput, 0x80), W(.mode, 0x40)])
        #expect(erm.openLoopPeriodCode == nil && plan.openLoopPeriodCode == nil)
        // An LRA in open loop: OL_LRA_PERIOD from the resonance, 1 / (175 Hz × 98.46 µs) = 58.
        var openLRA = Self.lra
        openLRA.loop = .open
        let openPlan = try DRV260xPlan(drive: openLRA)
        #expect(openPlan.openLoopPeriodCode == 58 && openPlan.setup(calibration: nil).contains(W(.openLoopPeriod, 58)))
        #expect(openPlan.control3 == 0x89)
    }

    @Test("RTP codes: closed loop 0…255 from zero; open loop mid-scale zero to 0xFF; out-of-range and NaN clamped")
    func rtpCodes() throws {
        let closed = try DRV260xPlan(drive: Self.lra)
        #expect([0, 0.25, 0.5, 1, 2, -1, .nan].map { closed.rtpCode(level: $0) } == [0x00, 0x40, 0x80, 0xFF, 0xFF, 0x00, 0x00])
        var drive = Self.lra
        drive.loop = .open
        let open = try DRV260xPlan(drive: drive)
        #expect([0, 0.5, 1, -1].map { open.rtpCode(level: $0) } == [0x80, 0xC0, 0xFF, 0x80])
        #expect(open.zeroCode == 0x80 && closed.zeroCode == 0)
    }

    @Test("the ROM library: 123 unique names by the datasheet's table, ids and names both ways")
    func romNames() {
        #expect(ROMEffects.names.count == 123 && Set(ROMEffects.names).count == 123)
        let pinned: [(UInt8, String)] = [
            (1, "strong-click-100"), (3, "strong-click-30"), (12, "triple-click-100"), (13, "soft-fuzz-60"), (15, "alert-750ms-100"),
            (17, "strong-click-1-100"), (20, "strong-click-4-30"), (24, "sharp-tick-1-100"), (47, "buzz-1-100"), (51, "buzz-5-20"),
            (58, "transition-click-1-100"), (63, "transition-click-6-10"), (70, "transition-ramp-down-long-smooth-1-100-0"),
            (81, "transition-ramp-down-short-sharp-2-100-0"), (82, "transition-ramp-up-long-smooth-1-0-100"),
            (117, "transition-ramp-up-short-sharp-2-0-50"), (118, "long-buzz-for-programmatic-stopping-100"), (123, "smooth-hum-5-10"),
        ]
        for (id, name) in pinned {
            #expect(ROMEffects.name(of: id) == name)
            #expect(ROMEffects.id(named: name) == id)
        }
        #expect(ROMEffects.id(named: "47") == 47 && ROMEffects.id(named: "124") == nil && ROMEffects.id(named: "0") == nil)
        #expect(ROMEffects.name(of: 0) == nil && ROMEffects.name(of: 124) == nil)
    }

    @Test("sequences: effects and waits to WAVESEQ bytes, then GO; bad sequences are typed errors naming the step")
    func sequences() throws {
        let sequence = try ROMSequence(parsing: "strong-click-100,wait:100ms,sharp-click-60")
        #expect(sequence.steps.map(\.code) == [0x01, 0x8A, 0x05])
        #expect(sequence.description == "strong-click-100,wait:100ms,sharp-click-60")
        let plan = try DRV260xPlan(drive: Self.lra)
        #expect(
            plan.romSequence(sequence) == [
                .init(.mode, 0x00), .init(.librarySelect, 0x06), .init(address: 0x04, 0x01), .init(address: 0x05, 0x8A), .init(address: 0x06, 0x05),
                .init(address: 0x07, 0x00), .init(.go, 0x01),
            ])
        let full = try ROMSequence(parsing: "1 2 3 4 5 6 7 8")
        #expect(plan.romSequence(full).filter { $0.register == 0x0B } == [.init(address: 0x0B, 8)], "eight slots need no terminator")
        #expect(plan.romSequence(full).count == 1 + 1 + 8 + 1)
        let bad: [(String, String)] = [
            ("", "at least one effect"), ("1,2,3,4,5,6,7,8,9", "9 steps is more than the chip's 8"), ("wait:100ms", "only waits"),
            ("1,wait:5ms", "\"wait:5ms\" is not a wait"), ("1,wait:1280ms", "wait:10ms ... wait:1270ms"), ("strong-clack", "\"strong-clack\" is not a ROM effect"),
            ("124", "\"124\" is not a ROM effect"),
        ]
        for (text, message) in bad {
            #expect(throws: ROMSequenceError.self) { try ROMSequence(parsing: text) }
            do {
                _ = try ROMSequence(parsing: text)
            } catch {
                #expect(error.description.contains(message), "\(text): \(error)")
            }
        }
    }

    @Test("calibration values round-trip through their named form; bad stored values name the key and range")
    func calibrationValues() throws {
        let calibration = DRV260xCalibration(compensation: 13, backEMF: 122, backEMFGain: 2, lraPeriod: 57)
        #expect(try DRV260xCalibration(values: calibration.values) == calibration)
        #expect(abs(calibration.resonantFrequency! - 1 / (57 * 98.46e-6)) < 1e-9)
        let erm = DRV260xCalibration(compensation: 1, backEMF: 2, backEMFGain: 1)
        #expect(try DRV260xCalibration(values: erm.values) == erm && erm.values["lra_period"] == nil)
        for (values, message) in [
            (["a_cal_comp": 1.0, "a_cal_bemf": 2], "are all required"), (["a_cal_comp": 1, "a_cal_bemf": 2, "bemf_gain": 4], "bemf_gain = 4.0 is not a whole number in 0...3"),
            (["a_cal_comp": 1.5, "a_cal_bemf": 2, "bemf_gain": 1], "a_cal_comp = 1.5"), (["a_cal_comp": 1, "a_cal_bemf": 2, "bemf_gain": 1, "gain": 1], "unknown key \"gain\""),
        ] {
            do {
                _ = try DRV260xCalibration(values: values)
                Issue.record("\(values) was accepted")
            } catch {
                #expect(error.description.contains(message), "\(error)")
            }
        }
    }

    @Test("STATUS: device id, DIAG_RESULT and the latched faults, named")
    func status() {
        let status = DRV260x.Status(0xE3)
        #expect(status.deviceID == 7 && DRV260x.Chip(deviceID: 7) == .drv2605l && status.overTemperature && status.overCurrent && !status.diagnosticFailed)
        #expect(status.faults.count == 2 && status.faults[0].contains("OVER_TEMP") && status.faults[1].contains("OC_DETECT"))
        #expect(DRV260x.Status(0xE8).diagnosticFailed && DRV260x.Status(0xE0).faults.isEmpty)
        #expect(DRV260x.Chip(deviceID: 5) == nil && DRV260x.Chip.drv2604.hasROMLibrary == false && DRV260x.Chip.drv2605.libraries.contains(.f) == false)
    }
}

@Suite("Board files: actuators of topology i2c")
struct I2CBoardFileTests {
    static let base = """
        {"format": 1, "name": "pi", "actuators": [
          {"name": "lra", "topology": "i2c", "actuator": "lra", "i2c": {"bus": 1, "address": "0x5a", "chip": "drv2605l"},
           "drive": {"rated_voltage": 2.0, "overdrive_voltage": 2.5}, "limits": {"resonant_frequency_hz": 175, "max_continuous_ms": 5000}},
          {"name": "erm", "topology": "erm-transistor", "pwm": {"chip": "pwmchip0", "channel": 0, "frequency_hz": 20000},
           "limits": {"rated_level": 0.6, "max_continuous_ms": 5000}}]}
        """

    static func parse(_ text: String) throws(BoardFileError) -> BoardFile {
        try BoardFile.parse(Array(text.utf8), path: "/etc/haptics/boards.d/pi.json")
    }

    @Test("an I2C actuator beside a GPIO one: each goes to its own list, with its id, bus, drive and limits")
    func parses() throws {
        let board = try Self.parse(Self.base)
        #expect(board.actuators.map(\.name) == ["erm"])
        let lra = try #require(board.i2cActuators.first)
        #expect(board.deviceID(of: lra) == "i2c:pi:lra" && lra.busPath == "/dev/i2c-1" && lra.address == 0x5A && lra.clientName == "1-005a")
        #expect(lra.drive == DRV260xDrive(chip: .drv2605l, actuator: .lra, ratedVoltage: 2, overdriveVoltage: 2.5, resonantFrequency: 175, library: .lra))
        #expect(lra.limits.ratedLevel == 1 && lra.limits.maxContinuousNanoseconds == 5_000_000_000 && lra.limits.overdriveMaxNanoseconds == 0)
        // An ERM in open loop: the rated level is a fraction of the clamp, and the kick is bounded.
        let erm = try Self.parse(
            Self.base.replacingOccurrences(of: #""actuator": "lra", "i2c""#, with: #""actuator": "erm", "i2c""#)
                .replacingOccurrences(of: #""drive": {"rated_voltage": 2.0, "overdrive_voltage": 2.5}"#, with: #""drive": {"rated_voltage": 3.0, "overdrive_voltage": 3.6, "loop": "open", "library": "f", "unused": 1}"#)
                .replacingOccurrences(of: #", "unused": 1"#, with: "")
                .replacingOccurrences(of: #""resonant_frequency_hz": 175, "max_continuous_ms": 5000}"#, with: #""overdrive_max_ms": 40, "max_continuous_ms": 5000}"#)
                .replacingOccurrences(of: #""bus": 1"#, with: #""bus": "/dev/i2c-3""#)
        ).i2cActuators[0]
        #expect(erm.drive.library == .f && erm.drive.loop == .open && erm.busPath == "/dev/i2c-3")
        #expect(abs(erm.limits.ratedLevel - 3.0 / 3.6) < 1e-12 && erm.limits.overdriveMaxNanoseconds == 40_000_000)
    }

    @Test("bad I2C keys: each names the file, the key, the value and the fix", arguments: [
        (#""address": "0x5a""#, #""address": "0x5b""#, "$.actuators[0].i2c.address: 0x5b is not where a drv2605l answers: its address is fixed at 0x5a"),
        (#""address": "0x5a""#, #""address": "five""#, "$.actuators[0].i2c.address: is not a 7-bit I2C address"),
        (#""chip": "drv2605l""#, #""chip": "drv2625""#, "$.actuators[0].i2c.chip"),
        (#""bus": 1"#, #""bus": "/dev/spi-1""#, #"$.actuators[0].i2c.bus: "/dev/spi-1" is not an I2C bus"#),
        (#""bus": 1"#, #""bus": 4096"#, "$.actuators[0].i2c.bus"),
        (#""rated_voltage": 2.0"#, #""rated_voltage": 9"#, "$.actuators[0].drive.rated_voltage"),
        (#""overdrive_voltage": 2.5"#, #""overdrive_voltage": 1.5"#, "$.actuators[0].drive.overdrive_voltage: 1.5 V is below rated_voltage 2 V"),
        (#""overdrive_voltage": 2.5}"#, #""overdrive_voltage": 2.5, "library": "a"}"#, #"$.actuators[0].drive.library: "a" is an ERM library"#),
        (#""overdrive_voltage": 2.5}"#, #""overdrive_voltage": 2.5, "loop": "half"}"#, "$.actuators[0].drive.loop"),
        (#""i2c": {"#, #""gpio": {"chip": "gpiochip0"}, "i2c": {"#, "$.actuators[0].gpio.enable: required key is missing: the line wired to the chip's EN"),
        (#""i2c": {"#, #""gpio": {"enable": 17}, "i2c": {"#, #"$.actuators[0].gpio.chip: required key is missing (and the board sets no "gpio_chip")"#),
        (#""i2c": {"#, #""gpio": {"chip": "gpiochip0", "enable": 17, "direction": 18}, "i2c": {"#, "$.actuators[0].gpio.direction"),
        (#""i2c": {"#, #""pwm": {"channel": 0}, "i2c": {"#, #"$.actuators[0].pwm: topology i2c has no "pwm""#),
        (#""max_continuous_ms": 5000}},"#, #""max_continuous_ms": 5000, "overdrive_max_ms": 20}},"#, "$.actuators[0].limits.overdrive_max_ms: in closed loop the chip times its own overdrive"),
        (#""resonant_frequency_hz": 175, "#, #""resonant_frequency_hz": 5, "#, "$.actuators[0].limits.resonant_frequency_hz"),
        (#""resonant_frequency_hz": 175, "#, "", ""),
        (#""name": "erm""#, #""name": "lra""#, #"$.actuators[1].name: "lra" is already the name of $.actuators[0]"#),
        (#""drive": {"rated_voltage": 2.0, "overdrive_voltage": 2.5}, "#, "", "$.actuators[0].drive: required key is missing"),
    ])
    func badKeys(_ find: String, _ replacement: String, _ message: String) {
        let text = Self.base.replacingOccurrences(of: find, with: replacement)
        #expect(text != Self.base || find == replacement)
        do {
            _ = try Self.parse(text)
            #expect(message.isEmpty, "accepted: \(text)")
        } catch {
            #expect(!message.isEmpty && error.description.contains("/etc/haptics/boards.d/pi.json") && error.description.contains(message), "\(error)")
        }
    }

    @Test("EN on a GPIO line: parsed as the enable of a GPIO configuration; a line another actuator uses is refused")
    func enableLine() throws {
        let withEN = Self.base.replacingOccurrences(of: #""i2c": {"#, with: #""gpio": {"chip": "gpiochip0", "enable": "GPIO17"}, "i2c": {"#)
        let enable = try #require(try Self.parse(withEN).i2cActuators[0].enable)
        #expect(enable.chip == "gpiochip0" && enable.enable?.reference == .name("GPIO17") && enable.direction == nil)
        #expect(try Self.parse(Self.base).i2cActuators[0].enable == nil)
        let clash = Self.base.replacingOccurrences(of: #""i2c": {"#, with: #""gpio": {"chip": "gpiochip0", "enable": 5}, "i2c": {"#)
            .replacingOccurrences(
                of: #""name": "erm", "topology": "erm-transistor","#, with: #""name": "erm", "topology": "erm-transistor", "gpio": {"chip": "gpiochip0", "enable": 5},"#)
        do {
            _ = try Self.parse(clash)
            Issue.record("two actuators on one line were accepted")
        } catch {
            #expect(error.description.contains("line 5 of gpiochip0 is already used at"), "\(error)")
        }
    }

    @Test("open loop with overdrive above rated needs a kick bound; a voltage out of the register's reach; two actuators on one chip are refused")
    func openLoopAndSharing() {
        let erm = Self.base.replacingOccurrences(of: #""actuator": "lra", "i2c""#, with: #""actuator": "erm", "i2c""#)
            .replacingOccurrences(of: #""rated_voltage": 2.0, "overdrive_voltage": 2.5"#, with: #""rated_voltage": 5.45, "overdrive_voltage": 5.5"#)
            .replacingOccurrences(of: #""resonant_frequency_hz": 175, "#, with: "")
        do {
            _ = try Self.parse(erm)
            Issue.record("5.45 V on an ERM was accepted")
        } catch {
            #expect(error.description.contains("$.actuators[0].drive.rated_voltage: 5.45 V is outside what RATED_VOLTAGE can hold here (0.021...5.401 V)"), "\(error)")
        }
        let open = Self.base.replacingOccurrences(of: #""overdrive_voltage": 2.5}"#, with: #""overdrive_voltage": 2.5, "loop": "open"}"#)
        #expect(throws: BoardFileError.self) { try Self.parse(open) }
        let openOn2605 = open.replacingOccurrences(of: #""chip": "drv2605l""#, with: #""chip": "drv2605""#)
        do {
            _ = try Self.parse(openOn2605)
            Issue.record("an open-loop LRA on a drv2605 was accepted")
        } catch {
            #expect(error.description.contains("$.actuators[0].drive.loop: a drv2605 cannot drive an LRA in open loop (it has no OL_LRA_PERIOD)"), "\(error)")
        }
        let twice = Self.base.replacingOccurrences(
            of: #"{"name": "erm", "topology": "erm-transistor", "pwm": {"chip": "pwmchip0", "channel": 0, "frequency_hz": 20000},"#,
            with: #"{"name": "two", "topology": "i2c", "actuator": "erm", "i2c": {"bus": 1, "chip": "drv2605l"}, "drive": {"rated_voltage": 3, "overdrive_voltage": 3},"#
        ).replacingOccurrences(of: #""limits": {"rated_level": 0.6, "max_continuous_ms": 5000}"#, with: #""limits": {"max_continuous_ms": 5000}"#)
        do {
            _ = try Self.parse(twice)
            Issue.record("two actuators on one chip were accepted")
        } catch {
            #expect(error.description.contains("$.actuators[1].i2c.bus: /dev/i2c-1 address 0x5a is already $.actuators[0]'s chip"), "\(error)")
        }
    }

    @Test("the feedback vocabulary on the ROM: single taps only, each a vocabulary effect; the intensity picks the nearest strength; too weak or unmapped is nil")
    func feedbackMapping() throws {
        for mapping in FeedbackROM.mappings {
            let effect = try #require(FeedbackEffect.named(mapping.effect), "\(mapping.effect) is not in the vocabulary")
            #expect(effect.pattern.events.count == 1, "\(mapping.effect) is a single tap or bump")
            #expect(mapping.family.contains { $0.percent == mapping.nominal }, "\(mapping.effect): nominal \(mapping.nominal) % is a member")
            #expect(mapping.family.map(\.percent) == mapping.family.map(\.percent).sorted(by: >))
            #expect(!mapping.why.isEmpty)
        }
        // Another name of the same feedback is mapped as that feedback is, and plays the same pattern.
        for mapping in FeedbackROM.mappings where mapping.why.hasPrefix("as ") {
            let base = String(mapping.why.dropFirst(3).prefix { $0 != ":" })
            #expect(FeedbackEffect.named(mapping.effect)?.pattern == FeedbackEffect.named(base)?.pattern, "\(mapping.effect) as \(base)")
        }
        #expect(FeedbackROM.mappings.count == 42 && Set(FeedbackROM.mappings.map(\.effect)).count == 42)
        // Rhythms and ramps stay on RTP.
        for name in ["notification.success", "notification.error", "watch.directionUp", "watch.retry", "android.spin", "android.quickRise"] {
            #expect(FeedbackROM.sequence(for: name, scale: 1) == nil, "\(name)")
        }
        func played(_ effect: String, _ scale: Double) -> String? { FeedbackROM.sequence(for: effect, scale: scale)?.description }
        #expect(played("impact.heavy", 1) == "strong-click-100")
        #expect(played("impact.heavy", 0.5) == "strong-click-60")  // 50 %: 60 is nearer than 30 by ratio
        #expect(played("impact.heavy", 0.3) == "strong-click-30")
        #expect(played("impact.heavy", 0.23) == "strong-click-30")
        #expect(played("impact.heavy", 0.2) == nil, "20 % is below three quarters of the weakest click")
        #expect(played("impact.rigid", 1) == "sharp-click-100")
        #expect(played("impact.soft", 1) == "soft-bump-60")
        #expect(played("impact.medium", 1) == "medium-click-1-100")
        #expect(played("impact.light", 1) == "medium-click-3-60")
        #expect(played("selection", 1) == "sharp-tick-3-60")
        #expect(played("selection", 0.5) == nil)
        #expect(played("android.thud", 1) == "soft-bump-100")
        #expect(played("impact.heavy", 0) == nil && played("impact.heavy", .nan) == nil)
        #expect(played("impact.heavy", 7) == "strong-click-100", "a scale above 1 plays at full strength")
        #expect(FeedbackROM.sequence(for: "impact.heavy", scale: 1)?.steps == [.effect(1)])
    }
}
