import CHidapi
import HapticsPluginKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The one place the backend talks to hidapi (Debian 12: 0.13.1, hidraw backend). Discovery does
/// not use it (``Discovery/scan()`` reads sysfs); opening and writing do.
///
/// hidapi keeps process-wide state: `hid_init` (which also sets `LC_CTYPE` from the environment when
/// it is still "C") and one global "last error" string that `hid_open_path` replaces. Every call
/// touching that state runs under one process-wide lock, because several backend instances (one per
/// `HapticSystem`) can open at once. Calls on one opened device (`hid_write`, `hid_read_timeout`,
/// `hid_get_feature_report`, `hid_close`) touch only that device and need no global lock; each
/// device is used by one thread at a time (see ``HIDHandle``).
enum HIDAPI {
    /// Serialises `hid_init`, `hid_open_path` and `hid_error(NULL)`.
    private static let globalLock = Mutex<Bool>(false)

    /// Opens `path` with `hid_open_path`.
    ///
    /// hidapi does not return errno, so on failure the node is opened once more with `open(2)` (the
    /// same flags, closed at once) to learn it: EACCES/EPERM for permissions, ENOENT/ENODEV for a node
    /// that is gone.
    ///
    /// - Returns: the device, or the errno and hidapi's message.
    static func open(path: String) -> Result<OpaquePointer, HIDIOError> {
        let outcome: Result<OpaquePointer, HIDIOError> = globalLock.withLock { initialized in
            if !initialized {
                guard hid_init() == 0 else { return .failure(HIDIOError(errno: EIO, message: "hid_init failed: \(globalError())")) }
                initialized = true
            }
            if let device = hid_open_path(path) { return .success(device) }
            let message = globalError()
            let code = diagnoseOpen(path: path)
            return .failure(HIDIOError(errno: code == 0 ? EIO : code, message: message))
        }
        return outcome
    }

    /// The errno `open(path, O_RDWR)` fails with now, or 0 if it succeeds (the probe is closed at once).
    static func diagnoseOpen(path: String) -> Int32 {
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
        if fd >= 0 {
            Glibc.close(fd)
            return 0
        }
        return errno
    }

    /// hidapi's global error text. Call with `globalLock` held.
    private static func globalError() -> String {
        wideString(hid_error(nil))
    }

    /// A hidapi `wchar_t` string (UTF-32 on Linux) as a Swift string; "" for NULL.
    static func wideString(_ pointer: UnsafePointer<wchar_t>?) -> String {
        guard var cursor = pointer else { return "" }
        var scalars = String.UnicodeScalarView()
        while cursor.pointee != 0 {
            if let scalar = Unicode.Scalar(UInt32(bitPattern: cursor.pointee)) { scalars.append(scalar) }
            cursor += 1
        }
        return String(scalars)
    }
}

/// A failed hidapi call: the errno (captured right after the call) and hidapi's text.
struct HIDIOError: Error, Sendable {
    /// The errno value.
    var errno: Int32
    /// hidapi's message.
    var message: String
}

/// The one owner of one `hid_device`: closes it exactly once.
///
/// A handle is used by one thread at a time: the thread that opened it while it sets the controller
/// up (``HIDGamepad/wake()``), then the device's writer thread, which received it under the writer's
/// lock and is the only one that closes it. `deinit` closes a handle nobody closed (a failed set-up).
final class HIDHandle: @unchecked Sendable {
    // `device` is only used by the one thread that currently owns the handle (see above); the
    // hand-over happens under the writer's mutex, which orders the accesses.
    private var device: OpaquePointer?
    /// The hidraw node, `/dev/hidrawN`.
    let path: String

    private init(device: OpaquePointer, path: String) {
        self.device = device
        self.path = path
    }

    deinit { close() }

    /// Opens the hidraw node at `path`.
    ///
    /// - Returns: the handle, or the errno and hidapi's message.
    static func open(path: String) -> Result<HIDHandle, HIDIOError> {
        HIDAPI.open(path: path).map { HIDHandle(device: $0, path: path) }
    }

    /// Writes one output report (report id first) with `hid_write`; may block as long as the kernel
    /// driver's transport does (a USB interrupt transfer times out after 5 s).
    func write(_ report: [UInt8]) -> Result<Void, HIDIOError> {
        guard let device else { return .failure(HIDIOError(errno: EBADF, message: "\(path) is closed")) }
        let written = report.withUnsafeBufferPointer { hid_write(device, $0.baseAddress, $0.count) }
        let code = errno
        if written == Int32(report.count) { return .success(()) }
        if written >= 0 {
            return .failure(HIDIOError(errno: EIO, message: "short write to \(path): \(written) of \(report.count) bytes"))
        }
        return .failure(HIDIOError(errno: code, message: HIDAPI.wideString(hid_error(device))))
    }

    /// Reads feature report `id` (`HIDIOCGFEATURE`): at most `length` bytes, id first.
    func featureReport(_ id: UInt8, length: Int) -> Result<[UInt8], HIDIOError> {
        guard let device else { return .failure(HIDIOError(errno: EBADF, message: "\(path) is closed")) }
        var buffer = [UInt8](repeating: 0, count: length)
        buffer[0] = id
        let count = buffer.withUnsafeMutableBufferPointer { hid_get_feature_report(device, $0.baseAddress, $0.count) }
        let code = errno
        guard count > 0 else { return .failure(HIDIOError(errno: code == 0 ? EIO : code, message: HIDAPI.wideString(hid_error(device)))) }
        return .success(Array(buffer.prefix(Int(count))))
    }

    /// Reads one input report, waiting at most `milliseconds`; `nil` on time-out.
    func read(milliseconds: Int32) -> Result<[UInt8]?, HIDIOError> {
        guard let device else { return .failure(HIDIOError(errno: EBADF, message: "\(path) is closed")) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBufferPointer { hid_read_timeout(device, $0.baseAddress, $0.count, milliseconds) }
        let code = errno
        if count < 0 { return .failure(HIDIOError(errno: code == 0 ? EIO : code, message: HIDAPI.wideString(hid_error(device)))) }
        return .success(count == 0 ? nil : Array(buffer.prefix(Int(count))))
    }

    /// Closes the device. Idempotent.
    func close() {
        guard let open = device else { return }
        device = nil
        hid_close(open)
    }
}
