import CGpiodShim
import GPIOBoards
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// The output lines of one actuator, requested together through the libgpiod shim: the one owner
/// of the request, released exactly once.
///
/// Not thread-safe: the actuator that owns it serialises calls. Shared by the backends that drive
/// lines: `gpio` (enables, directions) and `i2c` (a driver IC's EN).
public final class GPIOLines: @unchecked Sendable {
    // Sendable only to be held inside its owner's lock (a Mutex's state); every call is made under it.
    /// The chip's path (`/dev/gpiochip0`).
    public let chipPath: String
    /// The lines' roles, in request order.
    public let roles: [LineRole]
    /// The offsets, in request order.
    public let offsets: [UInt32]
    /// Whether each line is active-low, in request order.
    public let activeLow: [Bool]
    /// The request; nil once released.
    public private(set) var request: OpaquePointer?
    /// The logical values last set.
    public private(set) var values: [LineRole: Bool]

    /// Requests `lines` of the chip at `chipPath` as outputs, all inactive.
    /// - Throws: the shim's negative errno, as ``LineRequestFailure``.
    public init(chipPath: String, consumer: String, lines: [(role: LineRole, offset: UInt32, activeLow: Bool)]) throws(LineRequestFailure) {
        self.chipPath = chipPath
        roles = lines.map(\.role)
        offsets = lines.map(\.offset)
        activeLow = lines.map(\.activeLow)
        let activeLowFlags = lines.map { Int32($0.activeLow ? 1 : 0) }
        let initial = [Int32](repeating: 0, count: lines.count)
        var handle: OpaquePointer?
        let result = gpiod_shim_request_outputs(chipPath, consumer, offsets, activeLowFlags, initial, lines.count, &handle)
        guard result == 0, let handle else { throw LineRequestFailure(errno: -result) }
        request = handle
        values = Dictionary(uniqueKeysWithValues: lines.map { ($0.role, false) })
    }

    deinit { release() }

    /// Sets every line (roles missing from `target` keep their value).
    /// - Throws: the errno of the failed ioctl, as ``LineRequestFailure``.
    public func set(_ target: [LineRole: Bool]) throws(LineRequestFailure) {
        guard let request else { throw LineRequestFailure(errno: EBADF) }
        var next = values
        for (role, value) in target where next[role] != nil { next[role] = value }
        let raw = roles.map { Int32(next[$0]! ? 1 : 0) }
        let result = gpiod_shim_set_values(request, raw)
        guard result == 0 else { throw LineRequestFailure(errno: -result) }
        values = next
    }

    /// Adds these lines to stop-guard registration `slot` (`haptics_stop_guard_add_lines`): the
    /// process stops them through this request, the supervisor requests them inactive itself. The
    /// request must outlive the registration. Returns 0 or a negative errno (EBADF once released).
    public func addToStopGuard(slot: Int32) -> Int32 {
        guard let request else { return -EBADF }
        let flags = activeLow.map { Int32($0 ? 1 : 0) }
        return offsets.withUnsafeBufferPointer { offsets in
            flags.withUnsafeBufferPointer { activeLow in
                haptics_stop_guard_add_lines(
                    slot, chipPath, offsets.count, offsets.baseAddress!, activeLow.baseAddress!, gpiod_shim_set_values_untyped, UnsafeMutableRawPointer(request))
            }
        }
    }

    /// Releases the lines. Idempotent.
    public func release() {
        guard let request else { return }
        self.request = nil
        gpiod_shim_release(request)
    }

    /// The chip's line count and label.
    public static func chipInfo(_ path: String) throws(LineRequestFailure) -> (lines: Int, label: String) {
        var count: UInt32 = 0
        var label = [CChar](repeating: 0, count: Int(GPIOD_SHIM_NAME_SIZE))
        let result = gpiod_shim_chip_info(path, &count, &label, label.count)
        guard result == 0 else { throw LineRequestFailure(errno: -result) }
        return (Int(count), String(decoding: label.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The offset of the line named `name`.
    public static func offset(named name: String, chip path: String) throws(LineRequestFailure) -> UInt32 {
        let result = gpiod_shim_find_line(path, name)
        guard result >= 0 else { throw LineRequestFailure(errno: -result) }
        return UInt32(result)
    }

    /// The consumer of line `offset` if it is in use.
    public static func consumer(of offset: UInt32, chip path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(GPIOD_SHIM_NAME_SIZE))
        guard gpiod_shim_line_consumer(path, offset, &buffer, buffer.count) == 1 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A failed shim call: its errno.
public struct LineRequestFailure: Error {
    /// The errno value.
    public var errno: Int32
    /// What it means.
    public var text: String { String(cString: strerror(errno)) }

    /// A failure with `errno`.
    public init(errno: Int32) { self.errno = errno }
}
