#if canImport(Glibc)
import Glibc
#endif
import CHapticsABI

/// One loaded backend instance: the validated `haptics_backend_v1` table a plugin filled.
///
/// Created by ``PluginLoader``. It lists devices and opens them as ``PluginActuator``s, which keep
/// it alive; the instance is destroyed when the last reference goes. The plugin's library itself is
/// never unloaded.
public final class Backend: @unchecked Sendable {
    // `table` is immutable after validation; the plugin's functions are safe to call concurrently
    // as the contract states (the host serialises calls per device in PluginActuator).

    /// The backend's name (`recording`, `hid`, `gpio`).
    public let name: String
    /// The plugin file it was loaded from.
    public let path: String
    let table: haptics_backend_v1
    let host: HostContext

    init(name: String, path: String, table: haptics_backend_v1, host: HostContext) {
        self.name = name
        self.path = path
        self.table = table
        self.host = host
    }

    deinit {
        table.destroy?(table.instance)
    }

    /// The devices the backend finds now.
    public func devices() throws(DeviceError) -> [DeviceDescription] {
        var capacity: UInt32 = 16
        while true {
            var raw = [haptics_device_v1](repeating: haptics_device_v1(), count: Int(capacity))
            var count: UInt32 = 0
            let rc = raw.withUnsafeMutableBufferPointer { table.enumerate!(table.instance, $0.baseAddress, capacity, &count) }
            guard rc == 0 else { throw failure(.enumerate, code: rc, device: nil, deviceID: nil) }
            if count > capacity {
                capacity = count
                continue
            }
            return raw.prefix(Int(count)).compactMap { entry in
                do {
                    var description = try DeviceDescription(entry, backend: name)
                    if let info = info(forDevice: description.id) {
                        description.apply(
                            info, takesSamples: writeSamplesFunction != nil, setsTriggers: setTriggersFunction != nil,
                            playsNative: playNativeFunction != nil, selfCalibrates: selfCalibrateFunction != nil && restoreCalibrationFunction != nil)
                    }
                    return description
                } catch {
                    host.logger.error("\(path): ignoring a device: \(error)")
                    return nil
                }
            }
        }
    }

    /// The plugin's `describe`, when its table has one (ABI 1.1).
    private var describeFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafeMutablePointer<haptics_device_info_v1>) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.describe),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.describe
    }

    /// The plugin's `write_samples`, when its table has one (ABI 1.4).
    var writeSamplesFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<haptics_samples_v1>) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.write_samples),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.write_samples
    }

    /// The plugin's `wait_samples`, when its table has one (ABI 1.5).
    var waitSamplesFunction: (@convention(c) (UnsafeMutableRawPointer?, UInt32, UInt64) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.wait_samples),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.wait_samples
    }

    /// The plugin's `set_triggers`, when its table has one (ABI 1.6).
    var setTriggersFunction:
        (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<haptics_trigger_effect_v1>?, UnsafePointer<haptics_trigger_effect_v1>?) -> Int32)?
    {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.set_triggers),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.set_triggers
    }

    /// The plugin's `play_native`, when its table has one (ABI 1.7).
    var playNativeFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.play_native),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.play_native
    }

    /// The plugin's `native_feedback`, when its table has one (ABI 1.8).
    var nativeFeedbackFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, Double, UnsafeMutablePointer<CChar>, Int) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.native_feedback),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.native_feedback
    }

    /// The plugin's `start_native`, when its table has one (ABI 1.8).
    var startNativeFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.start_native),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.start_native
    }

    /// The plugin's `self_calibrate`, when its table has one (ABI 1.7).
    var selfCalibrateFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>, Int) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.self_calibrate),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.self_calibrate
    }

    /// The plugin's `restore_calibration`, when its table has one (ABI 1.7).
    var restoreCalibrationFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>) -> Int32)? {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.restore_calibration),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return nil }
        return table.restore_calibration
    }

    /// What the plugin says about `id` beyond its listing, or nil (a 1.0 plugin, or `describe` failed).
    func info(forDevice id: String) -> haptics_device_info_v1? {
        guard let describe = describeFunction else { return nil }
        var info = haptics_device_info_v1()
        info.struct_size = UInt32(MemoryLayout<haptics_device_info_v1>.size)
        let rc = describe(table.instance, id, &info)
        guard rc == 0 else {
            host.logger.warning("\(path): describe(\(id)) failed: \(failure(.enumerate, code: rc, device: nil, deviceID: id))")
            return nil
        }
        return info
    }

    /// Opens the device `id` (asleep and stopped).
    public func open(deviceID id: String) throws(DeviceError) -> PluginActuator {
        let listed = try devices()
        guard let description = listed.first(where: { $0.id == id }) else {
            throw DeviceError.notFound(query: id, available: listed.map(\.id))
        }
        return try open(description)
    }

    /// Opens the device `description` describes, as ``devices()`` listed it (asleep and stopped),
    /// without listing the devices again.
    public func open(_ description: DeviceDescription) throws(DeviceError) -> PluginActuator {
        var handle: UnsafeMutableRawPointer?
        let rc = table.open!(table.instance, description.id, &handle)
        guard rc == 0 else { throw failure(.open, code: rc, device: nil, deviceID: description.id) }
        return PluginActuator.make(description: description, backend: self, handle: handle)
    }

    /// Registers the function that receives this backend's device events (from any thread; it must not block).
    public func onEvent(_ handler: (@Sendable (BackendEvent) -> Void)?) {
        host.setEventHandler(handler)
    }

    func failure(_ operation: DeviceOperation, code: Int32, device: UnsafeMutableRawPointer?, deviceID: String?) -> DeviceError {
        var buffer = [CChar](repeating: 0, count: 512)
        _ = table.last_error!(table.instance, device, &buffer, buffer.count)
        return .backendFailure(deviceID: deviceID, backend: name, operation: operation, errno: code < 0 ? -code : EIO, message: String(cText: buffer))
    }
}

extension String {
    /// The NUL-terminated UTF-8 text a plugin wrote into `buffer` (all of it when there is no NUL).
    init(cText buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why a device description from a plugin was rejected.
struct InvalidDeviceDescription: Error, CustomStringConvertible {
    let id: String
    let problem: String
    var description: String { "device '\(id)': \(problem)" }
}

extension DeviceDescription {
    /// Converts and checks a description a plugin wrote.
    init(_ raw: haptics_device_v1, backend: String) throws(InvalidDeviceDescription) {
        let id = cString(raw.id)
        guard !id.isEmpty else { throw InvalidDeviceDescription(id: "?", problem: "empty id") }
        guard (1...Int(HAPTICS_MAX_CHANNELS)).contains(Int(raw.channel_count)) else {
            throw InvalidDeviceDescription(id: id, problem: "channel_count \(raw.channel_count) is outside 1...\(HAPTICS_MAX_CHANNELS)")
        }
        let rawChannels = withUnsafeBytes(of: raw.channels) { bytes in
            Array(bytes.bindMemory(to: haptics_channel_v1.self).prefix(Int(raw.channel_count)))
        }
        var channels: [ChannelDescription] = []
        for rawChannel in rawChannels {
            let channel = try ChannelDescription(rawChannel, deviceID: id)
            if channel.amplitudeSteps < 2 {
                throw InvalidDeviceDescription(id: id, problem: "channel '\(channel.name)' has \(channel.amplitudeSteps) amplitude steps, needs at least 2")
            }
            channels.append(channel)
        }
        self.init(
            id: id, name: cString(raw.name), backend: backend, actuator: ActuatorKind(code: raw.actuator), channels: channels,
            minimumUpdateInterval: Double(raw.min_update_interval_ns) / 1e9, wakeLatency: Double(raw.wake_latency_ns) / 1e9)
    }
}

extension ChannelDescription {
    /// Converts and checks a channel a plugin wrote: a frequency range needs two finite positive
    /// bounds (a NaN would make no range at all); a resonant or nominal frequency that is not a
    /// finite positive number counts as unknown.
    init(_ raw: haptics_channel_v1, deviceID: String) throws(InvalidDeviceDescription) {
        let name = cString(raw.name)
        var range: ClosedRange<Double>?
        if raw.capabilities & HAPTICS_CAP_FREQUENCY.rawValue != 0 {
            let low = Double(raw.frequency_min_hz), high = Double(raw.frequency_max_hz)
            guard low.isFinite, high.isFinite, low > 0, high > 0 else {
                throw InvalidDeviceDescription(
                    id: deviceID, problem: "channel '\(name)' has frequency range \(low)…\(high) Hz; both bounds must be finite and above 0")
            }
            range = min(low, high)...max(low, high)
        }
        func known(_ value: Float) -> Double? { value.isFinite && value > 0 ? Double(value) : nil }
        self.init(
            name: name, actuator: ActuatorKind(code: raw.actuator), amplitudeSteps: Int(raw.amplitude_steps),
            frequencyRange: range, resonantFrequency: known(raw.resonant_frequency_hz), nominalFrequency: known(raw.nominal_frequency_hz))
    }
}

extension DeviceDescription {
    /// Takes what `describe` said: the physical device, the preference, why it is unavailable, the
    /// envelope, the period step, the sample stream (`takesSamples`: the table has `write_samples`),
    /// the adaptive triggers (`setsTriggers`: the table has `set_triggers`).
    mutating func apply(
        _ info: haptics_device_info_v1, takesSamples: Bool, setsTriggers: Bool = false, playsNative: Bool = false, selfCalibrates: Bool = false
    ) {
        let physical = cString(info.physical_id)
        physicalID = physical.isEmpty ? nil : physical
        preference = Int(info.preference)
        if info.flags & HAPTICS_DEVICE_UNAVAILABLE.rawValue != 0 {
            let reason = cString(info.unavailable_reason)
            unavailableReason = reason.isEmpty ? "the backend says the device cannot be used now" : reason
        }
        if info.flags & HAPTICS_DEVICE_TAKES_SAMPLES.rawValue != 0 {
            let rate = Int(info.sample_rate_hz), period = Int(info.sample_period_frames), buffer = Int(info.sample_buffer_frames)
            if !takesSamples {
                unavailableReason = unavailableReason ?? "the backend says the device takes samples but offers no write_samples (ABI 1.4); update the plugin"
            } else if !(100...768_000).contains(rate) || !(1...rate).contains(period) || buffer < period {
                unavailableReason = unavailableReason
                    ?? "the backend states an unusable sample stream: \(rate) Hz (100…768000), period \(period) frames (1…rate), buffer \(buffer) frames (at least the period)"
            } else {
                sampleStream = SampleStreamFormat(
                    rate: rate, periodFrames: period, bufferFrames: buffer, latency: Double(info.sample_latency_ns) / 1e9)
            }
        }
        hasAdaptiveTriggers = setsTriggers && info.flags & HAPTICS_DEVICE_ADAPTIVE_TRIGGERS.rawValue != 0
        hasNativeEffects = playsNative && info.flags & HAPTICS_DEVICE_NATIVE_EFFECTS.rawValue != 0
        self.selfCalibrates = selfCalibrates && info.flags & HAPTICS_DEVICE_SELF_CALIBRATION.rawValue != 0
        // A period step outside 1 µs … 1 s is no whole-period device the engine could drive: not stated.
        periodStep = (1_000...1_000_000_000).contains(info.period_step_ns) ? Double(info.period_step_ns) / 1e9 : nil
        if info.flags & HAPTICS_DEVICE_HAS_ENVELOPE.rawValue != 0 {
            func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }
            // The decimal the plugin wrote (0.6), not the float's binary neighbour (0.6000000238):
            // a float's description is the shortest text that reads back as the same float.
            func level(_ value: Float) -> Double { value.isFinite ? Double("\(value)") ?? 0 : 0 }
            envelope = DriveEnvelope(
                amplitudeOffset: level(info.amplitude_offset), ratedLevel: level(info.rated_level), kickLevel: level(info.kick_level),
                kickDuration: seconds(info.kick_max_ns), maxContinuousDuration: info.max_continuous_ns > 0 ? seconds(info.max_continuous_ns) : nil,
                restDuration: seconds(info.rest_ns), acceptsLevels: info.flags & HAPTICS_DEVICE_ACCEPTS_LEVELS.rawValue != 0)
        }
    }
}

extension ActuatorKind {
    init(code: UInt32) {
        switch code {
        case HAPTICS_ACTUATOR_ERM.rawValue: self = .erm
        case HAPTICS_ACTUATOR_LRA.rawValue: self = .lra
        case HAPTICS_ACTUATOR_DUAL_RUMBLE.rawValue: self = .dualRumble
        case HAPTICS_ACTUATOR_TRIGGER.rawValue: self = .trigger
        case HAPTICS_ACTUATOR_VOICE_COIL.rawValue: self = .voiceCoil
        default: self = .unknown
        }
    }
}

/// The NUL-terminated string in a fixed-size C char array (imported as a tuple), never reading past it.
func cString<T>(_ array: T) -> String {
    withUnsafeBytes(of: array) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
}
