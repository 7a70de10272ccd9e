import CHapticsABI
import CHapticsSystem
import HapticsTriggers
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the host offers a Swift backend instance: configuration, logging and device events.
public struct HostServices: @unchecked Sendable {
    // The host table stays valid until the instance is destroyed (the contract's promise), and its
    // functions may be called from any thread.
    private let table: UnsafePointer<haptics_host_v1>

    init(_ table: UnsafePointer<haptics_host_v1>) { self.table = table }

    /// The configuration value for `key` (`recording.output`), or nil.
    public func configuration(_ key: String) -> String? {
        guard let get = table.pointee.get_config, let value = get(table.pointee.context, key) else { return nil }
        return String(cString: value)
    }

    /// `XDG_CONFIG_HOME` and `HOME` as the process has them (read with `secure_getenv`): what a
    /// backend's `ConfigSearch` of its `*.d` directories needs.
    public var searchEnvironment: [String: String] {
        var environment: [String: String] = [:]
        for name in ["XDG_CONFIG_HOME", "HOME"] {
            if let value = haptics_secure_getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    /// Sends a line to the host's log.
    public func log(_ level: haptics_log_level, _ message: String) {
        table.pointee.log?(table.pointee.context, Int32(level.rawValue), message)
    }

    /// Tells the host a device appeared or disappeared.
    public func notify(_ event: haptics_event, deviceID: String) {
        table.pointee.notify?(table.pointee.context, event.rawValue, deviceID)
    }
}

/// The entry point's work for a Swift backend: checks the host, creates the instance with `make`,
/// and fills `table` with thunks that call it, catching every ``BackendFailure`` into `last_error`.
///
/// ```swift
/// @_cdecl("haptics_backend_fill_v1")
/// public func fill(_ host: UnsafePointer<haptics_host_v1>, _ out: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int) -> Int32 {
///     fillBackendTable(name: "null", host: host, table: out, size: size) { _ in NullBackend() }
/// }
/// ```
public func fillBackendTable(
    name: String, host: UnsafePointer<haptics_host_v1>, table: UnsafeMutablePointer<haptics_backend_v1>, size: Int,
    make: (HostServices) throws(BackendFailure) -> any BackendDriver
) -> Int32 {
    // An older host passes a shorter table (ABI 1.0's nine functions): fill what it has room for.
    let minimumSize = MemoryLayout<haptics_backend_v1>.offset(of: \.describe)!
    guard size >= minimumSize else { return -EINVAL }
    let services = HostServices(host)
    guard host.pointee.abi_version == HAPTICS_ABI_VERSION else {
        services.log(HAPTICS_LOG_ERROR, "\(name): host speaks ABI version \(host.pointee.abi_version), this backend version \(HAPTICS_ABI_VERSION)")
        return -EPROTO
    }
    let driver: any BackendDriver
    do {
        driver = try make(services)
    } catch {
        services.log(HAPTICS_LOG_ERROR, error.message)
        return -error.code
    }
    var filled = haptics_backend_v1()
    filled.abi_version = HAPTICS_ABI_VERSION
    filled.struct_size = UInt32(MemoryLayout<haptics_backend_v1>.size)
    copyCString(name, into: &filled.name)
    filled.instance = Unmanaged.passRetained(InstanceBox(driver: driver)).toOpaque()
    filled.enumerate = { instance, devices, capacity, count in
        let box = InstanceBox.from(instance)
        return box.run { () throws(BackendFailure) in
            let specs = try box.driver.devices()
            box.listed.withLock { listed in listed = Dictionary(specs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
            count.pointee = UInt32(specs.count)
            if let devices {
                for (index, spec) in specs.prefix(Int(capacity)).enumerated() { devices[index] = spec.cValue }
            }
        }
    }
    filled.open = { instance, deviceID, handle in
        let box = InstanceBox.from(instance)
        let id = String(cString: deviceID)
        return box.run { () throws(BackendFailure) in
            let device = try box.driver.open(deviceID: id)
            handle.pointee = Unmanaged.passRetained(DeviceBox(driver: device)).toOpaque()
        }
    }
    filled.close = { handle in
        Unmanaged<DeviceBox>.fromOpaque(handle!).takeRetainedValue().driver.close()
    }
    filled.wake = { handle in
        DeviceBox.with(handle) { box in box.run { () throws(BackendFailure) in try box.driver.wake() } }
    }
    filled.sleep = { handle in
        DeviceBox.with(handle) { box in box.run { () throws(BackendFailure) in try box.driver.sleep() } }
    }
    filled.stop = { handle in
        DeviceBox.with(handle) { box in box.run { () throws(BackendFailure) in try box.driver.stop() } }
    }
    filled.submit = { handle, frame in
        let view = FrameView(frame.pointee)
        return DeviceBox.with(handle) { box in box.run { () throws(BackendFailure) in try box.driver.submit(view) } }
    }
    filled.last_error = { instance, handle, buffer, size in
        // A device's box or a capture's: both record their failures the same way.
        let message = handle.map { Unmanaged<FailureRecorder>.fromOpaque($0).takeUnretainedValue().lastError.withLock { $0 } }
            ?? InstanceBox.from(instance).lastError.withLock { $0 }
        let utf8 = Array(message.utf8)
        if size > 0 {
            let count = min(utf8.count, size - 1)
            for index in 0..<count { buffer[index] = CChar(bitPattern: utf8[index]) }
            buffer[count] = 0
        }
        return utf8.count
    }
    filled.destroy = { instance in
        Unmanaged<InstanceBox>.fromOpaque(instance!).takeRetainedValue().driver.destroy()
    }
    filled.describe = { instance, deviceID, info in
        let box = InstanceBox.from(instance)
        let id = String(cString: deviceID)
        return box.run { () throws(BackendFailure) in
            var spec = box.listed.withLock { $0[id] }
            if spec == nil { spec = try box.driver.devices().first { $0.id == id } }
            guard let spec else {
                throw BackendFailure(code: ENODEV, "no device '\(id)' was listed")
            }
            spec.writeInfo(into: info)
        }
    }
    filled.write_samples = { handle, block in
        let view = SampleBlock(block.pointee)
        return DeviceBox.with(handle) { box in
            var written = SamplesWritten(underruns: 0, delayFrames: nil)
            let rc = box.run { () throws(BackendFailure) in written = try box.driver.writeSamples(view) }
            block.pointee.delay_frames = written.delayFrames.map(Int64.init) ?? -1
            return rc == 0 ? Int32(clamping: written.underruns) : rc
        }
    }
    filled.wait_samples = { handle, frames, timeout in
        DeviceBox.with(handle) { box in
            var room = 0
            let rc = box.run { () throws(BackendFailure) in room = try box.driver.waitForSamples(frames: Int(frames), timeoutNanoseconds: timeout) }
            return rc == 0 ? Int32(clamping: room) : rc
        }
    }
    filled.set_triggers = { handle, right, left in
        DeviceBox.with(handle) { box in
            box.run { () throws(BackendFailure) in
                func effect(_ raw: UnsafePointer<haptics_trigger_effect_v1>?) throws(BackendFailure) -> AdaptiveTriggerEffect? {
                    guard let raw else { return nil }
                    do throws(AdaptiveTriggerError) { return try AdaptiveTriggerEffect(raw.pointee) } catch {
                        throw BackendFailure(code: EINVAL, error.description)
                    }
                }
                try box.driver.setTriggers(right: try effect(right), left: try effect(left))
            }
        }
    }
    filled.play_native = { handle, sequence in
        let text = String(cString: sequence)
        return DeviceBox.with(handle) { box in box.run { () throws(BackendFailure) in try box.driver.playNative(text) } }
    }
    filled.self_calibrate = { handle, buffer, size in
        DeviceBox.with(handle) { box in
            box.run { () throws(BackendFailure) in
                try copy(DeviceCalibrationText.format(try box.driver.selfCalibrate()), what: "the calibration", to: buffer, size: size)
            }
        }
    }
    filled.native_feedback = { handle, effect, scale, buffer, size in
        let name = String(cString: effect)
        return DeviceBox.with(handle) { box in
            box.run { () throws(BackendFailure) in
                guard let sequence = box.driver.nativeFeedback(name, scale: scale) else {
                    throw BackendFailure(code: ENOENT, "no stored effect fits \(name) at \(scale)")
                }
                try copy(sequence, what: "the sequence", to: buffer, size: size)
            }
        }
    }
    filled.start_native = { handle, sequence in
        let text = String(cString: sequence)
        return DeviceBox.with(handle) { box in box.run { () throws(BackendFailure) in try box.driver.startNative(text) } }
    }
    filled.restore_calibration = { handle, stored in
        let text = String(cString: stored)
        return DeviceBox.with(handle) { box in
            box.run { () throws(BackendFailure) in
                try box.driver.restoreCalibration(try DeviceCalibrationText.parse(text))
            }
        }
    }
    if driver is any AudioCaptureBackend { fillCapture(&filled) }
    withUnsafeBytes(of: &filled) { source in
        UnsafeMutableRawPointer(table).copyMemory(from: source.baseAddress!, byteCount: min(size, MemoryLayout<haptics_backend_v1>.size))
    }
    return 0
}

/// The capture functions (ABI 1.9), for a backend that is an ``AudioCaptureBackend``.
private func fillCapture(_ filled: inout haptics_backend_v1) {
    filled.capture_open = { instance, source, format, handle in
        let box = InstanceBox.from(instance)
        let name = String(cString: source)
        let request = CaptureRequest(format.pointee)
        return box.run { () throws(BackendFailure) in
            guard let backend = box.driver as? any AudioCaptureBackend else { throw BackendFailure(code: EOPNOTSUPP, "this backend captures no audio") }
            let capture = try backend.openCapture(source: name, request: request)
            let opened = capture.format
            format.pointee.rate_hz = UInt32(clamping: opened.rate)
            format.pointee.channel_count = UInt32(clamping: opened.channels)
            format.pointee.period_frames = UInt32(clamping: opened.periodFrames)
            if Int(format.pointee.struct_size) >= MemoryLayout<haptics_capture_format_v1>.offset(of: \.buffer_frames)! + 4 {
                format.pointee.buffer_frames = UInt32(clamping: opened.bufferFrames)
            }
            handle.pointee = Unmanaged.passRetained(CaptureBox(driver: capture)).toOpaque()
        }
    }
    filled.capture_read = { handle, block, timeout in
        Unmanaged<CaptureBox>.fromOpaque(handle!)._withUnsafeGuaranteedRef { box in
            let channels = box.driver.format.channels
            let room = UnsafeMutableBufferPointer(start: block.pointee.samples, count: Int(block.pointee.frame_capacity) * channels)
            var read = CaptureRead(frames: 0, timeNanoseconds: 0, overruns: 0)
            let rc = box.run { () throws(BackendFailure) in read = try box.driver.read(into: room, timeoutNanoseconds: timeout) }
            block.pointee.frame_count = UInt32(clamping: min(read.frames, Int(block.pointee.frame_capacity)))
            block.pointee.time_ns = read.timeNanoseconds
            block.pointee.overruns = UInt32(clamping: read.overruns)
            return rc
        }
    }
    filled.capture_close = { handle in
        Unmanaged<CaptureBox>.fromOpaque(handle!).takeRetainedValue().driver.close()
    }
}

/// Writes `text` NUL-terminated into the host's `buffer` of `size` bytes.
/// - Throws: ENOSPC naming `what` and the size it needs.
private func copy(_ text: String, what: String, to buffer: UnsafeMutablePointer<CChar>, size: Int) throws(BackendFailure) {
    let utf8 = Array(text.utf8)
    guard utf8.count < size else { throw BackendFailure(code: ENOSPC, "\(what) needs \(utf8.count + 1) bytes, the host gave \(size)") }
    for index in utf8.indices { buffer[index] = CChar(bitPattern: utf8[index]) }
    buffer[utf8.count] = 0
}

/// Holds a driver and the message of its last failure.
private class FailureRecorder: @unchecked Sendable {
    // Immutable apart from `lastError`, which is behind its Mutex.
    let lastError = Mutex<String>("")

    func run(_ body: () throws(BackendFailure) -> Void) -> Int32 {
        do {
            try body()
            return 0
        } catch {
            lastError.withLock { $0 = error.message }
            return -max(error.code, 1)
        }
    }
}

private final class InstanceBox: FailureRecorder, @unchecked Sendable {
    let driver: any BackendDriver
    /// The devices of the last `enumerate`, by id, for `describe`.
    let listed = Mutex<[String: DeviceSpec]>([:])
    init(driver: any BackendDriver) { self.driver = driver }
    static func from(_ raw: UnsafeMutableRawPointer?) -> InstanceBox { Unmanaged.fromOpaque(raw!).takeUnretainedValue() }
}

private final class CaptureBox: FailureRecorder, @unchecked Sendable {
    let driver: any CaptureDriver
    init(driver: any CaptureDriver) { self.driver = driver }
}

private final class DeviceBox: FailureRecorder, @unchecked Sendable {
    let driver: any DeviceDriver
    init(driver: any DeviceDriver) { self.driver = driver }
    static func from(_ raw: UnsafeMutableRawPointer?) -> DeviceBox { Unmanaged.fromOpaque(raw!).takeUnretainedValue() }

    /// Calls `body` with the box behind a device handle, borrowed: the host keeps the handle open
    /// for the whole call (the contract: `close` never runs beside another call on the handle), so
    /// the device calls take no reference count.
    static func with<Result>(_ raw: UnsafeMutableRawPointer?, _ body: (DeviceBox) -> Result) -> Result {
        Unmanaged<DeviceBox>.fromOpaque(raw!)._withUnsafeGuaranteedRef(body)
    }
}
