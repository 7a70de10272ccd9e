import Foundation
import Glibc

extension PWMSim {
    /// One state a channel was given, with the `CLOCK_MONOTONIC` time it was applied.
    public struct Event: Sendable, Equatable, CustomStringConvertible {
        /// When the kernel applied it, `CLOCK_MONOTONIC` nanoseconds.
        public var time: UInt64
        /// The state applied.
        public var state: State

        /// `@3.319580563 s period 50000 ns, duty 0 ns, disabled, normal`.
        public var description: String {
            "@\(Double(time) / 1e9) s \(state)"
        }
    }

    /// The debugfs file where the module keeps each channel's last 128 applied states.
    public static let historyPath = "/sys/kernel/debug/pwm-sim/history"

    /// Every state `channel` was given since the module loaded or ``clearHistory(channel:)``,
    /// oldest first (the module keeps the last 128). The PWM core applies only changes, so
    /// consecutive events always differ.
    public func history(channel: Int) throws -> [Event] {
        guard (0..<channelCount).contains(channel) else {
            throw RigError.invalidArgument("channel \(channel) of \(chipPath), which has \(channelCount)")
        }
        let text = try SysFS.read(Self.historyPath)
        return try text.split(separator: "\n").compactMap { line -> Event? in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 6, let index = Int(fields[0]), let time = UInt64(fields[1]), let period = UInt64(fields[2]),
                let duty = UInt64(fields[3])
            else {
                throw RigError.invalidArgument("\(Self.historyPath): unexpected line \(line.debugDescription)")
            }
            guard index == channel else { return nil }
            return Event(
                time: time, state: State(period: period, dutyCycle: duty, enabled: fields[5] == "1", polarity: fields[4] == "1" ? "inversed" : "normal"))
        }
    }

    /// Forgets `channel`'s history.
    public func clearHistory(channel: Int) throws {
        try SysFS.write(Self.historyPath, String(channel))
    }
}
