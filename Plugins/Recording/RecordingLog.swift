import CHapticsABI
import HapticsPluginKit
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The recording: one JSON object per line, each stamped with `CLOCK_MONOTONIC` nanoseconds
/// (`t_ns`) taken when the call reached the backend.
///
/// The first line (`"event":"recording"`) gives the format version and the simulated devices;
/// then `open`, `wake`, `frame` (with the host's intended time `frame_ns` and every channel's
/// `amplitude` and `frequency_hz`), `stop`, `sleep`, `unplug` and `close` lines, in the order they
/// happened. Records are kept in memory and written out at every `sleep` and `close`, every 4096
/// records, and when the instance is destroyed.
final class RecordingLog: Sendable {
    static let formatVersion = 1

    /// One thing that happened, kept as plain values until the log is written out, so recording a
    /// frame costs a time stamp and an append, not JSON formatting.
    enum Record: Sendable {
        case event(time: UInt64, name: StaticString, device: String)
        case frame(time: UInt64, device: String, frameTime: UInt64, channels: [(amplitude: Float, frequency: Float)])
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
        let described = devices.map { Self.describe($0.spec) }.joined(separator: ",")
        let header = "{\"t_ns\":\(Monotonic.now()),\"event\":\"recording\",\"version\":\(Self.formatVersion),\"devices\":[\(described)]}\n"
        try write(Array(header.utf8))
    }

    /// Records `event` on `device` now.
    func append(event name: StaticString, device: String) {
        let now = Monotonic.now()
        pending.withLock { $0.append(.event(time: now, name: name, device: device)) }
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
            case .event(let time, let name, let device):
                text += "{\"t_ns\":\(time),\"event\":\"\(name)\",\"device\":"
                JSONValue.quote(device, into: &text)
                text += "}\n"
            case .frame(let time, let device, let frameTime, let channels):
                text += "{\"t_ns\":\(time),\"event\":\"frame\",\"device\":"
                JSONValue.quote(device, into: &text)
                text += ",\"frame_ns\":\(frameTime),\"channels\":["
                for (index, channel) in channels.enumerated() {
                    if index > 0 { text += "," }
                    text += "{\"amplitude\":\(channel.amplitude),\"frequency_hz\":\(channel.frequency)}"
                }
                text += "]}\n"
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

    /// A device in the same JSON shape `recording.devices` accepts.
    static func describe(_ spec: DeviceSpec) -> String {
        let kinds = Dictionary(uniqueKeysWithValues: DeviceConfiguration.actuators.map { ($0.value.rawValue, $0.key) })
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(spec.id)), ("name", .string(spec.name)), ("actuator", .string(kinds[spec.actuator] ?? "unknown")),
            ("min_update_interval_ms", .number(Double(spec.minimumUpdateIntervalNanoseconds) / 1e6)),
            ("wake_latency_ms", .number(Double(spec.wakeLatencyNanoseconds) / 1e6)),
        ]
        let channels: [JSONValue] = spec.channels.map { channel in
            var fields: [(key: String, value: JSONValue)] = [
                ("name", .string(channel.name)), ("actuator", .string(kinds[channel.actuator] ?? "unknown")),
                ("amplitude_steps", .number(Double(channel.amplitudeSteps))),
            ]
            if let range = channel.frequencyRange {
                fields += [("frequency_min_hz", .number(Double(range.lowerBound))), ("frequency_max_hz", .number(Double(range.upperBound)))]
            }
            if channel.resonantFrequency > 0 { fields.append(("resonant_frequency_hz", .number(Double(channel.resonantFrequency)))) }
            if channel.nominalFrequency > 0 { fields.append(("nominal_frequency_hz", .number(Double(channel.nominalFrequency)))) }
            return .object(JSONObject(fields))
        }
        members.append(("channels", .array(channels)))
        return JSONValue.object(JSONObject(members)).serialized()
    }
}
