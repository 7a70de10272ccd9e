import CHapticsABI
import HapticsBus
import HapticsPluginKit

/// A device of `ListDevices` (an id and its `a{sv}` details, Docs/Daemon.md) as the C struct the host reads.
enum DeviceListing {
    static let actuators: [String: haptics_actuator_kind] = [
        "unknown": HAPTICS_ACTUATOR_UNKNOWN, "erm": HAPTICS_ACTUATOR_ERM, "lra": HAPTICS_ACTUATOR_LRA,
        "dualRumble": HAPTICS_ACTUATOR_DUAL_RUMBLE, "trigger": HAPTICS_ACTUATOR_TRIGGER, "voiceCoil": HAPTICS_ACTUATOR_VOICE_COIL,
    ]

    static func device(id: String, details: [(key: String, value: BusValue)]) -> haptics_client_device_v1 {
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
                    amplitudeSteps: UInt32(max(number(channel["amplitude-steps"]), 2)), frequencyRange: range,
                    resonantFrequency: Float(number(channel["resonant-frequency-hz"])), nominalFrequency: Float(number(channel["nominal-frequency-hz"]))))
            }
        }
        if channels.isEmpty { channels = [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_UNKNOWN)] }
        let spec = DeviceSpec(
            id: id, name: string("name"), actuator: actuators[string("actuator")] ?? HAPTICS_ACTUATOR_UNKNOWN, channels: channels,
            minimumUpdateIntervalNanoseconds: UInt64(number(details["minimum-update-interval-us"]) * 1000),
            wakeLatencyNanoseconds: UInt64(number(details["wake-latency-us"]) * 1000))
        var device = haptics_client_device_v1()
        device.device = spec.cValue
        device.owner_pid = UInt32(number(details["owner-pid"]))
        copyCString(string("backend"), into: &device.backend)
        copyCString(string("physical-id"), into: &device.physical_id)
        if details["available"]?.boolValue == false {
            device.flags |= HAPTICS_DEVICE_UNAVAILABLE.rawValue
            copyCString(string("unavailable-reason"), into: &device.unavailable_reason)
        }
        return device
    }
}
