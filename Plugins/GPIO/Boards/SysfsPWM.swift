#if canImport(Glibc)
import Glibc
import HapticsSupport
#endif

/// A sysfs PWM operation that failed: the path, what was done, the errno, and a hint.
public struct SysfsPWMError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sysfs path concerned (`/sys/class/pwm/pwmchip0/pwm3/period`).
    public var path: String
    /// What was being done: `write "50000" to`, `read`, `lock`.
    public var operation: String
    /// The errno value (0 when the problem is not a failed call, e.g. a channel out of range).
    public var errno: Int32
    /// What the problem is or how to fix it, if known.
    public var hint: String?

    /// An error.
    public init(path: String, operation: String, errno: Int32, hint: String? = nil) {
        self.path = path
        self.operation = operation
        self.errno = errno
        self.hint = hint
    }

    public var description: String {
        var text = "cannot \(operation) \(path)"
        if errno != 0 { text += ": \(String(cString: strerror(errno)))" }
        if let hint { text += " (\(hint))" }
        return text
    }
}

/// The permission hint for sysfs PWM files.
let pwmPermissionHint =
    "permission denied: run as root or give the gpio group access to /sys/class/pwm with the udev rule in Hardware/gpio/README.md"

/// One sysfs PWM channel, exported and locked by this process: the one owner of the export and the
/// lock, released exactly once by ``close()``.
///
/// The layout is the kernel's (`Documentation/ABI/testing/sysfs-class-pwm`) under a configurable
/// root: `<root>/class/pwm/pwmchipN/{npwm,export,unexport}` and `pwmchipN/pwmM/{period,duty_cycle,
/// polarity,enable}`, times in nanoseconds. A plain directory tree with those files works too
/// (tests), as long as the channel directory exists or appears after the export.
///
/// Opening exports the channel if needed (a channel left exported by a killed process is taken
/// over) and takes an exclusive `flock` on the channel directory, so two processes never drive one
/// channel; the lock goes with the process. ``apply(_:)`` writes only what changes, in the order
/// ``PWMWritePlan`` gives. ``close()`` stops the output, unexports and unlocks.
///
/// Not thread-safe: its owner serialises calls.
public final class SysfsPWMChannel {
    /// The chip's directory, `<root>/class/pwm/pwmchipN`.
    public let chipDirectory: String
    /// The channel number.
    public let channel: Int
    /// The channel's directory, `<chip>/pwmM`.
    public let directory: String
    /// The state as last read or written.
    public private(set) var state: PWMState
    private var lockDescriptor: Int32
    private var closed = false

    /// The chip directory of `chip` (`pwmchip0`) under the sysfs root `root` (`/sys`).
    public static func chipDirectory(root: String, chip: String) -> String {
        (root.hasSuffix("/") ? String(root.dropLast()) : root) + "/class/pwm/" + chip
    }

    /// Exports (if needed), locks and reads `channel` of `chip` under `root`.
    /// - Parameter exportTimeout: how long to wait for the channel directory (and, for non-root
    ///   users, udev's permission change) after exporting, in nanoseconds.
    /// - Throws: ``SysfsPWMError``: no such chip or channel, permission denied, channel in use by
    ///   another process, or an unreadable attribute.
    public init(root: String, chip: String, channel: Int, exportTimeout: UInt64 = 2_000_000_000) throws(SysfsPWMError) {
        let chipDirectory = Self.chipDirectory(root: root, chip: chip)
        self.chipDirectory = chipDirectory
        self.channel = channel
        self.directory = chipDirectory + "/pwm\(channel)"
        guard access(chipDirectory, F_OK) == 0 else {
            let present = Self.chips(under: (root.hasSuffix("/") ? String(root.dropLast()) : root) + "/class/pwm")
            throw SysfsPWMError(
                path: chipDirectory, operation: "find", errno: ENODEV,
                hint: "no such PWM chip; "
                    + (present.isEmpty ? "no PWM chip is present: enable one (dtoverlay=pwm-2chan on a Raspberry Pi)" : "present: \(present.joined(separator: ", "))"))
        }
        if let count = try? Self.readAttribute(chipDirectory + "/npwm"), let npwm = Int(count), channel >= npwm {
            throw SysfsPWMError(
                path: chipDirectory, operation: "use channel \(channel) of", errno: ENODEV,
                hint: "the chip has \(npwm) channel\(npwm == 1 ? "" : "s") (npwm = \(npwm)): channel \(channel) does not exist")
        }
        if access(directory, F_OK) != 0 {
            do {
                try Self.writeAttribute(chipDirectory + "/export", String(channel))
            } catch let error where error.errno == EBUSY {
                // EBUSY has two causes. The channel was exported meanwhile (by another instance or
                // process): its directory is there now, and the lock decides. Or a kernel driver
                // (pwm-vibrator, a backlight, a fan) has requested the channel: then the export is
                // refused for good and the directory never appears, so say so at once.
                if access(directory, F_OK) != 0 {
                    throw SysfsPWMError(
                        path: error.path, operation: error.operation, errno: EBUSY,
                        hint: "channel \(channel) of \(chip) is owned by a kernel driver (see /sys/kernel/debug/pwm); "
                            + "release it in the device tree, or drive the motor through that driver's input device instead")
                }
            } catch let error where error.errno == EACCES || error.errno == EPERM {
                throw SysfsPWMError(path: error.path, operation: error.operation, errno: error.errno, hint: pwmPermissionHint)
            } catch let error where error.errno == ENODEV || error.errno == EINVAL {
                throw SysfsPWMError(path: error.path, operation: error.operation, errno: error.errno, hint: "channel \(channel) does not exist on \(chip)")
            }
        }
        // The directory appears after the export; for a non-root user udev then changes the
        // attributes' group, so wait until `enable` is writable too.
        let deadline = Monotonic.now() + exportTimeout
        var pause: UInt32 = 200
        while access(directory + "/enable", W_OK) != 0 {
            let code = errno
            if Monotonic.now() >= deadline {
                if code == EACCES || code == EPERM {
                    throw SysfsPWMError(path: directory + "/enable", operation: "open for writing", errno: code, hint: pwmPermissionHint)
                }
                throw SysfsPWMError(path: directory, operation: "find", errno: code, hint: "the channel did not appear after writing \(channel) to \(chipDirectory)/export")
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SysfsPWMError(path: directory, operation: "open", errno: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw SysfsPWMError(
                path: directory, operation: "lock", errno: code,
                hint: code == EWOULDBLOCK ? "the channel is in use by another haptics process or device; close it there first" : nil)
        }
        lockDescriptor = descriptor
        do {
            state = try Self.readState(directory)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    deinit { close() }

    /// The path of one of the channel's attributes (`duty_cycle`).
    public func path(of attribute: String) -> String { directory + "/" + attribute }

    /// Takes the channel to `target`, writing only what changes, in an order the kernel accepts.
    /// On a failed write, ``state`` is what was applied before it.
    /// - Throws: ``SysfsPWMError`` naming the attribute and the value.
    public func apply(_ target: PWMState) throws(SysfsPWMError) {
        for write in PWMWritePlan.writes(from: state, to: target) {
            try perform(write)
        }
    }

    /// Writes the duty cycle again with its current value: the path a frame takes, used to time it.
    public func rewriteDuty() throws(SysfsPWMError) {
        try perform(.dutyCycle(state.dutyNanoseconds))
    }

    /// Stops the output: duty cycle 0, then disabled. Both writes are tried even if the first fails.
    /// - Throws: the first failure.
    public func stop() throws(SysfsPWMError) {
        guard state.periodNanoseconds > 0 else { return }  // never configured: nothing runs
        var failure: SysfsPWMError?
        do { try perform(.dutyCycle(0)) } catch { failure = error }
        do { try perform(.enable(false)) } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// Stops the output, unexports the channel and releases the lock. Idempotent; never throws
    /// (a failure to unexport leaves a stopped, exported channel, which the next open takes over).
    public func close() {
        guard !closed else { return }
        closed = true
        try? stop()
        try? Self.writeAttribute(chipDirectory + "/unexport", String(channel))
        Glibc.close(lockDescriptor)
        lockDescriptor = -1
    }

    private func perform(_ write: PWMWrite) throws(SysfsPWMError) {
        try Self.writeAttribute(path(of: write.attribute), write.value)
        state = write.applied(to: state)
    }

    /// Reads a channel directory's period, duty cycle, polarity and enable.
    public static func readState(_ directory: String) throws(SysfsPWMError) -> PWMState {
        func number(_ name: String) throws(SysfsPWMError) -> UInt64 {
            let text = try readAttribute(directory + "/" + name)
            guard let value = UInt64(text) else {
                throw SysfsPWMError(path: directory + "/" + name, operation: "parse", errno: 0, hint: "holds \"\(text)\", not a number")
            }
            return value
        }
        let polarityText = (try? readAttribute(directory + "/polarity")) ?? "normal"
        return PWMState(
            periodNanoseconds: try number("period"), dutyNanoseconds: try number("duty_cycle"),
            polarity: PWMPolarity(rawValue: polarityText) ?? .normal, enabled: try number("enable") != 0)
    }

    /// Reads a sysfs attribute without surrounding white space.
    public static func readAttribute(_ path: String) throws(SysfsPWMError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SysfsPWMError(path: path, operation: "read", errno: errno) }
        defer { Glibc.close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        var count = 0
        while true {
            count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            break
        }
        guard count >= 0 else { throw SysfsPWMError(path: path, operation: "read", errno: errno) }
        var text = Substring(String(decoding: buffer[0..<count], as: UTF8.self))
        while let last = text.last, last.isWhitespace { text.removeLast() }
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        return String(text)
    }

    /// Writes `value` to a sysfs attribute in one `write(2)`, as `echo value > path` does
    /// (`O_TRUNC` keeps a plain file in a test tree exact).
    public static func writeAttribute(_ path: String, _ value: String) throws(SysfsPWMError) {
        let operation = "write \"\(value)\" to"
        let descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw SysfsPWMError(path: path, operation: operation, errno: code, hint: code == EACCES ? pwmPermissionHint : nil)
        }
        defer { Glibc.close(descriptor) }
        let bytes = Array(value.utf8)
        while true {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written >= 0 else {
                let code = errno
                throw SysfsPWMError(
                    path: path, operation: operation, errno: code,
                    hint: code == EINVAL ? "the kernel refused this state (duty cycle above the period, or a period the chip cannot make)" : nil)
            }
            guard written == bytes.count else { throw SysfsPWMError(path: path, operation: operation + " (short write)", errno: EIO) }
            return
        }
    }

    static func chips(under directory: String) -> [String] {
        directoryEntries(atPath: directory).filter { $0.hasPrefix("pwmchip") }
    }
}
