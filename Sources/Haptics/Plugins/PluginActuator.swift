import CHapticsABI
import Synchronization

/// An opened plugin device: the one owner of its C handle, which it closes exactly once.
///
/// Every call holds the actuator's lock, so calls for this device reach the plugin one at a time,
/// as the contract requires.
public final class PluginActuator: Actuator {
    public let description: DeviceDescription
    /// The backend the device belongs to (kept alive while the device is open).
    public let backend: Backend
    // The handle is nil once closed. The raw pointer is only ever passed back to the plugin.
    private let handle: Mutex<SendableHandle?>

    private struct SendableHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer?
    }

    init(description: DeviceDescription, backend: Backend, handle: UnsafeMutableRawPointer?) {
        self.description = description
        self.backend = backend
        self.handle = Mutex(SendableHandle(pointer: handle))
    }

    deinit { close() }

    /// Calls the plugin's `wake`.
    public func wake() throws(DeviceError) {
        try perform(.wake) { backend.table.wake!($0) }
    }

    /// Calls the plugin's `sleep`.
    public func sleep() throws(DeviceError) {
        try perform(.sleep) { backend.table.sleep!($0) }
    }

    /// Converts `frame` to a `haptics_frame_v1` (amplitudes clamped to 0…1) and calls the plugin's `submit`.
    public func submit(_ frame: DriveFrame) throws(DeviceError) {
        var raw = haptics_frame_v1()
        raw.time_ns = frame.time.nanoseconds
        let count = min(frame.channels.count, Int(HAPTICS_MAX_CHANNELS))
        raw.channel_count = UInt32(count)
        // Only to a device that said it takes them: an older backend would lift them over its offset.
        if frame.levels, description.envelope?.acceptsLevels == true { raw.flags = HAPTICS_FRAME_LEVELS.rawValue }
        withUnsafeMutableBytes(of: &raw.channels) { bytes in
            let channels = bytes.bindMemory(to: haptics_channel_drive_v1.self)
            for index in 0..<count {
                let drive = frame.channels[index]
                channels[index] = haptics_channel_drive_v1(
                    amplitude: Float(min(max(drive.amplitude, 0), 1)), frequency_hz: Float(max(drive.frequency, 0)))
            }
        }
        try perform(.submit) { device in withUnsafePointer(to: &raw) { backend.table.submit!(device, $0) } }
    }

    /// Calls the plugin's `stop`.
    public func stop() throws(DeviceError) {
        try perform(.stop) { backend.table.stop!($0) }
    }

    /// Calls the plugin's `close` once; later calls fail with ``DeviceError/closed(deviceID:)``.
    public func close() {
        handle.withLock { state in
            guard let open = state else { return }
            backend.table.close!(open.pointer)
            state = nil
        }
    }

    private func perform(_ operation: DeviceOperation, _ call: (UnsafeMutableRawPointer?) -> Int32) throws(DeviceError) {
        let result: Result<Void, DeviceError> = handle.withLock { state in
            guard let open = state else { return .failure(.closed(deviceID: description.id)) }
            let rc = call(open.pointer)
            guard rc == 0 else {
                return .failure(backend.failure(operation, code: rc, device: open.pointer, deviceID: description.id))
            }
            return .success(())
        }
        try result.get()
    }
}
