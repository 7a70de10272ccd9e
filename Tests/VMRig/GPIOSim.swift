import Foundation
import Glibc
import Synchronization

/// A simulated GPIO chip made with `gpio-sim` through configfs, for tests inside the VM rig.
///
/// Each instance has a unique name, so tests can make chips concurrently. The chip behaves like
/// real hardware for the code under test (`/dev/gpiochipN`, libgpiod); the test reads what a
/// line is driven to through ``value(line:)`` and sets what an input line reads through
/// ``setPull(line:_:)``. gpio-sim returns a released line to its pull, so read ``value(line:)``
/// while the code under test still holds the line.
///
/// ```swift
/// let sim = try GPIOSim(lines: 8)
/// let chip = gpiod_chip_open(sim.devicePath)   // drive line 3 high through libgpiod …
/// #expect(try sim.value(line: 3) == 1)
/// ```
public final class GPIOSim: Sendable {
    /// A line's pull, which is what an input line reads and where a released line goes.
    public enum Pull: String, Sendable {
        /// Reads 0.
        case down = "pull-down"
        /// Reads 1.
        case up = "pull-up"
    }

    /// The configfs object name, `/sys/kernel/config/gpio-sim/<name>`.
    public let name: String
    /// The chip's label (what `gpiodetect` and `gpiod_chip_label` show).
    public let label: String
    /// The number of lines.
    public let lineCount: Int
    /// The GPIO chip name, e.g. `gpiochip1`.
    public let chipName: String
    /// The character device, e.g. `/dev/gpiochip1`.
    public let devicePath: String
    /// The platform device name, e.g. `gpio-sim.0`.
    public let deviceName: String

    private let configDirectory: String
    private let lineNames: [String?]
    private let removed = Mutex(false)

    /// The configfs root of gpio-sim.
    public static let configfsRoot = "/sys/kernel/config/gpio-sim"

    /// Creates and enables a chip with `lines` lines (loads `gpio-sim` if needed).
    ///
    /// - Parameters:
    ///   - lines: number of lines (1…).
    ///   - label: the chip label; default: a unique `vmrig-…` label.
    ///   - lineNames: optional names of lines 0…, as a device tree would give them.
    /// - Throws: ``RigError`` if the module or a configfs write fails.
    public init(lines: Int = 8, label: String? = nil, lineNames: [String?] = []) throws {
        guard lines > 0 else { throw RigError.invalidArgument("a gpio-sim chip needs at least one line") }
        try VMRig.loadKernelModule("gpio-sim")
        if !SysFS.exists(Self.configfsRoot) {
            throw RigError.notFound(what: "\(Self.configfsRoot) (configfs not mounted at /sys/kernel/config?)")
        }
        let name = VMRig.uniqueName("vmrig-gpio")
        let dir = Self.configfsRoot + "/" + name
        self.name = name
        self.label = label ?? name
        self.lineCount = lines
        self.configDirectory = dir
        self.lineNames = lineNames
        do {
            try SysFS.makeDirectory(dir)
            try SysFS.makeDirectory(dir + "/bank0")
            try SysFS.write(dir + "/bank0/num_lines", String(lines))
            try SysFS.write(dir + "/bank0/label", self.label)
            for (index, lineName) in lineNames.enumerated() {
                guard let lineName else { continue }
                try SysFS.makeDirectory(dir + "/bank0/line\(index)")
                try SysFS.write(dir + "/bank0/line\(index)/name", lineName)
            }
            try SysFS.write(dir + "/live", "1")
            let chip = try SysFS.value(dir + "/bank0/chip_name")
            self.chipName = chip
            self.devicePath = "/dev/" + chip
            self.deviceName = try SysFS.value(dir + "/dev_name")
            _ = try SysFS.wait(for: "\(devicePath) to appear", timeout: .seconds(5)) {
                SysFS.exists("/dev/" + chip) ? true : nil
            }
        } catch {
            Self.tearDown(dir, lineNames: lineNames)
            throw error
        }
    }

    deinit {
        try? remove()
    }

    /// The sysfs directory of line `line`: `/sys/devices/platform/<dev>/<chip>/sim_gpio<line>`.
    public func linePath(_ line: Int) -> String {
        "/sys/devices/platform/\(deviceName)/\(chipName)/sim_gpio\(line)"
    }

    /// What line `line` is at: the value the code under test drives on an output line, else the pull.
    public func value(line: Int) throws -> Int {
        try checkLine(line)
        return Int(try SysFS.integer(linePath(line) + "/value"))
    }

    /// The values of all lines.
    public func values() throws -> [Int] {
        try (0..<lineCount).map { try value(line: $0) }
    }

    /// Sets what input line `line` reads (and where it returns when released).
    public func setPull(line: Int, _ pull: Pull) throws {
        try checkLine(line)
        try SysFS.write(linePath(line) + "/pull", pull.rawValue)
    }

    /// The pull of line `line`.
    public func pull(line: Int) throws -> Pull {
        try checkLine(line)
        let text = try SysFS.value(linePath(line) + "/pull")
        guard let pull = Pull(rawValue: text) else {
            throw RigError.invalidArgument("\(linePath(line))/pull holds \(text.debugDescription)")
        }
        return pull
    }

    /// Disables and deletes the chip (idempotent). Lines still requested by the code under test
    /// are released by the kernel.
    public func remove() throws {
        let first = removed.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        var liveError: (any Error)?
        do { try SysFS.write(configDirectory + "/live", "0") } catch { liveError = error }
        Self.tearDown(configDirectory, lineNames: lineNames)
        if SysFS.exists(configDirectory) {
            throw liveError ?? RigError.system(operation: "rmdir", path: configDirectory, errno: EBUSY)
        }
    }

    private func checkLine(_ line: Int) throws {
        guard (0..<lineCount).contains(line) else {
            throw RigError.invalidArgument("line \(line) of \(name), which has \(lineCount) lines")
        }
    }

    private static func tearDown(_ dir: String, lineNames: [String?]) {
        if SysFS.exists(dir + "/live") { try? SysFS.write(dir + "/live", "0") }
        for (index, lineName) in lineNames.enumerated() where lineName != nil {
            try? SysFS.removeDirectory(dir + "/bank0/line\(index)")
        }
        try? SysFS.removeDirectory(dir + "/bank0")
        try? SysFS.removeDirectory(dir)
    }
}
