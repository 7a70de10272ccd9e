import Foundation
import Glibc

/// The values the lines of one ``GPIOSim`` chip were driven to, in order, with their times: the
/// kernel's `gpio:gpio_value` trace event recorded in a private ftrace instance.
///
/// gpio-sim returns a released line to its pull, so after a process dies (or releases its lines)
/// ``GPIOSim/value(line:)`` no longer shows what it drove last; the trace does. Each trace has its
/// own instance (`/sys/kernel/tracing/instances/<unique>`), so tests can trace concurrently.
///
/// ```swift
/// let sim = try GPIOSim(lines: 4)
/// let trace = try GPIOValueTrace(chip: sim)
/// defer { try? trace.remove() }
/// // … the code under test drives line 2 high, then low …
/// #expect(try trace.events().map(\.value) == [1, 0])
/// ```
public final class GPIOValueTrace: Sendable {
    /// One value set on a line.
    public struct Event: Sendable, Equatable, CustomStringConvertible {
        /// `CLOCK_MONOTONIC` time in nanoseconds (the trace has microsecond resolution).
        public var time: UInt64
        /// The line's offset on the chip.
        public var line: Int
        /// The physical value set: 0 or 1.
        public var value: Int

        /// `@3.846157 s line 3 = 1`.
        public var description: String { "@\(Double(time) / 1e9) s line \(line) = \(value)" }
    }

    /// The trace instance's directory.
    public let instanceDirectory: String
    /// The chip's first global GPIO number (what the trace event reports).
    public let base: Int
    /// The chip's line count.
    public let lineCount: Int

    /// Starts tracing the lines of `chip`.
    public init(chip: GPIOSim) throws {
        let tracing = try Self.tracingRoot()
        let (base, count) = try Self.range(of: chip.chipName)
        self.base = base
        self.lineCount = count
        instanceDirectory = tracing + "/instances/" + VMRig.uniqueName("vmrig-gpio-trace")
        try SysFS.makeDirectory(instanceDirectory)
        do {
            try SysFS.write(instanceDirectory + "/trace_clock", "mono")
            let event = instanceDirectory + "/events/gpio/gpio_value"
            try SysFS.write(event + "/filter", "gpio >= \(base) && gpio < \(base + count) && get == 0")
            try SysFS.write(event + "/enable", "1")
        } catch {
            try? SysFS.removeDirectory(instanceDirectory)
            throw error
        }
    }

    deinit { try? remove() }

    /// The values set so far, oldest first.
    public func events() throws -> [Event] {
        try SysFS.read(instanceDirectory + "/trace").split(separator: "\n").compactMap { line -> Event? in
            guard !line.hasPrefix("#"), let marker = line.range(of: ": gpio_value: ") else { return nil }
            let fields = line[marker.upperBound...].split(separator: " ")
            let stamp = line[..<marker.lowerBound].split(separator: " ").last ?? ""
            let parts = stamp.split(separator: ".")
            guard fields.count == 3, fields[1] == "set", let gpio = Int(fields[0]), let value = Int(fields[2]), parts.count == 2,
                let seconds = UInt64(parts[0]), let micros = UInt64(parts[1])
            else {
                throw RigError.invalidArgument("unexpected trace line \(String(line).debugDescription)")
            }
            return Event(time: seconds * 1_000_000_000 + micros * 1_000, line: gpio - base, value: value)
        }
    }

    /// The values set on `line`, oldest first.
    public func values(line: Int) throws -> [Int] {
        try events().filter { $0.line == line }.map(\.value)
    }

    /// Stops tracing and removes the instance (idempotent).
    public func remove() throws {
        guard SysFS.exists(instanceDirectory) else { return }
        try? SysFS.write(instanceDirectory + "/events/gpio/gpio_value/enable", "0")
        try SysFS.removeDirectory(instanceDirectory)
    }

    /// Where tracefs is: debugfs's automount, `/sys/kernel/tracing`, or mounted there now.
    static func tracingRoot() throws -> String {
        for candidate in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] where SysFS.exists(candidate + "/instances") {
            return candidate
        }
        guard mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nil) == 0 || SysFS.exists("/sys/kernel/tracing/instances") else {
            throw RigError.system(operation: "mount tracefs on", path: "/sys/kernel/tracing", errno: errno)
        }
        return "/sys/kernel/tracing"
    }

    /// The global GPIO numbers of `chipName` from `/sys/kernel/debug/gpio`
    /// (`gpiochip1: GPIOs 1016-1023, parent: platform/gpio-sim.0, …`).
    static func range(of chipName: String) throws -> (base: Int, count: Int) {
        let text = try SysFS.read("/sys/kernel/debug/gpio")
        for line in text.split(separator: "\n") where line.hasPrefix(chipName + ": GPIOs ") {
            let numbers = line.dropFirst(chipName.count + ": GPIOs ".count).prefix(while: { $0 != "," }).split(separator: "-")
            if numbers.count == 2, let first = Int(numbers[0]), let last = Int(numbers[1]) { return (first, last - first + 1) }
        }
        throw RigError.notFound(what: "\(chipName) in /sys/kernel/debug/gpio")
    }
}
