import CHapticsABI
import HapticsBus
import HapticsPluginKit

/// A device of `ListDevices` (an id and its `a{sv}` details, Docs/Daemon.md) as the C struct the host reads.
enum DeviceListing {
    static let actuators: [String: haptics_actuator_kind] = [
        "unknown": HAPTICS_ACTUATOR_UNKNOWN, "erm": HAPTICS_ACTUATOR_ERM, "lra": HAPTICS_ACTUATOR_LRA,
        "dualRumble": HAPTICS_ACTUATOR_DUAL_RUMBLE, "trigger": HAPTICS_ACTUATOR_TRIGGER, "voiceCoil": HAPTICS_ACTUATOR_VOICE_COIL,
    ]

    /// The listing entry of `spec` (``spec(id:details:)`` of the same `details`).
    static func device(_ spec: DeviceSpec, details: [(key: String, value: BusValue)]) -> haptics_client_device_v1 {
        var device = haptics_client_device_v1()
        device.device = spec.cValue
        device.owner_pid = whole(details["owner-pid"]?.doubleValue ?? 0)
        copyCString(details["backend"]?.stringValue ?? "", into: &device.backend)
        copyCString(spec.physicalID ?? "", into: &device.physical_id)
        if let reason = spec.unavailableReason {
            device.flags |= HAPTICS_DEVICE_UNAVAILABLE.rawValue
            copyCString(reason, into: &device.unavailable_reason)
        }
        return device
    }

    /// The device as its backend described it to the service: the listing, and the backend's facts
    /// (`describe`'s, Docs/Daemon.md names the keys), for `describe_device`.
    static func spec(id: String, details: [(key: String, value: BusValue)]) -> DeviceSpec {
        func string(_ key: String) -> String { details[key]?.stringValue ?? "" }
        func number(_ value: BusValue?) -> Double { value?.doubleValue ?? 0 }
        var channels: [ChannelSpec] = []
        if case .array(_, let entries)? = details["channels"]?.unwrapped {
            for case .dictionary(let channel) in entries.map(\.unwrapped) {
                var range: ClosedRange<Float>?
                if let low = channel["frequency-min-hz"]?.doubleValue, let high = channel["frequency-max-hz"]?.doubleValue, low > 0, high >= low {
                    range = Float(low)...Float(high)
                }
                channels.append(ChannelSpec(
                    name: channel["name"]?.stringValue ?? "main", actuator: actuators[channel["actuator"]?.stringValue ?? ""] ?? HAPTICS_ACTUATOR_UNKNOWN,
                    amplitudeSteps: max(whole(number(channel["amplitude-steps"])), 2), frequencyRange: range,
                    resonantFrequency: Float(number(channel["resonant-frequency-hz"])), nominalFrequency: Float(number(channel["nominal-frequency-hz"]))))
            }
        }
        if channels.isEmpty { channels = [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_UNKNOWN)] }
        let physical = string("physical-id")
        var spec = DeviceSpec(
            id: id, name: string("name"), actuator: actuators[string("actuator")] ?? HAPTICS_ACTUATOR_UNKNOWN, channels: channels,
            minimumUpdateIntervalNanoseconds: whole(number(details["minimum-update-interval-us"]) * 1000),
            wakeLatencyNanoseconds: whole(number(details["wake-latency-us"]) * 1000), physicalID: physical.isEmpty ? nil : physical,
            preference: whole(number(details["preference"])),
            unavailableReason: details["available"]?.boolValue == false ? string("unavailable-reason") : nil)
        func nanoseconds(_ key: String) -> UInt64 { whole(number(details[key])) }
        spec.periodStepNanoseconds = nanoseconds("period-step-ns")
        spec.adaptiveTriggers = details["adaptive-triggers"]?.boolValue ?? false
        if let rate = details["sample-rate-hz"]?.doubleValue {
            spec.sampleStream = SampleStreamSpec(
                rate: whole(rate), periodFrames: whole(number(details["sample-period-frames"])),
                bufferFrames: whole(number(details["sample-buffer-frames"])), latencyNanoseconds: nanoseconds("sample-latency-ns"))
        }
        if let offset = details["envelope-amplitude-offset"]?.doubleValue {
            spec.envelope = EnvelopeSpec(
                amplitudeOffset: Float(offset), ratedLevel: Float(number(details["envelope-rated-level"])),
                kickLevel: Float(number(details["envelope-kick-level"])), kickNanoseconds: nanoseconds("envelope-kick-ns"),
                maxContinuousNanoseconds: nanoseconds("envelope-max-continuous-ns"), restNanoseconds: nanoseconds("envelope-rest-ns"),
                acceptsLevels: details["envelope-accepts-levels"]?.boolValue ?? false)
        }
        return spec
    }

    /// `value` as a whole number of `T`, whatever the service sent: NaN is 0, and anything beyond
    /// `T`'s range (an infinity included) is its nearest bound, never a trap.
    static func whole<T: FixedWidthInteger>(_ value: Double) -> T {
        guard !value.isNaN else { return 0 }
        if value <= Double(T.min) { return T.min }
        if value >= Double(T.max) { return T.max }
        return T(value)
    }
}
