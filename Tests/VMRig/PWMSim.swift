import Foundation
import Glibc
import Synchronization

/// The project's simulated PWM chip (`Scripts/vm/pwm-sim`), for tests inside the VM rig.
///
/// The module registers one platform device `pwm-sim` with ``channelCount`` channels whose
/// hardware does exactly what it is told, so `/sys/class/pwm/pwmchipN` behaves like a real
/// chip. Tests running at the same time should use different channels:
/// ``claimChannel()`` hands them out.
///
/// ```swift
/// let pwm = try PWMSim.load()
/// let channel = try pwm.claimChannel()
/// // … the code under test exports and configures pwm.chipPath/pwm<channel> …
/// #expect(try pwm.state(channel: channel) == PWMSim.State(period: 50_000, dutyCycle: 25_000, enabled: true))
/// ```
public struct PWMSim: Sendable {
    /// One channel's state.
    public struct State: Sendable, Equatable, CustomStringConvertible {
        /// Period in nanoseconds.
        public var period: UInt64
        /// Duty cycle in nanoseconds.
        public var dutyCycle: UInt64
        /// Whether the output is enabled.
        public var enabled: Bool
        /// `"normal"` or `"inversed"`.
        public var polarity: String

        /// Creates a state.
        public init(period: UInt64, dutyCycle: UInt64, enabled: Bool, polarity: String = "normal") {
            self.period = period
            self.dutyCycle = dutyCycle
            self.enabled = enabled
            self.polarity = polarity
        }

        /// E.g. `period 50000 ns, duty 12500 ns, enabled, inversed`.
        public var description: String {
            "period \(period) ns, duty \(dutyCycle) ns, \(enabled ? "enabled" : "disabled"), \(polarity)"
        }
    }

    /// The chip's sysfs directory, e.g. `/sys/class/pwm/pwmchip0`.
    public let chipPath: String
    /// The number of channels (`npwm`).
    public let channelCount: Int

    /// How many channels the rig loads the module with.
    public static let defaultChannelCount = 16
    private static let claimed = Mutex<Set<Int>>([])

    /// Loads `pwm-sim` (once, with ``defaultChannelCount`` channels) and finds its chip.
    public static func load() throws -> PWMSim {
        try VMRig.loadKernelModule("pwm-sim", parameters: ["channels=\(defaultChannelCount)"])
        let chip = try SysFS.wait(for: "the pwm-sim chip in /sys/class/pwm", timeout: .seconds(5)) { () -> String? in
            for entry in (try? SysFS.list("/sys/class/pwm")) ?? [] where entry.hasPrefix("pwmchip") {
                let link = (try? SysFS.readLink("/sys/class/pwm/\(entry)/device")) ?? ""
                if link.hasSuffix("/pwm-sim") { return "/sys/class/pwm/" + entry }
            }
            return nil
        }
        let count = Int(try SysFS.integer(chip + "/npwm"))
        return PWMSim(chipPath: chip, channelCount: count)
    }

    /// Reserves a channel no other test in this process has claimed.
    /// - Throws: ``RigError/notFound(what:)`` when all are taken.
    public func claimChannel() throws -> Int {
        try Self.claimed.withLock { taken in
            guard let free = (0..<channelCount).first(where: { !taken.contains($0) }) else {
                throw RigError.notFound(what: "a free pwm-sim channel (all \(channelCount) claimed)")
            }
            taken.insert(free)
            return free
        }
    }

    /// Gives a claimed channel back.
    public func releaseChannel(_ channel: Int) {
        _ = Self.claimed.withLock { $0.remove(channel) }
    }

    /// The channel's sysfs directory (exists after ``export(channel:)``), e.g. `…/pwmchip0/pwm3`.
    public func channelPath(_ channel: Int) -> String {
        "\(chipPath)/pwm\(channel)"
    }

    /// Exports `channel` through sysfs (idempotent).
    public func export(channel: Int) throws {
        try checkChannel(channel)
        if SysFS.exists(channelPath(channel)) { return }
        do {
            try SysFS.write(chipPath + "/export", String(channel))
        } catch RigError.system(_, _, EBUSY) {
            // Exported meanwhile by someone else: fine.
        }
        _ = try SysFS.wait(for: "\(channelPath(channel))", timeout: .seconds(5)) {
            SysFS.exists(channelPath(channel) + "/enable") ? true : nil
        }
    }

    /// Unexports `channel` (idempotent).
    public func unexport(channel: Int) throws {
        try checkChannel(channel)
        guard SysFS.exists(channelPath(channel)) else { return }
        try SysFS.write(chipPath + "/unexport", String(channel))
    }

    /// Configures an exported `channel` through sysfs the way a driver would: disable, period,
    /// duty cycle, polarity, enable.
    public func configure(channel: Int, _ state: State) throws {
        try export(channel: channel)
        let dir = channelPath(channel)
        // A channel never configured has period 0, and the PWM core refuses any state with period 0
        // (disabling included): disable only what runs.
        if try SysFS.integer(dir + "/enable") != 0 { try SysFS.write(dir + "/enable", "0") }
        // The period must stay ≥ the duty cycle at every step.
        if try SysFS.integer(dir + "/duty_cycle") > Int64(state.period) {
            try SysFS.write(dir + "/duty_cycle", "0")
        }
        try SysFS.write(dir + "/period", String(state.period))
        try SysFS.write(dir + "/duty_cycle", String(state.dutyCycle))
        try SysFS.write(dir + "/polarity", state.polarity)
        if state.enabled { try SysFS.write(dir + "/enable", "1") }
    }

    /// Reads back an exported `channel`'s period, duty_cycle, enable and polarity through sysfs.
    public func state(channel: Int) throws -> State {
        try checkChannel(channel)
        let dir = channelPath(channel)
        guard SysFS.exists(dir) else { throw RigError.notFound(what: "\(dir) (channel not exported)") }
        return State(
            period: UInt64(try SysFS.integer(dir + "/period")),
            dutyCycle: UInt64(try SysFS.integer(dir + "/duty_cycle")),
            enabled: try SysFS.integer(dir + "/enable") != 0,
            polarity: try SysFS.value(dir + "/polarity"))
    }

    /// The channel's state as `/sys/kernel/debug/pwm` shows it (the chip's view, also for a
    /// channel requested by a kernel consumer rather than exported), or `nil` if debugfs is absent.
    ///
    /// The line looks like ` pwm-3   (sysfs               ): requested enabled period: 50000 ns duty: 25000 ns polarity: normal`.
    public func debugState(channel: Int) throws -> State? {
        try checkChannel(channel)
        guard let text = try? SysFS.read("/sys/kernel/debug/pwm") else { return nil }
        let chipDevice = (try? SysFS.readLink(chipPath + "/device")).flatMap { $0.split(separator: "/").last } ?? "pwm-sim"
        var inChip = false
        for line in text.split(separator: "\n") {
            if !line.hasPrefix(" ") {
                inChip = line.contains("/\(chipDevice),")
                continue
            }
            guard inChip, line.trimmingCharacters(in: .whitespaces).hasPrefix("pwm-\(channel) ") else { continue }
            guard let match = line.firstMatch(of: /period: (\d+) ns duty: (\d+) ns polarity: (\w+)/) else { return nil }
            return State(
                period: UInt64(match.1) ?? 0, dutyCycle: UInt64(match.2) ?? 0,
                enabled: line.contains(" enabled"),
                polarity: match.3 == "inverse" ? "inversed" : String(match.3))  // debugfs says "inverse"
        }
        return nil
    }

    private func checkChannel(_ channel: Int) throws {
        guard (0..<channelCount).contains(channel) else {
            throw RigError.invalidArgument("channel \(channel) of \(chipPath), which has \(channelCount)")
        }
    }
}
