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
/// happened. Lines are buffered and written out at every `sleep` and `close`, when the buffer
/// passes 64 KiB, and when the instance is destroyed.
final class RecordingLog: Sendable {
    static let formatVersion = 1
    private let file: OwnedFileDescriptor
    private let path: String
    private let buffer = Mutex<[UInt8]>([])

    init(path: String, devices: [SimulatedDevice]) throws(BackendFailure) {
        do {
            file = try OwnedFileDescriptor(path: path, .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw BackendFailure(code: error.errno, "recording.output: \(error) (choose a writable path)")
        }
        self.path = path
        let described = devices.map { Self.describe($0.spec) }.joined(separator: ",")
        append(event: "recording", device: nil, extra: "\"version\":\(Self.formatVersion),\"devices\":[\(described)]")
        try flush()
    }

    /// Appends one line for `event` on `device`; `extra` is more `"key":value` members.
    func append(event: String, device: String?, extra: String? = nil) {
        buffer.withLock { bytes in
            var line = "{\"t_ns\":\(Self.monotonicNanoseconds()),\"event\":\"\(event)\""
            if let device {
                line += ",\"device\":"
                JSONValue.quote(device, into: &line)
            }
            if let extra { line += "," + extra }
            line += "}\n"
            bytes += line.utf8
        }
        if buffer.withLock({ $0.count }) > 64 << 10 { try? flush() }
    }

    /// Writes out the buffered lines.
    func flush() throws(BackendFailure) {
        let result: Result<Void, BackendFailure> = buffer.withLock { bytes in
            guard !bytes.isEmpty else { return .success(()) }
            do {
                _ = try file.descriptor.writeAll(bytes)
                bytes.removeAll(keepingCapacity: true)
                return .success(())
            } catch {
                return .failure(BackendFailure(code: EIO, "recording.output: cannot write \(path): \(error)"))
            }
        }
        try result.get()
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
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
