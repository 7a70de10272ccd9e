import CGpiodShim
import GPIOBoards
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where the backend finds hardware: the sysfs root for PWM and the directory of GPIO chips.
public struct HardwarePaths: Sendable, Hashable {
    /// The sysfs root (`gpio.sysfs-root`, default `/sys`).
    public var sysfsRoot: String
    /// Where chip names are looked up (`gpio.chip-path`, default `/dev`).
    public var chipDirectory: String

    /// Paths.
    public init(sysfsRoot: String, chipDirectory: String) {
        self.sysfsRoot = sysfsRoot
        self.chipDirectory = chipDirectory
    }

    /// The path of a board file's chip (`gpiochip0` → `/dev/gpiochip0`; absolute paths stay).
    public func chipPath(_ chip: String) -> String {
        chip.hasPrefix("/") ? chip : (chipDirectory.hasSuffix("/") ? chipDirectory : chipDirectory + "/") + chip
    }
}

extension GPIOLines {
    /// Requests the lines of `gpio` inactive, resolving names and checking offsets first.
    public static func request(_ gpio: GPIOConfig, consumer: String, paths: HardwarePaths, place: String) throws(BackendFailure) -> GPIOLines {
        let chipPath = paths.chipPath(gpio.chip)
        let chip: (lines: Int, label: String)
        do {
            chip = try Self.chipInfo(chipPath)
        } catch {
            throw BackendFailure(code: error.errno, "\(place): \(gpio.chipKey): GPIO chip \(chipPath): \(error.text)" + chipHint(error.errno, paths: paths))
        }
        var resolved: [(role: LineRole, offset: UInt32, activeLow: Bool)] = []
        for (role, line) in gpio.lines {
            let offset: UInt32
            switch line.reference {
            case .offset(let number):
                guard number < chip.lines else {
                    throw BackendFailure(
                        code: EINVAL,
                        "\(place): \(line.key): line \(number) does not exist on \(chipPath) (\"\(chip.label)\", \(chip.lines) lines: 0...\(chip.lines - 1))")
                }
                offset = UInt32(number)
            case .name(let name):
                do {
                    offset = try Self.offset(named: name, chip: chipPath)
                } catch {
                    throw BackendFailure(
                        code: error.errno == ENOENT ? EINVAL : error.errno,
                        "\(place): \(line.key): \(chipPath) (\"\(chip.label)\") has no line named \"\(name)\"" + (error.errno == ENOENT ? " (see `gpioinfo`)" : ": \(error.text)"))
                }
            }
            resolved.append((role, offset, line.activeLow))
        }
        do {
            return try GPIOLines(chipPath: chipPath, consumer: String(decoding: consumer.utf8.prefix(Int(GPIOD_SHIM_NAME_SIZE) - 1), as: UTF8.self), lines: resolved)
        } catch {
            if error.errno == EBUSY {
                for (index, entry) in resolved.enumerated() {
                    if let user = Self.consumer(of: entry.offset, chip: chipPath) {
                        let key = gpio.lines[index].line.key
                        throw BackendFailure(
                            code: EBUSY,
                            "\(place): \(key): line \(entry.offset) of \(chipPath) is already in use by \"\(user.isEmpty ? "an unnamed consumer" : user)\"; free it or choose another line")
                    }
                }
            }
            throw BackendFailure(code: error.errno, "\(place): \(gpio.chipKey): cannot request lines of \(chipPath): \(error.text)" + chipHint(error.errno, paths: paths))
        }
    }

    private static func chipHint(_ code: Int32, paths: HardwarePaths) -> String {
        switch code {
        case EACCES, EPERM:
            return " (permission denied: add the user to the gpio group or install the udev rule in Hardware/gpio/README.md)"
        case ENOENT:
            let present = chips(in: paths.chipDirectory)
            return present.isEmpty ? " (no GPIO chip in \(paths.chipDirectory))" : " (chips present: \(present.joined(separator: ", ")); see `gpiodetect`)"
        default:
            return ""
        }
    }

    private static func chips(in directory: String) -> [String] {
        directoryEntries(atPath: directory).filter { $0.hasPrefix("gpiochip") }
    }

}
