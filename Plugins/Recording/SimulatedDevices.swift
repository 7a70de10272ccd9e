import CHapticsABI
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// A simulated device of the recording backend: what it says about itself, and how it misbehaves.
struct SimulatedDevice: Sendable {
    /// The description the backend reports.
    var spec: DeviceSpec
    /// After this many frames the device "unplugs": it leaves the device list, the host is told, and
    /// further calls fail with ENODEV. Tests use it to exercise device loss.
    var unplugAfterFrames: Int?
    /// After this many frames every further frame fails with EIO (a transport that broke), while the
    /// device stays present. Tests use it to exercise system errors.
    var failAfterFrames: Int?
    /// This long after an unplug, in milliseconds, the device comes back (the host is told it was
    /// added), as a pad plugged in again. Tests use it to exercise hotplug.
    var replugAfterMilliseconds: Int?
}

/// The built-in simulated devices, as data. `recording.devices` names them (or describes others in JSON).
enum Presets {
    static let all: [String: SimulatedDevice] = [
        "lra": SimulatedDevice(spec: DeviceSpec(
            id: "recording:lra", name: "Simulated 175 Hz LRA", actuator: HAPTICS_ACTUATOR_LRA,
            channels: [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_LRA, frequencyRange: 80...300, resonantFrequency: 175)],
            minimumUpdateIntervalNanoseconds: 1_000_000, wakeLatencyNanoseconds: 1_000_000)),
        "erm": SimulatedDevice(spec: DeviceSpec(
            id: "recording:erm", name: "Simulated coin ERM", actuator: HAPTICS_ACTUATOR_ERM,
            channels: [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_ERM, nominalFrequency: 200)],
            minimumUpdateIntervalNanoseconds: 1_000_000, wakeLatencyNanoseconds: 500_000)),
        "gamepad": SimulatedDevice(spec: DeviceSpec(
            id: "recording:gamepad", name: "Simulated dual-motor gamepad", actuator: HAPTICS_ACTUATOR_DUAL_RUMBLE,
            channels: [
                ChannelSpec(name: "strong", actuator: HAPTICS_ACTUATOR_ERM, nominalFrequency: 55),
                ChannelSpec(name: "weak", actuator: HAPTICS_ACTUATOR_ERM, nominalFrequency: 160),
            ],
            minimumUpdateIntervalNanoseconds: 10_000_000, wakeLatencyNanoseconds: 8_000_000)),
        "triggers": SimulatedDevice(spec: DeviceSpec(
            id: "recording:triggers", name: "Simulated gamepad with trigger motors", actuator: HAPTICS_ACTUATOR_DUAL_RUMBLE,
            channels: [
                ChannelSpec(name: "strong", actuator: HAPTICS_ACTUATOR_ERM, amplitudeSteps: 101, nominalFrequency: 55),
                ChannelSpec(name: "weak", actuator: HAPTICS_ACTUATOR_ERM, amplitudeSteps: 101, nominalFrequency: 160),
                ChannelSpec(name: "left-trigger", actuator: HAPTICS_ACTUATOR_TRIGGER, amplitudeSteps: 101, nominalFrequency: 120),
                ChannelSpec(name: "right-trigger", actuator: HAPTICS_ACTUATOR_TRIGGER, amplitudeSteps: 101, nominalFrequency: 120),
            ],
            minimumUpdateIntervalNanoseconds: 50_000_000, wakeLatencyNanoseconds: 8_000_000)),
        "dualsense": SimulatedDevice(spec: {
            var spec = DeviceSpec(
                id: "recording:dualsense", name: "Simulated gamepad with adaptive triggers", actuator: HAPTICS_ACTUATOR_DUAL_RUMBLE,
                channels: [
                    ChannelSpec(name: "strong", actuator: HAPTICS_ACTUATOR_ERM, nominalFrequency: 55),
                    ChannelSpec(name: "weak", actuator: HAPTICS_ACTUATOR_ERM, nominalFrequency: 160),
                ],
                minimumUpdateIntervalNanoseconds: 10_000_000, wakeLatencyNanoseconds: 8_000_000)
            spec.adaptiveTriggers = true
            return spec
        }()),
        // A DRV2605L breakout's LRA: frames are its real-time playback, and its ROM effects
        // (the i2c backend's mapping of the feedback vocabulary) are recorded as `native` lines.
        "drv2605l": SimulatedDevice(spec: {
            var spec = DeviceSpec(
                id: "recording:drv2605l", name: "Simulated DRV2605L with a 175 Hz LRA", actuator: HAPTICS_ACTUATOR_LRA,
                channels: [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_LRA, resonantFrequency: 175, nominalFrequency: 175)],
                minimumUpdateIntervalNanoseconds: 4_000_000, wakeLatencyNanoseconds: 1_000_000)
            spec.nativeEffects = true
            return spec
        }()),
        "hdrumble": SimulatedDevice(spec: DeviceSpec(
            id: "recording:hdrumble", name: "Simulated HD-rumble controller", actuator: HAPTICS_ACTUATOR_DUAL_RUMBLE,
            channels: [
                ChannelSpec(name: "left", actuator: HAPTICS_ACTUATOR_LRA, amplitudeSteps: 101, frequencyRange: 41...1253, resonantFrequency: 160),
                ChannelSpec(name: "right", actuator: HAPTICS_ACTUATOR_LRA, amplitudeSteps: 101, frequencyRange: 41...1253, resonantFrequency: 320),
            ],
            minimumUpdateIntervalNanoseconds: 30_000_000, wakeLatencyNanoseconds: 15_000_000)),
    ]

    /// Listed when `recording.devices` is not set.
    static let defaultNames = ["lra", "erm", "gamepad"]
}

/// Reads `recording.devices`: `none`; a comma-separated list of preset names and JSON files
/// (`lra,erm,/path/devices.json`); or inline JSON (an object or an array of objects).
enum DeviceConfiguration {
    static let key = "recording.devices"
    static let actuators: [String: haptics_actuator_kind] = [
        "unknown": HAPTICS_ACTUATOR_UNKNOWN, "erm": HAPTICS_ACTUATOR_ERM, "lra": HAPTICS_ACTUATOR_LRA,
        "dualRumble": HAPTICS_ACTUATOR_DUAL_RUMBLE, "trigger": HAPTICS_ACTUATOR_TRIGGER, "voiceCoil": HAPTICS_ACTUATOR_VOICE_COIL,
    ]

    static func parse(_ setting: String?) throws(BackendFailure) -> [SimulatedDevice] {
        guard let setting = setting?.trimmingSpaces, !setting.isEmpty else { return Presets.defaultNames.map { Presets.all[$0]! } }
        if setting == "none" { return [] }
        if setting.hasPrefix("[") || setting.hasPrefix("{") { return try decode(Array(setting.utf8), source: "\(key) (inline JSON)") }
        var devices: [SimulatedDevice] = []
        for token in setting.split(separator: ",").map({ String($0).trimmingSpaces }) where !token.isEmpty {
            if let preset = Presets.all[token] {
                devices.append(preset)
            } else if token.contains("/") || token.hasSuffix(".json") {
                let bytes: [UInt8]
                do { bytes = try readFile(atPath: token) } catch {
                    throw BackendFailure(code: error.errno, "\(key): \(error)")
                }
                devices += try decode(bytes, source: token)
            } else {
                throw BackendFailure(
                    code: EINVAL, "\(key): unknown preset '\(token)'; presets: \(Presets.all.keys.sorted().joined(separator: ", ")), or a JSON file path")
            }
        }
        var seen = Set<String>()
        for device in devices where !seen.insert(device.spec.id).inserted {
            throw BackendFailure(code: EINVAL, "\(key): device id '\(device.spec.id)' is listed twice")
        }
        return devices
    }

    static func decode(_ bytes: [UInt8], source: String) throws(BackendFailure) -> [SimulatedDevice] {
        do {
            let root = JSONCursor(root: try JSONParser().parse(bytes))
            let entries = root.value.array != nil ? try root.array() : [root]
            return try entries.map { entry throws(JSONPathError) in try device(entry.object()) }
        } catch let error as JSONSyntaxError {
            throw BackendFailure(code: EINVAL, "\(source): \(error)")
        } catch let error as JSONPathError {
            throw BackendFailure(code: EINVAL, "\(source): \(error)")
        } catch {
            throw BackendFailure(code: EINVAL, "\(source): \(error)")
        }
    }

    /// One device object: `id`, `name`, `actuator`, `channels`, `min_update_interval_ms`, `wake_latency_ms`,
    /// `unplug_after_frames`, `fail_after_frames`, `replug_after_ms`, `envelope`, `adaptive_triggers`,
    /// `native_effects` (a DRV2605L's ROM effects).
    static func device(_ object: JSONObjectCursor) throws(JSONPathError) -> SimulatedDevice {
        try object.rejectUnknownKeys(allowed: [
            "id", "name", "actuator", "channels", "min_update_interval_ms", "wake_latency_ms", "unplug_after_frames", "fail_after_frames",
            "replug_after_ms", "envelope", "adaptive_triggers", "native_effects",
        ])
        let id = try object.required("id").string()
        guard !id.isEmpty, id.utf8.count < Int(HAPTICS_ID_SIZE) else { throw object.error("id must be 1...\(HAPTICS_ID_SIZE - 1) bytes") }
        let channels = try object.required("channels").array()
        guard (1...Int(HAPTICS_MAX_CHANNELS)).contains(channels.count) else {
            throw object.error("channels must hold 1...\(HAPTICS_MAX_CHANNELS) entries, found \(channels.count)")
        }
        var spec = DeviceSpec(
            id: id, name: try object.optional("name")?.string() ?? id,
            actuator: try actuator(object.optional("actuator")),
            channels: try channels.map { entry throws(JSONPathError) in try channel(entry.object()) },
            minimumUpdateIntervalNanoseconds: UInt64((try object.optional("min_update_interval_ms")?.number(in: 0...10_000) ?? 1) * 1e6),
            wakeLatencyNanoseconds: UInt64((try object.optional("wake_latency_ms")?.number(in: 0...10_000) ?? 0) * 1e6),
            envelope: try object.optional("envelope").map { cursor throws(JSONPathError) in try envelope(cursor.object()) })
        spec.adaptiveTriggers = try object.optional("adaptive_triggers")?.bool() ?? false
        spec.nativeEffects = try object.optional("native_effects")?.bool() ?? false
        return SimulatedDevice(
            spec: spec, unplugAfterFrames: try object.optional("unplug_after_frames")?.integer(in: 0...Int(Int32.max)),
            failAfterFrames: try object.optional("fail_after_frames")?.integer(in: 0...Int(Int32.max)),
            replugAfterMilliseconds: try object.optional("replug_after_ms")?.integer(in: 0...60_000))
    }

    /// The drive envelope a simulated device states as its own (the GPIO backend's board limits, for
    /// a stand-in of a board): `amplitude_offset`, `rated_level`, `kick_level` (0…1), `kick_ms`,
    /// `max_continuous_ms` (0: no cut), `rest_ms`. The recording backend still records the frames
    /// as the engine sends them; a simulation reading them applies the envelope itself.
    static func envelope(_ object: JSONObjectCursor) throws(JSONPathError) -> EnvelopeSpec {
        try object.rejectUnknownKeys(allowed: ["amplitude_offset", "rated_level", "kick_level", "kick_ms", "max_continuous_ms", "rest_ms"])
        let offset = try object.optional("amplitude_offset")?.number(in: 0...0.9) ?? 0
        let rated = try object.optional("rated_level")?.number(in: 0.05...1) ?? 1
        let kick = try object.optional("kick_level")?.number(in: rated...1) ?? rated
        func nanoseconds(_ key: String, default value: Double) throws(JSONPathError) -> UInt64 {
            UInt64(((try object.optional(key)?.number(in: 0...600_000)) ?? value) * 1e6)
        }
        return EnvelopeSpec(
            amplitudeOffset: Float(offset), ratedLevel: Float(rated), kickLevel: Float(kick), kickNanoseconds: try nanoseconds("kick_ms", default: 0),
            maxContinuousNanoseconds: try nanoseconds("max_continuous_ms", default: 0), restNanoseconds: try nanoseconds("rest_ms", default: 20))
    }

    static func channel(_ object: JSONObjectCursor) throws(JSONPathError) -> ChannelSpec {
        try object.rejectUnknownKeys(allowed: [
            "name", "actuator", "amplitude_steps", "frequency_min_hz", "frequency_max_hz", "resonant_frequency_hz", "nominal_frequency_hz",
        ])
        var range: ClosedRange<Float>?
        if let low = object.optional("frequency_min_hz") {
            let minimum = try low.number(in: 1...100_000)
            let maximum = try object.required("frequency_max_hz").number(in: minimum...100_000)
            range = Float(minimum)...Float(maximum)
        }
        return ChannelSpec(
            name: try object.required("name").string(), actuator: try actuator(object.optional("actuator")),
            amplitudeSteps: UInt32(try object.optional("amplitude_steps")?.integer(in: 2...65536) ?? 256),
            frequencyRange: range,
            resonantFrequency: Float(try object.optional("resonant_frequency_hz")?.number(in: 0...100_000) ?? 0),
            nominalFrequency: Float(try object.optional("nominal_frequency_hz")?.number(in: 0...100_000) ?? 0))
    }

    static func actuator(_ cursor: JSONCursor?) throws(JSONPathError) -> haptics_actuator_kind {
        guard let cursor else { return HAPTICS_ACTUATOR_UNKNOWN }
        return actuators[try cursor.string(oneOf: actuators.keys.sorted())]!
    }
}

extension String {
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }
}
