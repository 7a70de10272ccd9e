import Haptics
import HapticsBus

/// A device as `ListDevices`, `GetDevice` and `DeviceAdded` describe it: an `a{sv}` with stable
/// keys (Docs/Daemon.md lists them), so clients in any language read it without a schema.
enum DeviceDetails {
    static func entries(_ owned: OwnedDevice, isDefault: Bool, ownerPID: UInt32) -> [(key: String, value: BusValue)] {
        let description = owned.description
        var entries: [(key: String, value: BusValue)] = [
            ("name", .string(description.name)),
            ("backend", .string(description.backend)),
            ("actuator", .string(description.actuator.rawValue)),
            ("available", .bool(owned.isUsable)),
            ("default", .bool(isDefault)),
            ("channels", .dictionaries(description.channels.map(channel))),
            ("minimum-update-interval-us", .uint64(UInt64((description.minimumUpdateInterval * 1e6).rounded()))),
            ("wake-latency-us", .uint64(UInt64((description.wakeLatency * 1e6).rounded()))),
            ("owner", .string("hapticsd")),
            ("owner-pid", .uint32(ownerPID)),
        ]
        if !owned.isUsable { entries.append(("unavailable-reason", .string(owned.unavailableReason ?? "it was unplugged"))) }
        if let physical = description.physicalID { entries.append(("physical-id", .string(physical))) }
        if !description.alternatives.isEmpty { entries.append(("alternatives", .strings(description.alternatives))) }
        entries += backendFacts(description)
        if let engine = owned.engine, let profile = engine.profile(forDevice: description.id) {
            entries.append(("calibration", .string(profile.source.rawValue)))
        }
        return entries
    }

    /// What the backend said beyond the listing, with the names and units of `haptics_device_info_v1`
    /// (`preference`, `period_step_ns`, `sample_*`, the envelope), so a client describes the device
    /// as an in-process host would.
    static func backendFacts(_ description: DeviceDescription) -> [(key: String, value: BusValue)] {
        func nanoseconds(_ seconds: Double) -> BusValue { .uint64(UInt64((max(seconds, 0) * 1e9).rounded())) }
        var entries: [(key: String, value: BusValue)] = [("preference", .int32(Int32(clamping: description.preference)))]
        if description.hasAdaptiveTriggers { entries.append(("adaptive-triggers", .bool(true))) }
        if let step = description.periodStep { entries.append(("period-step-ns", nanoseconds(step))) }
        if let stream = description.sampleStream {
            entries += [
                ("sample-rate-hz", .uint32(UInt32(clamping: stream.rate))), ("sample-period-frames", .uint32(UInt32(clamping: stream.periodFrames))),
                ("sample-buffer-frames", .uint32(UInt32(clamping: stream.bufferFrames))), ("sample-latency-ns", nanoseconds(stream.latency)),
            ]
        }
        if let envelope = description.envelope {
            entries += [
                ("envelope-amplitude-offset", .double(envelope.amplitudeOffset)), ("envelope-rated-level", .double(envelope.ratedLevel)),
                ("envelope-kick-level", .double(envelope.kickLevel)), ("envelope-kick-ns", nanoseconds(envelope.kickDuration)),
                ("envelope-max-continuous-ns", nanoseconds(envelope.maxContinuousDuration ?? 0)), ("envelope-rest-ns", nanoseconds(envelope.restDuration)),
                ("envelope-accepts-levels", .bool(envelope.acceptsLevels)),
            ]
        }
        return entries
    }

    static func channel(_ channel: ChannelDescription) -> [(key: String, value: BusValue)] {
        var entries: [(key: String, value: BusValue)] = [
            ("name", .string(channel.name)), ("actuator", .string(channel.actuator.rawValue)),
            ("amplitude-steps", .uint32(UInt32(clamping: channel.amplitudeSteps))),
        ]
        if let range = channel.frequencyRange {
            entries.append(("frequency-min-hz", .double(range.lowerBound)))
            entries.append(("frequency-max-hz", .double(range.upperBound)))
        }
        if let resonant = channel.resonantFrequency { entries.append(("resonant-frequency-hz", .double(resonant))) }
        if let nominal = channel.nominalFrequency { entries.append(("nominal-frequency-hz", .double(nominal))) }
        return entries
    }
}
