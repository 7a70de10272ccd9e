import Haptics
import CHapticsABI
import HapticsSupport

/// A recording written by the `recording` backend (JSON Lines), read back.
///
/// Tests compare it with what was played; `haptic-cal` prints and plots it. Every number is
/// range-checked as it is read, and an error names the line, the key, the value and the range:
/// time stamps (`t_ns`, `frame_ns`) 0…1.8e19 ns; amplitudes 0…1; frequencies 0…1e6 Hz (a
/// channel's `frequency_min_hz`…`frequency_max_hz` 1…100000 Hz, minimum ≤ maximum; resonant and
/// nominal frequencies 0…100000 Hz); `amplitude_steps` 2…65536; 1…4 channels per device and
/// frame; `min_update_interval_ms` and `wake_latency_ms` 0…10000 (the ranges `recording.devices`
/// accepts).
public struct Recording: Sendable, Hashable {
    /// What happened to a device at one instant.
    public enum Event: Sendable, Hashable {
        case open, wake, sleep, stop, close, unplug
        /// The device came back after an unplug (`replug_after_ms`).
        case replug
        /// A drive frame, with the time the host meant it for (``DriveFrame/time``).
        case frame(DriveFrame)

        /// The event's name as written in the file.
        public var name: String {
            switch self {
            case .open: "open"
            case .wake: "wake"
            case .sleep: "sleep"
            case .stop: "stop"
            case .close: "close"
            case .unplug: "unplug"
            case .replug: "replug"
            case .frame: "frame"
            }
        }
    }

    /// One line of the recording.
    public struct Entry: Sendable, Hashable {
        /// When the call reached the backend (`CLOCK_MONOTONIC`).
        public var time: HapticInstant
        /// The device concerned.
        public var deviceID: String
        /// What happened.
        public var event: Event
    }

    /// The format version of the file.
    public var version: Int
    /// The simulated devices, as the backend described them.
    public var devices: [DeviceDescription]
    /// Every entry, in file order.
    public var entries: [Entry]

    /// Reads the recording at `path`.
    public init(contentsOf path: String) throws(RecordingError) {
        let bytes: [UInt8]
        do { bytes = try readFile(atPath: path) } catch { throw RecordingError(path: path, line: nil, problem: "\(error)") }
        try self.init(jsonLines: String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// Parses recording text; `path` only names the source in errors.
    public init(jsonLines text: String, path: String = "<recording>") throws(RecordingError) {
        version = 0
        devices = []
        entries = []
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            do {
                try parseLine(String(line))
            } catch {
                throw RecordingError(path: path, line: offset + 1, problem: "\(error)")
            }
        }
        guard version > 0 else { throw RecordingError(path: path, line: 1, problem: "no 'recording' header line; not a recording file") }
    }

    private mutating func parseLine(_ line: String) throws {
        let object = try JSONCursor(root: JSONParser(allowTrailingCommas: false).parse(line)).object()
        let time = HapticInstant(nanoseconds: UInt64(try object.required("t_ns").number(in: 0...1.8e19)))
        let event = try object.required("event").string()
        if event == "recording" {
            version = try object.required("version").integer(in: 1...1)
            devices = try object.required("devices").array().map { try Recording.device($0.object()) }
            return
        }
        let device = try object.required("device").string()
        let parsed: Event
        switch event {
        case "open": parsed = .open
        case "wake": parsed = .wake
        case "sleep": parsed = .sleep
        case "stop": parsed = .stop
        case "close": parsed = .close
        case "unplug": parsed = .unplug
        case "replug": parsed = .replug
        case "frame":
            let frameTime = HapticInstant(nanoseconds: UInt64(try object.required("frame_ns").number(in: 0...1.8e19)))
            let channelCursor = try object.required("channels")
            let channels = try Recording.channels(channelCursor).map { entry in
                let channel = try entry.object()
                return ChannelDrive(
                    amplitude: try channel.required("amplitude").number(in: 0...1),
                    frequency: try channel.required("frequency_hz").number(in: 0...1e6))
            }
            parsed = .frame(DriveFrame(time: frameTime, channels: channels))
        default:
            throw object.error("unknown event '\(event)'")
        }
        entries.append(Entry(time: time, deviceID: device, event: parsed))
    }

    /// The elements of a `channels` array: 1 … `HAPTICS_MAX_CHANNELS` of them.
    private static func channels(_ cursor: JSONCursor) throws(JSONPathError) -> [JSONCursor] {
        let elements = try cursor.array()
        guard (1...Int(HAPTICS_MAX_CHANNELS)).contains(elements.count) else {
            throw cursor.error("expected 1...\(HAPTICS_MAX_CHANNELS) channels, found \(elements.count)")
        }
        return elements
    }

    private static func device(_ object: JSONObjectCursor) throws -> DeviceDescription {
        let channels = try Recording.channels(object.required("channels")).map { entry in
            let channel = try entry.object()
            var range: ClosedRange<Double>?
            if let low = try channel.optional("frequency_min_hz")?.number(in: 1...100_000) {
                range = low...(try channel.required("frequency_max_hz").number(in: low...100_000))
            }
            return ChannelDescription(
                name: try channel.required("name").string(),
                actuator: ActuatorKind(rawValue: try channel.required("actuator").string()) ?? .unknown,
                amplitudeSteps: try channel.required("amplitude_steps").integer(in: 2...65536), frequencyRange: range,
                resonantFrequency: try channel.optional("resonant_frequency_hz")?.number(in: 0...100_000),
                nominalFrequency: try channel.optional("nominal_frequency_hz")?.number(in: 0...100_000))
        }
        let idCursor = try object.required("id")
        let id = try idCursor.string()
        guard !id.isEmpty else { throw idCursor.error("expected a non-empty device id") }
        return DeviceDescription(
            id: id, name: try object.required("name").string(), backend: "recording",
            actuator: ActuatorKind(rawValue: try object.required("actuator").string()) ?? .unknown, channels: channels,
            minimumUpdateInterval: try object.required("min_update_interval_ms").number(in: 0...10_000) / 1000,
            wakeLatency: try object.required("wake_latency_ms").number(in: 0...10_000) / 1000)
    }

    /// The entries of one device, in order.
    public func entries(for deviceID: String) -> [Entry] {
        entries.filter { $0.deviceID == deviceID }
    }

    /// The drive frames of one device with the time each reached the backend.
    public func frames(for deviceID: String) -> [(received: HapticInstant, frame: DriveFrame)] {
        entries(for: deviceID).compactMap { entry in
            if case .frame(let frame) = entry.event { return (entry.time, frame) }
            return nil
        }
    }

    /// The names of one device's non-frame events in order (`["open", "wake", "stop", "sleep"]`).
    public func transitions(for deviceID: String) -> [String] {
        entries(for: deviceID).compactMap { entry in
            if case .frame = entry.event { return nil }
            return entry.event.name
        }
    }
}

/// A recording file that could not be read, with the file, the line and the problem.
public struct RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The 1-based line, if the problem is on one.
    public var line: Int?
    /// What is wrong.
    public var problem: String

    public var description: String {
        line.map { "\(path):\($0): \(problem)" } ?? "\(path): \(problem)"
    }
}
