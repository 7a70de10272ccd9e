import CHapticsABI
#if canImport(Glibc)
import Glibc
#endif
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
    private let handle: OpenHandle
    /// For a device that takes samples: the thread that renders frames into them while awake.
    private let stream: SampleStream?
    /// Who hears of a failure the stream thread meets (``onFailure(_:)``).
    private let failureHandler = FailureHandler()

    final class FailureHandler: Sendable {
        let handler = Mutex<(@Sendable (DeviceError) -> Void)?>(nil)
        func callAsFunction(_ error: DeviceError) { handler.withLock { $0 }?(error) }
    }

    struct SendableHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer?
    }

    /// The handle, shared with a sample device's stream thread; nil once closed.
    final class OpenHandle: Sendable {
        let state: Mutex<SendableHandle?>
        init(_ pointer: UnsafeMutableRawPointer?) { state = Mutex(SendableHandle(pointer: pointer)) }
    }

    init(description: DeviceDescription, backend: Backend, handle: UnsafeMutableRawPointer?) {
        self.description = description
        self.backend = backend
        self.handle = OpenHandle(handle)
        stream = nil
    }

    /// An opened device that takes samples: frames are rendered by a ``SampleStream`` while it is awake.
    private init(sampleDevice description: DeviceDescription, format: SampleStreamFormat, backend: Backend, handle: UnsafeMutableRawPointer?) {
        self.description = description
        self.backend = backend
        let owned = OpenHandle(handle)
        self.handle = owned
        let write = backend.writeSamplesFunction!
        let waitSamples = backend.waitSamplesFunction
        let id = description.id
        let channelCount = description.channels.count
        let failed = failureHandler
        stream = SampleStream(
            format: format, channels: description.channels,
            write: { samples, frames, time in
                owned.state.withLock { state -> Result<SampleStream.Written, DeviceError> in
                    guard let open = state else { return .failure(.closed(deviceID: id)) }
                    var block = haptics_samples_v1(
                        time_ns: time, frame_count: UInt32(frames), channel_count: UInt32(channelCount), samples: samples.baseAddress!,
                        delay_frames: -1)
                    let rc = write(open.pointer, &block)
                    guard rc >= 0 else { return .failure(backend.failure(.writeSamples, code: rc, device: open.pointer, deviceID: id)) }
                    return .success(SampleStream.Written(underruns: Int(rc), delayFrames: block.delay_frames >= 0 ? Int(block.delay_frames) : nil))
                }
            },
            wait: waitSamples.map { waitSamples -> SampleStream.Waiter in
                { frames, timeout in
                    owned.state.withLock { state -> Result<Bool, DeviceError> in
                        guard let open = state else { return .failure(.closed(deviceID: id)) }
                        let rc = waitSamples(open.pointer, UInt32(frames), timeout)
                        if rc == -EOPNOTSUPP { return .success(false) }
                        guard rc >= 0 else { return .failure(backend.failure(.waitSamples, code: rc, device: open.pointer, deviceID: id)) }
                        return .success(true)
                    }
                }
            },
            failed: { failed($0) })
    }

    /// The actuator for an opened handle: a sample device gets its stream.
    static func make(description: DeviceDescription, backend: Backend, handle: UnsafeMutableRawPointer?) -> PluginActuator {
        if let format = description.sampleStream, backend.writeSamplesFunction != nil {
            return PluginActuator(sampleDevice: description, format: format, backend: backend, handle: handle)
        }
        return PluginActuator(description: description, backend: backend, handle: handle)
    }

    /// Registers who hears of a failure a sample device's stream thread meets (the device unplugged
    /// mid-stream): the thread ends, and without this nobody would know until the next frame.
    public func onFailure(_ handler: @escaping @Sendable (DeviceError) -> Void) {
        failureHandler.handler.withLock { $0 = handler }
    }

    /// Underruns a sample device recovered from since it was opened (0 for a frame device).
    public var underruns: Int { stream?.underruns ?? 0 }

    deinit { close() }

    /// Calls the plugin's `wake`; a sample device's stream starts (writing silence until a frame comes).
    public func wake() throws(DeviceError) {
        try perform(.wake) { backend.table.wake!($0) }
        try stream?.start(deviceID: description.id)
    }

    /// Calls the plugin's `sleep`. A sample device's stream first plays out what it was given
    /// (about a buffer: 16 ms with a DualSense's defaults) and then calls it from its own thread, so
    /// this returns at once; a failure of that sleep is logged.
    public func sleep() throws(DeviceError) {
        guard let stream else {
            try perform(.sleep) { backend.table.sleep!($0) }
            return
        }
        stream.finish { [handle, backend, description] in
            do throws(DeviceError) {
                try Self.perform(.sleep, handle: handle, backend: backend, deviceID: description.id) { backend.table.sleep!($0) }
            } catch {
                backend.host.logger.warning("\(error)")
            }
        }
    }

    /// Converts `frame` to a `haptics_frame_v1` (amplitudes clamped to 0…1) and calls the plugin's
    /// `submit`; for a sample device, hands it to the stream, which renders it into samples (a
    /// device asleep takes it as silence, as a frame device does).
    public func submit(_ frame: DriveFrame) throws(DeviceError) {
        if let stream {
            if stream.isRunning { try stream.post(frame) }
            return
        }
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

    /// Calls the plugin's `stop`. A sample device's running stream takes it as a frame of silence
    /// now, felt one stream latency later (the buffer and a millisecond) like every frame, so what was played before it
    /// sounds to its end (the backend's `stop`, which drops what the device holds, would cut it).
    public func stop() throws(DeviceError) {
        // Draining too: a drop would cut the tail it plays out.
        if let stream, stream.isActive {
            try stream.post(.silence(channelCount: description.channels.count, at: .monotonicNow()))
            return
        }
        try perform(.stop) { backend.table.stop!($0) }
    }

    /// Calls the plugin's `set_triggers` (ABI 1.6) with the effects as the contract carries them.
    public func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(DeviceError) {
        guard description.hasAdaptiveTriggers, let set = backend.setTriggersFunction else { throw .noAdaptiveTriggers(deviceID: description.id) }
        var rightRaw = right?.cValue ?? haptics_trigger_effect_v1()
        var leftRaw = left?.cValue ?? haptics_trigger_effect_v1()
        try perform(.setTriggers) { device in
            withUnsafePointer(to: &rightRaw) { rightPointer in
                withUnsafePointer(to: &leftRaw) { leftPointer in
                    set(device, right == nil ? nil : rightPointer, left == nil ? nil : leftPointer)
                }
            }
        }
    }

    /// Calls the plugin's `play_native` (ABI 1.7).
    public func playNative(_ sequence: String) throws(DeviceError) {
        guard description.hasNativeEffects, let play = backend.playNativeFunction else { throw .noNativeEffects(deviceID: description.id) }
        try perform(.playNative) { device in play(device, sequence) }
    }

    /// Calls the plugin's `native_feedback` (ABI 1.8); nil when it has none, or answers that no
    /// stored effect fits (-ENOENT) or fails (logged: the effect then plays with frames).
    public func nativeFeedback(_ effect: String, scale: Double) -> String? {
        guard description.hasNativeEffects, let query = backend.nativeFeedbackFunction, backend.startNativeFunction != nil else { return nil }
        var buffer = [CChar](repeating: 0, count: 512)
        do throws(DeviceError) {
            try perform(.nativeFeedback) { device in buffer.withUnsafeMutableBufferPointer { query(device, effect, scale, $0.baseAddress!, $0.count) } }
        } catch {
            if case .backendFailure(_, _, _, ENOENT, _) = error { return nil }
            backend.host.logger.warning("\(error); \(effect) plays with frames")
            return nil
        }
        return String(cText: buffer)
    }

    /// Calls the plugin's `start_native` (ABI 1.8).
    public func startNative(_ sequence: String) throws(DeviceError) {
        guard description.hasNativeEffects, let start = backend.startNativeFunction else { throw .noNativeEffects(deviceID: description.id) }
        try perform(.startNative) { device in start(device, sequence) }
    }

    /// Calls the plugin's `self_calibrate` (ABI 1.7) and reads its `key=value` lines.
    public func selfCalibrate() throws(DeviceError) -> [String: Double] {
        guard description.selfCalibrates, let calibrate = backend.selfCalibrateFunction else { throw .noSelfCalibration(deviceID: description.id) }
        var buffer = [CChar](repeating: 0, count: 4_096)
        try perform(.selfCalibrate) { device in buffer.withUnsafeMutableBufferPointer { calibrate(device, $0.baseAddress!, $0.count) } }
        let text = String(cText: buffer)
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Double(parts[1]), value.isFinite else {
                throw .backendFailure(
                    deviceID: description.id, backend: backend.name, operation: .selfCalibrate, errno: EPROTO,
                    message: "the plugin wrote \"\(line)\", not key=number")
            }
            values[String(parts[0])] = value
        }
        return values
    }

    /// Calls the plugin's `restore_calibration` (ABI 1.7) with the values as `key=value` lines.
    public func restoreCalibration(_ values: [String: Double]) throws(DeviceError) {
        guard description.selfCalibrates, let restore = backend.restoreCalibrationFunction else { throw .noSelfCalibration(deviceID: description.id) }
        let text = values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        try perform(.restoreCalibration) { device in restore(device, text) }
    }

    /// Calls the plugin's `close` once; later calls fail with ``DeviceError/closed(deviceID:)``.
    public func close() {
        stream?.end()
        handle.state.withLock { state in
            guard let open = state else { return }
            backend.table.close!(open.pointer)
            state = nil
        }
    }

    private func perform(_ operation: DeviceOperation, _ call: (UnsafeMutableRawPointer?) -> Int32) throws(DeviceError) {
        try Self.perform(operation, handle: handle, backend: backend, deviceID: description.id, call)
    }

    private static func perform(
        _ operation: DeviceOperation, handle: OpenHandle, backend: Backend, deviceID: String, _ call: (UnsafeMutableRawPointer?) -> Int32
    ) throws(DeviceError) {
        let result: Result<Void, DeviceError> = handle.state.withLock { state in
            guard let open = state else { return .failure(.closed(deviceID: deviceID)) }
            let rc = call(open.pointer)
            guard rc == 0 else {
                return .failure(backend.failure(operation, code: rc, device: open.pointer, deviceID: deviceID))
            }
            return .success(())
        }
        try result.get()
    }
}
