import Foundation
import GPIOBoards
import Testing

/// The kernel's acceptance rule for one sysfs PWM write (drivers/pwm/core.c, `pwm_apply_state`):
/// the whole resulting state must have a non-zero period and a duty cycle no larger than it; and,
/// as many drivers do, the polarity of a running output may not change.
enum KernelPWMRules {
    static func accepts(_ write: PWMWrite, on state: PWMState) -> Bool {
        let next = write.applied(to: state)
        if case .polarity = write, state.enabled { return false }
        return next.periodNanoseconds > 0 && next.dutyNanoseconds <= next.periodNanoseconds
    }
}

@Suite("GPIO: sysfs PWM writes come in an order the kernel accepts")
struct GPIOPWMWritePlanTests {
    func state(_ period: UInt64, _ duty: UInt64, _ enabled: Bool, _ polarity: PWMPolarity = .normal) -> PWMState {
        PWMState(periodNanoseconds: period, dutyNanoseconds: duty, polarity: polarity, enabled: enabled)
    }

    @Test("a fresh channel: period first, then duty, polarity, enable")
    func freshChannel() {
        let writes = PWMWritePlan.writes(from: .unconfigured, to: state(50_000, 25_000, true, .inversed))
        #expect(writes == [.period(50_000), .dutyCycle(25_000), .polarity(.inversed), .enable(true)])
    }

    @Test("a duty cycle larger than the old period is written after the period")
    func growPeriod() {
        #expect(PWMWritePlan.writes(from: state(5_000, 2_000, true), to: state(8_000, 6_000, true)) == [.period(8_000), .dutyCycle(6_000)])
    }

    @Test("a period shorter than the old duty cycle is written after the duty cycle")
    func shrinkPeriod() {
        #expect(PWMWritePlan.writes(from: state(8_000, 6_000, true), to: state(5_000, 2_000, true)) == [.dutyCycle(2_000), .period(5_000)])
    }

    @Test("stopping lowers the duty cycle, then disables")
    func stopping() {
        #expect(PWMWritePlan.writes(from: state(50_000, 40_000, true), to: state(50_000, 0, false)) == [.dutyCycle(0), .enable(false)])
    }

    @Test("a polarity change disables a running output first and enables it last")
    func polarityChange() {
        #expect(
            PWMWritePlan.writes(from: state(50_000, 10_000, true), to: state(50_000, 10_000, true, .inversed))
                == [.enable(false), .polarity(.inversed), .enable(true)])
    }

    @Test("nothing changes, nothing is written; a target without a period writes nothing")
    func noChange() {
        #expect(PWMWritePlan.writes(from: state(50_000, 10_000, true), to: state(50_000, 10_000, true)).isEmpty)
        #expect(PWMWritePlan.writes(from: .unconfigured, to: .unconfigured).isEmpty)
    }

    @Test("from any state to any valid state: every write is accepted and the target is reached (2000 random pairs)")
    func randomTransitions() {
        var generator = SplitMix64(seed: 0x5EED)
        let periods: [UInt64] = [0, 1_000, 5_714_286, 7_692_308, 50_000, 40_000]
        func randomState(allowUnconfigured: Bool) -> PWMState {
            var period = periods[Int(generator.next() % UInt64(periods.count))]
            if !allowUnconfigured, period == 0 { period = 20_000 }
            let duty = period == 0 ? 0 : generator.next() % (period + 1)
            return state(period, duty, period > 0 && generator.next() % 2 == 0, generator.next() % 3 == 0 ? .inversed : .normal)
        }
        for _ in 0..<2_000 {
            let from = randomState(allowUnconfigured: true)
            let to = randomState(allowUnconfigured: false)
            var current = from
            for write in PWMWritePlan.writes(from: from, to: to) {
                #expect(KernelPWMRules.accepts(write, on: current), "\(write) refused on \(current) (from \(from) to \(to))")
                current = write.applied(to: current)
            }
            #expect(current == to, "from \(from) to \(to) ended at \(current)")
        }
    }
}

/// A deterministic generator for the property test.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A sysfs PWM tree in a plain directory: `class/pwm/pwmchip0/{npwm,export,unexport}` and, for
/// exported channels, `pwmN/{period,duty_cycle,polarity,enable}`.
struct PWMTree {
    let root: String
    var chip: String { root + "/class/pwm/pwmchip0" }

    init(channels: Int = 2, exported: [Int: PWMState] = [:]) throws {
        root = TestSupport.makeTemporaryDirectory("gpio-sysfs")
        try FileManager.default.createDirectory(atPath: root + "/class/pwm/pwmchip0", withIntermediateDirectories: true)
        try Self.put(chip + "/npwm", "\(channels)\n")
        try Self.put(chip + "/export", "")
        try Self.put(chip + "/unexport", "")
        for (channel, state) in exported { try export(channel, state) }
    }

    func export(_ channel: Int, _ state: PWMState = .unconfigured) throws {
        let directory = chip + "/pwm\(channel)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.put(directory + "/period", "\(state.periodNanoseconds)\n")
        try Self.put(directory + "/duty_cycle", "\(state.dutyNanoseconds)\n")
        try Self.put(directory + "/polarity", "\(state.polarity.rawValue)\n")
        try Self.put(directory + "/enable", state.enabled ? "1\n" : "0\n")
    }

    static func put(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    func read(_ relative: String) throws -> String {
        try String(contentsOfFile: chip + "/" + relative, encoding: .utf8)
    }
}

@Suite("GPIO: the sysfs PWM channel driver on a directory tree")
struct GPIOSysfsPWMTreeTests {
    @Test("an exported channel left running (a killed process) is taken over; apply writes the attributes; close stops and unexports")
    func takeOverApplyClose() throws {
        let leftover = PWMState(periodNanoseconds: 50_000, dutyNanoseconds: 40_000, enabled: true)
        let tree = try PWMTree(exported: [1: leftover])
        let channel = try SysfsPWMChannel(root: tree.root, chip: "pwmchip0", channel: 1)
        #expect(channel.state == leftover)
        #expect(channel.directory == tree.chip + "/pwm1")
        #expect(try tree.read("export") == "")  // already exported: no export write
        try channel.stop()
        #expect(try tree.read("pwm1/duty_cycle") == "0")
        #expect(try tree.read("pwm1/enable") == "0")
        try channel.apply(PWMState(periodNanoseconds: 20_000, dutyNanoseconds: 5_000, polarity: .inversed, enabled: true))
        #expect(try tree.read("pwm1/period") == "20000")
        #expect(try tree.read("pwm1/duty_cycle") == "5000")
        #expect(try tree.read("pwm1/polarity") == "inversed")
        #expect(try tree.read("pwm1/enable") == "1")
        #expect(try SysfsPWMChannel.readState(tree.chip + "/pwm1") == channel.state)
        channel.close()
        #expect(try tree.read("pwm1/duty_cycle") == "0")
        #expect(try tree.read("pwm1/enable") == "0")
        #expect(try tree.read("unexport") == "1")
        channel.close()  // idempotent
    }

    @Test("a channel that is not exported is exported; if it never appears the error names the path")
    func exportTimesOut() throws {
        let tree = try PWMTree()
        let error = #expect(throws: SysfsPWMError.self) {
            try SysfsPWMChannel(root: tree.root, chip: "pwmchip0", channel: 0, exportTimeout: 30_000_000)
        }
        #expect(try tree.read("export") == "0")
        #expect(error?.path == tree.chip + "/pwm0")
        #expect(error?.description.contains("the channel did not appear after writing 0 to \(tree.chip)/export") == true, "\(String(describing: error))")
    }

    @Test("a channel beyond npwm and a missing chip are named with what exists")
    func missingChannelAndChip() throws {
        let tree = try PWMTree(channels: 2)
        let channel = #expect(throws: SysfsPWMError.self) { try SysfsPWMChannel(root: tree.root, chip: "pwmchip0", channel: 5) }
        #expect(channel?.errno == ENODEV)
        #expect(channel?.description == "cannot use channel 5 of \(tree.chip): \(String(cString: strerror(ENODEV))) (the chip has 2 channels (npwm = 2): channel 5 does not exist)")
        let chip = #expect(throws: SysfsPWMError.self) { try SysfsPWMChannel(root: tree.root, chip: "pwmchip3", channel: 0) }
        #expect(chip?.path == tree.root + "/class/pwm/pwmchip3")
        #expect(chip?.description.contains("no such PWM chip; present: pwmchip0") == true, "\(String(describing: chip))")
    }

    @Test("a channel is locked: a second open fails with EWOULDBLOCK until the first closes")
    func exclusive() throws {
        let tree = try PWMTree(exported: [0: .unconfigured])
        let first = try SysfsPWMChannel(root: tree.root, chip: "pwmchip0", channel: 0)
        let second = #expect(throws: SysfsPWMError.self) { try SysfsPWMChannel(root: tree.root, chip: "pwmchip0", channel: 0) }
        #expect(second?.errno == EWOULDBLOCK)
        #expect(second?.description.contains("in use by another haptics process") == true)
        first.close()
        try tree.export(0)  // the unexport of a plain tree removes nothing: put the files back as the kernel would
        let third = try SysfsPWMChannel(root: tree.root, chip: "pwmchip0", channel: 0)
        third.close()
    }

    @Test("a failed write names the attribute, the value and the errno")
    func failedWrite() throws {
        let tree = try PWMTree(exported: [0: .unconfigured])
        let channel = try SysfsPWMChannel(root: tree.root, chip: "pwmchip0", channel: 0)
        defer { channel.close() }
        try FileManager.default.removeItem(atPath: tree.chip + "/pwm0/period")
        try FileManager.default.createDirectory(atPath: tree.chip + "/pwm0/period", withIntermediateDirectories: false)
        let error = #expect(throws: SysfsPWMError.self) { try channel.apply(PWMState(periodNanoseconds: 1_000, dutyNanoseconds: 0, enabled: true)) }
        #expect(error?.description == "cannot write \"1000\" to \(tree.chip)/pwm0/period: \(String(cString: strerror(EISDIR)))")
        #expect(channel.state == .unconfigured)  // nothing applied
    }
}
