import HapticsSupport
import HapticsTriggers

/// The recording backend's file, defined once: the backend writes it with these functions and
/// `HapticsTools`' `Recording` reads it with ``line(_:)``.
///
/// JSON Lines, one object per line, each stamped with `CLOCK_MONOTONIC` nanoseconds (`t_ns`) taken
/// when the call reached the backend. The first line (`"event": "recording"`) gives the format
/// ``version`` and the simulated devices (``Device``); then `open`, `wake`, `frame` (the host's
/// intended time `frame_ns` and every channel's `amplitude` and `frequency_hz`), `triggers` (a
/// device with adaptive triggers: `right` and `left` in ``AdaptiveTriggerEffect/text`` form, null
/// for a trigger left as it was), `native` (a device with stored effects, a DRV2605L's ROM:
/// `sequence` in its text form, `waited` whether the call returned only once it had played), `stop`,
/// `sleep`, `unplug`, `replug` and `close`, in the order they happened.
///
/// Reading checks every number's range and names the key, the value and the range: time stamps
/// 0…1.8e19 ns; amplitudes 0…1; frequencies 0…1e6 Hz (a channel's `frequency_min_hz` …
/// `frequency_max_hz` 1…100000 Hz, minimum ≤ maximum; resonant and nominal frequencies 0…100000 Hz);
/// `amplitude_steps` 2…65536; 1…``maximumChannels`` channels per device and frame;
/// `min_update_interval_ms` and `wake_latency_ms` 0…10000 (the ranges `recording.devices` accepts).
public enum RecordingFormat {
    /// The format version written in the header.
    public static let version = 1
    /// The most channels a device or frame has (the plugin ABI's `HAPTICS_MAX_CHANNELS`).
    public static let maximumChannels = 4
    /// What happened to a device, besides a frame: its name in the file is the case's.
    public enum Event: String, Sendable, Hashable, CaseIterable {
        /// Opened by the host.
        case open
        /// Woken (prepared).
        case wake
        /// Put to sleep (idle).
        case sleep
        /// Stopped: output off at once.
        case stop
        /// Closed by the host.
        case close
        /// Unplugged (simulated).
        case unplug
        /// Back after an unplug (`replug_after_ms`).
        case replug
    }

    /// A channel of a simulated device, as the header describes it.
    public struct Channel: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// Its actuator kind's name (`lra`, `erm`, `dualRumble`, …).
        public var actuator: String
        /// How many amplitude steps it has, 2…65536.
        public var amplitudeSteps: Int
        /// The frequencies it can be driven at, Hz; nil when its frequency cannot be chosen.
        public var frequencyRange: ClosedRange<Double>?
        /// Its resonance, Hz, if it has one.
        public var resonantFrequency: Double?
        /// The frequency it vibrates at, Hz, if stated.
        public var nominalFrequency: Double?

        /// A channel.
        public init(
            name: String, actuator: String, amplitudeSteps: Int, frequencyRange: ClosedRange<Double>? = nil, resonantFrequency: Double? = nil,
            nominalFrequency: Double? = nil
        ) {
            self.name = name
            self.actuator = actuator
            self.amplitudeSteps = amplitudeSteps
            self.frequencyRange = frequencyRange
            self.resonantFrequency = resonantFrequency
            self.nominalFrequency = nominalFrequency
        }
    }

    /// A simulated device, as the header describes it (the shape `recording.devices` accepts).
    public struct Device: Sendable, Hashable {
        /// Its stable id (`recording:lra`).
        public var id: String
        /// Its name.
        public var name: String
        /// Its actuator kind's name.
        public var actuator: String
        /// The shortest interval between frames it renders, in milliseconds.
        public var minimumUpdateIntervalMs: Double
        /// How long it takes to wake, in milliseconds.
        public var wakeLatencyMs: Double
        /// Its channels.
        public var channels: [Channel]
        /// It has adaptive triggers (written only when true).
        public var adaptiveTriggers: Bool
        /// It plays stored effects, a DRV2605L's ROM (written only when true).
        public var nativeEffects: Bool

        /// A device.
        public init(
            id: String, name: String, actuator: String, minimumUpdateIntervalMs: Double, wakeLatencyMs: Double, channels: [Channel],
            adaptiveTriggers: Bool = false, nativeEffects: Bool = false
        ) {
            self.adaptiveTriggers = adaptiveTriggers
            self.nativeEffects = nativeEffects
            self.id = id
            self.name = name
            self.actuator = actuator
            self.minimumUpdateIntervalMs = minimumUpdateIntervalMs
            self.wakeLatencyMs = wakeLatencyMs
            self.channels = channels
        }

        /// The device as one JSON object.
        public var json: JSONValue {
            let channels: [JSONValue] = channels.map { channel in
                var fields: [(key: String, value: JSONValue)] = [
                    ("name", .string(channel.name)), ("actuator", .string(channel.actuator)), ("amplitude_steps", .number(Double(channel.amplitudeSteps))),
                ]
                if let range = channel.frequencyRange {
                    fields += [("frequency_min_hz", .number(range.lowerBound)), ("frequency_max_hz", .number(range.upperBound))]
                }
                if let resonance = channel.resonantFrequency { fields.append(("resonant_frequency_hz", .number(resonance))) }
                if let nominal = channel.nominalFrequency { fields.append(("nominal_frequency_hz", .number(nominal))) }
                return .object(JSONObject(fields))
            }
            var fields: [(key: String, value: JSONValue)] = [
                ("id", .string(id)), ("name", .string(name)), ("actuator", .string(actuator)),
                ("min_update_interval_ms", .number(minimumUpdateIntervalMs)), ("wake_latency_ms", .number(wakeLatencyMs)),
                ("channels", .array(channels)),
            ]
            if adaptiveTriggers { fields.append(("adaptive_triggers", .bool(true))) }
            if nativeEffects { fields.append(("native_effects", .bool(true))) }
            return .object(JSONObject(fields))
        }
    }

    /// One line of a recording.
    public enum Line: Sendable {
        /// The header: the format version and the simulated devices.
        case header(time: UInt64, version: Int, devices: [Device])
        /// A power transition or an unplug of `device`.
        case event(time: UInt64, event: Event, device: String)
        /// A drive frame of `device`: the host's intended time and each channel's amplitude (0…1) and frequency (Hz).
        case frame(time: UInt64, device: String, frameTime: UInt64, channels: [(amplitude: Double, frequency: Double)])
        /// Adaptive-trigger effects set on `device`; nil: that trigger left as it was.
        case triggers(time: UInt64, device: String, right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?)
        /// Stored effects played on `device`: `sequence` in the backend's text form; `waited`: the
        /// call returned once they had played (`play_native`), else at once (`start_native`).
        case native(time: UInt64, device: String, sequence: String, waited: Bool)
    }

    // MARK: - Writing

    /// The header line (ending with a newline).
    public static func header(time: UInt64, devices: [Device]) -> String {
        "{\"t_ns\":\(time),\"event\":\"recording\",\"version\":\(version),\"devices\":[\(devices.map { $0.json.serialized() }.joined(separator: ","))]}\n"
    }

    /// Appends an event line.
    public static func appendEvent(time: UInt64, event: Event, device: String, to text: inout String) {
        text += "{\"t_ns\":\(time),\"event\":\"\(event.rawValue)\",\"device\":"
        JSONValue.quote(device, into: &text)
        text += "}\n"
    }

    /// Appends a frame line.
    public static func appendFrame(
        time: UInt64, device: String, frameTime: UInt64, channels: [(amplitude: Float, frequency: Float)], to text: inout String
    ) {
        text += "{\"t_ns\":\(time),\"event\":\"frame\",\"device\":"
        JSONValue.quote(device, into: &text)
        text += ",\"frame_ns\":\(frameTime),\"channels\":["
        for (index, channel) in channels.enumerated() {
            if index > 0 { text += "," }
            text += "{\"amplitude\":\(channel.amplitude),\"frequency_hz\":\(channel.frequency)}"
        }
        text += "]}\n"
    }

    /// Appends a trigger line.
    public static func appendTriggers(time: UInt64, device: String, right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?, to text: inout String) {
        text += "{\"t_ns\":\(time),\"event\":\"triggers\",\"device\":"
        JSONValue.quote(device, into: &text)
        for (key, effect) in [("right", right), ("left", left)] {
            text += ",\"\(key)\":"
            if let effect { JSONValue.quote(effect.text, into: &text) } else { text += "null" }
        }
        text += "}\n"
    }

    /// Appends a line for stored effects played.
    public static func appendNative(time: UInt64, device: String, sequence: String, waited: Bool, to text: inout String) {
        text += "{\"t_ns\":\(time),\"event\":\"native\",\"device\":"
        JSONValue.quote(device, into: &text)
        text += ",\"sequence\":"
        JSONValue.quote(sequence, into: &text)
        text += ",\"waited\":\(waited)}\n"
    }

    // MARK: - Reading

    /// One line read, every value range-checked.
    /// - Throws: the JSON syntax error, or a ``JSONPathError`` naming the key, the value and the range.
    public static func line(_ text: String) throws -> Line {
        let object = try JSONCursor(root: JSONParser(allowTrailingCommas: false).parse(text)).object()
        let time = UInt64(try object.required("t_ns").number(in: 0...1.8e19))
        let event = try object.required("event").string()
        if event == "recording" {
            return .header(
                time: time, version: try object.required("version").integer(in: 1...version),
                devices: try object.required("devices").array().map { try device($0.object()) })
        }
        let deviceID = try object.required("device").string()
        if let known = Event(rawValue: event) { return .event(time: time, event: known, device: deviceID) }
        if event == "triggers" {
            func effect(_ key: String) throws -> AdaptiveTriggerEffect? {
                guard let cursor = object.optional(key), cursor.value != .null else { return nil }
                let text = try cursor.string()
                do { return try AdaptiveTriggerEffect(text: text) } catch { throw cursor.error("\(error)") }
            }
            return .triggers(time: time, device: deviceID, right: try effect("right"), left: try effect("left"))
        }
        if event == "native" {
            return .native(time: time, device: deviceID, sequence: try object.required("sequence").string(), waited: try object.required("waited").bool())
        }
        guard event == "frame" else { throw object.error("unknown event '\(event)'") }
        let frameTime = UInt64(try object.required("frame_ns").number(in: 0...1.8e19))
        let channels = try Self.channels(object.required("channels")).map { entry in
            let channel = try entry.object()
            return (amplitude: try channel.required("amplitude").number(in: 0...1), frequency: try channel.required("frequency_hz").number(in: 0...1e6))
        }
        return .frame(time: time, device: deviceID, frameTime: frameTime, channels: channels)
    }

    /// The elements of a `channels` array: 1 … ``maximumChannels`` of them.
    private static func channels(_ cursor: JSONCursor) throws(JSONPathError) -> [JSONCursor] {
        let elements = try cursor.array()
        guard (1...maximumChannels).contains(elements.count) else {
            throw cursor.error("expected 1...\(maximumChannels) channels, found \(elements.count)")
        }
        return elements
    }

    private static func device(_ object: JSONObjectCursor) throws -> Device {
        let channels = try Self.channels(object.required("channels")).map { entry in
            let channel = try entry.object()
            var range: ClosedRange<Double>?
            if let low = try channel.optional("frequency_min_hz")?.number(in: 1...100_000) {
                range = low...(try channel.required("frequency_max_hz").number(in: low...100_000))
            }
            return Channel(
                name: try channel.required("name").string(), actuator: try channel.required("actuator").string(),
                amplitudeSteps: try channel.required("amplitude_steps").integer(in: 2...65536), frequencyRange: range,
                resonantFrequency: try channel.optional("resonant_frequency_hz")?.number(in: 0...100_000),
                nominalFrequency: try channel.optional("nominal_frequency_hz")?.number(in: 0...100_000))
        }
        let idCursor = try object.required("id")
        let id = try idCursor.string()
        guard !id.isEmpty else { throw idCursor.error("expected a non-empty device id") }
        return Device(
            id: id, name: try object.required("name").string(), actuator: try object.required("actuator").string(),
            minimumUpdateIntervalMs: try object.required("min_update_interval_ms").number(in: 0...10_000),
            wakeLatencyMs: try object.required("wake_latency_ms").number(in: 0...10_000), channels: channels,
            adaptiveTriggers: try object.optional("adaptive_triggers")?.bool() ?? false,
            nativeEffects: try object.optional("native_effects")?.bool() ?? false)
    }
}
