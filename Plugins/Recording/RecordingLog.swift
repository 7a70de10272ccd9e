import CHapticsABI
import HapticsPluginKit
import HapticsRecordingFormat
import HapticsSupport
import HapticsTriggers
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The recording (``RecordingFormat``, defined once beside this backend): records are kept in
/// memory and written out at every `sleep` and `close`, every 4096 records, and when the instance
/// is destroyed.
final class RecordingLog: Sendable {
    /// One thing that happened, kept as plain values until the log is written out, so recording a
    /// frame costs a time stamp and an append, not JSON formatting.
    enum Record: Sendable {
        case event(time: UInt64, event: RecordingFormat.Event, device: String)
        case frame(time: UInt64, device: String, frameTime: UInt64, channels: [(amplitude: Float, frequency: Float)])
        case triggers(time: UInt64, device: String, right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?)
        case native(time: UInt64, device: String, sequence: String, waited: Bool)
    }

    private let file: OwnedFileDescriptor
    private let path: String
    private let pending = Mutex<[Record]>([])

    init(path: String, devices: [SimulatedDevice]) throws(BackendFailure) {
        do {
            file = try OwnedFileDescriptor(path: path, .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw BackendFailure(code: error.errno, "recording.output: \(error) (choose a writable path)")
        }
        self.path = path
        try write(Array(RecordingFormat.header(time: Monotonic.now(), devices: devices.map { Self.describe($0.spec) }).utf8))
    }

    /// Records `event` on `device` now.
    func append(event: RecordingFormat.Event, device: String) {
        let now = Monotonic.now()
        pending.withLock { $0.append(.event(time: now, event: event, device: device)) }
    }

    /// Records a drive frame received now.
    func append(frame: FrameView, device: String) {
        let now = Monotonic.now()
        var channels: [(amplitude: Float, frequency: Float)] = []
        channels.reserveCapacity(frame.channelCount)
        for index in 0..<frame.channelCount { channels.append(frame[index]) }
        let count = pending.withLock { records in
            records.append(.frame(time: now, device: device, frameTime: frame.timeNanoseconds, channels: channels))
            return records.count
        }
        if count >= 4096 { try? flush() }
    }

    /// Records adaptive-trigger effects set now.
    func append(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?, device: String) {
        let now = Monotonic.now()
        pending.withLock { $0.append(.triggers(time: now, device: device, right: right, left: left)) }
    }

    /// Records stored effects played now.
    func append(native sequence: String, waited: Bool, device: String) {
        let now = Monotonic.now()
        pending.withLock { $0.append(.native(time: now, device: device, sequence: sequence, waited: waited)) }
    }

    /// Formats and writes out everything recorded so far.
    func flush() throws(BackendFailure) {
        let records = pending.withLock { records in
            defer { records.removeAll(keepingCapacity: true) }
            return records
        }
        guard !records.isEmpty else { return }
        var text = ""
        for record in records {
            switch record {
            case .event(let time, let event, let device):
                RecordingFormat.appendEvent(time: time, event: event, device: device, to: &text)
            case .frame(let time, let device, let frameTime, let channels):
                RecordingFormat.appendFrame(time: time, device: device, frameTime: frameTime, channels: channels, to: &text)
            case .triggers(let time, let device, let right, let left):
                RecordingFormat.appendTriggers(time: time, device: device, right: right, left: left, to: &text)
            case .native(let time, let device, let sequence, let waited):
                RecordingFormat.appendNative(time: time, device: device, sequence: sequence, waited: waited, to: &text)
            }
        }
        try write(Array(text.utf8))
    }

    private func write(_ bytes: [UInt8]) throws(BackendFailure) {
        do {
            _ = try file.descriptor.writeAll(bytes)
        } catch {
            throw BackendFailure(code: EIO, "recording.output: cannot write \(path): \(error)")
        }
    }

    /// A device as the recording's header describes it (the shape `recording.devices` accepts).
    static func describe(_ spec: DeviceSpec) -> RecordingFormat.Device {
        let kinds = Dictionary(uniqueKeysWithValues: DeviceConfiguration.actuators.map { ($0.value.rawValue, $0.key) })
        return RecordingFormat.Device(
            id: spec.id, name: spec.name, actuator: kinds[spec.actuator] ?? "unknown",
            minimumUpdateIntervalMs: Double(spec.minimumUpdateIntervalNanoseconds) / 1e6, wakeLatencyMs: Double(spec.wakeLatencyNanoseconds) / 1e6,
            channels: spec.channels.map { channel in
                RecordingFormat.Channel(
                    name: channel.name, actuator: kinds[channel.actuator] ?? "unknown", amplitudeSteps: Int(channel.amplitudeSteps),
                    frequencyRange: channel.frequencyRange.map { Double($0.lowerBound)...Double($0.upperBound) },
                    resonantFrequency: channel.resonantFrequency > 0 ? Double(channel.resonantFrequency) : nil,
                    nominalFrequency: channel.nominalFrequency > 0 ? Double(channel.nominalFrequency) : nil)
            }, adaptiveTriggers: spec.adaptiveTriggers, nativeEffects: spec.nativeEffects)
    }
}
