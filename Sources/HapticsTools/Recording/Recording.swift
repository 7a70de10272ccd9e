import Haptics
import HapticsRecordingFormat
import HapticsSupport

/// A recording written by the `recording` backend (``RecordingFormat``, JSON Lines), read back.
///
/// Tests compare it with what was played; `haptic-cal` prints and plots it. Every number is
/// range-checked as it is read (the ranges are ``RecordingFormat``'s), and an error names the
/// line, the key, the value and the range.
public struct Recording: Sendable, Hashable {
    /// What happened to a device at one instant.
    public enum Event: Sendable, Hashable {
        case open, wake, sleep, stop, close, unplug
        /// The device came back after an unplug (`replug_after_ms`).
        case replug
        /// A drive frame, with the time the host meant it for (``DriveFrame/time``).
        case frame(DriveFrame)
        /// Adaptive-trigger effects set; nil: that trigger left as it was.
        case triggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?)
        /// Stored effects played (a DRV2605L's ROM): `sequence` in the backend's text form;
        /// `waited`: the call returned once they had played, else at once.
        case native(sequence: String, waited: Bool)

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
            case .triggers: "triggers"
            case .native: "native"
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
        switch try RecordingFormat.line(line) {
        case .header(_, let version, let devices):
            self.version = version
            self.devices = devices.map(Self.description)
        case .event(let time, let event, let device):
            let parsed: Event
            switch event {
            case .open: parsed = .open
            case .wake: parsed = .wake
            case .sleep: parsed = .sleep
            case .stop: parsed = .stop
            case .close: parsed = .close
            case .unplug: parsed = .unplug
            case .replug: parsed = .replug
            }
            entries.append(Entry(time: HapticInstant(nanoseconds: time), deviceID: device, event: parsed))
        case .frame(let time, let device, let frameTime, let channels):
            let frame = DriveFrame(time: HapticInstant(nanoseconds: frameTime), channels: channels.map { ChannelDrive(amplitude: $0.amplitude, frequency: $0.frequency) })
            entries.append(Entry(time: HapticInstant(nanoseconds: time), deviceID: device, event: .frame(frame)))
        case .triggers(let time, let device, let right, let left):
            entries.append(Entry(time: HapticInstant(nanoseconds: time), deviceID: device, event: .triggers(right: right, left: left)))
        case .native(let time, let device, let sequence, let waited):
            entries.append(Entry(time: HapticInstant(nanoseconds: time), deviceID: device, event: .native(sequence: sequence, waited: waited)))
        }
    }

    /// A device of the header as the core describes devices.
    private static func description(_ device: RecordingFormat.Device) -> DeviceDescription {
        var description = DeviceDescription(
            id: device.id, name: device.name, backend: "recording", actuator: ActuatorKind(rawValue: device.actuator) ?? .unknown,
            channels: device.channels.map { channel in
                ChannelDescription(
                    name: channel.name, actuator: ActuatorKind(rawValue: channel.actuator) ?? .unknown, amplitudeSteps: channel.amplitudeSteps,
                    frequencyRange: channel.frequencyRange, resonantFrequency: channel.resonantFrequency, nominalFrequency: channel.nominalFrequency)
            },
            minimumUpdateInterval: device.minimumUpdateIntervalMs / 1000, wakeLatency: device.wakeLatencyMs / 1000)
        description.hasAdaptiveTriggers = device.adaptiveTriggers
        description.hasNativeEffects = device.nativeEffects
        return description
    }

    /// The stored effects played on `deviceID`, in order, each with the time the backend received it.
    public func natives(for deviceID: String) -> [(received: HapticInstant, sequence: String, waited: Bool)] {
        entries(for: deviceID).compactMap { entry in
            if case .native(let sequence, let waited) = entry.event { return (entry.time, sequence, waited) }
            return nil
        }
    }

    /// The adaptive-trigger effects set on one device, with the time each reached the backend.
    public func triggers(for deviceID: String) -> [(received: HapticInstant, right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?)] {
        entries(for: deviceID).compactMap { entry in
            if case .triggers(let right, let left) = entry.event { return (entry.time, right, left) }
            return nil
        }
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
