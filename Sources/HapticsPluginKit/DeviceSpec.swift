import CHapticsABI
import HapticsSupport

/// How a Swift backend describes a channel; becomes a `haptics_channel_v1`.
public struct ChannelSpec: Sendable, Hashable {
    /// Short name: `main`, `strong`, `weak`, `left-trigger` (31 bytes at most).
    public var name: String
    /// A `haptics_actuator_kind` value.
    public var actuator: UInt32
    /// Distinct amplitude levels, off included.
    public var amplitudeSteps: UInt32
    /// Accepted drive frequencies in Hz, `nil` when the frequency cannot be chosen.
    public var frequencyRange: ClosedRange<Float>?
    /// Resonant frequency in Hz, 0 if unknown.
    public var resonantFrequency: Float
    /// Frequency in Hz the channel vibrates at when it cannot be chosen, 0 if unknown.
    public var nominalFrequency: Float

    /// A channel description.
    public init(
        name: String, actuator: haptics_actuator_kind, amplitudeSteps: UInt32 = 256, frequencyRange: ClosedRange<Float>? = nil,
        resonantFrequency: Float = 0, nominalFrequency: Float = 0
    ) {
        self.name = name
        self.actuator = actuator.rawValue
        self.amplitudeSteps = amplitudeSteps
        self.frequencyRange = frequencyRange
        self.resonantFrequency = resonantFrequency
        self.nominalFrequency = nominalFrequency
    }

    /// The C description.
    public var cValue: haptics_channel_v1 {
        var raw = haptics_channel_v1()
        copyCString(name, into: &raw.name)
        raw.actuator = actuator
        raw.capabilities = HAPTICS_CAP_AMPLITUDE.rawValue | (frequencyRange != nil ? HAPTICS_CAP_FREQUENCY.rawValue : 0)
        raw.amplitude_steps = amplitudeSteps
        raw.frequency_min_hz = frequencyRange?.lowerBound ?? 0
        raw.frequency_max_hz = frequencyRange?.upperBound ?? 0
        raw.resonant_frequency_hz = resonantFrequency
        raw.nominal_frequency_hz = nominalFrequency
        return raw
    }
}

/// How a Swift backend describes a device; becomes a `haptics_device_v1`.
public struct DeviceSpec: Sendable, Hashable {
    /// Stable id, unique across backends (127 bytes at most): `recording:lra`.
    public var id: String
    /// Human-readable name.
    public var name: String
    /// A `haptics_actuator_kind` value.
    public var actuator: UInt32
    /// The channels (1…4).
    public var channels: [ChannelSpec]
    /// Shortest interval between frames, in nanoseconds.
    public var minimumUpdateIntervalNanoseconds: UInt64
    /// Wake latency, in nanoseconds.
    public var wakeLatencyNanoseconds: UInt64
    /// The physical device shared with other backends (`haptics_device_info_v1.physical_id`), or nil.
    public var physicalID: String?
    /// The preference among backends listing the same physical device (a DualSense's coils 300,
    /// hidraw 200, evdev 100).
    public var preference: Int32
    /// Why the device cannot be used now, with the fix; nil when it can.
    public var unavailableReason: String?
    /// What the backend does to a drive, or nil when it passes amplitudes through.
    public var envelope: EnvelopeSpec?
    /// The device plays frequencies as whole periods of this many nanoseconds (0: any frequency).
    public var periodStepNanoseconds: UInt64 = 0
    /// The stream of samples the device takes instead of frames (ABI 1.4), or nil for a frame device.
    public var sampleStream: SampleStreamSpec?
    /// The device has adaptive triggers (ABI 1.6): its driver implements ``DeviceDriver/setTriggers(right:left:)``.
    public var adaptiveTriggers = false
    /// The device plays effects stored in it (ABI 1.7): its driver implements ``DeviceDriver/playNative(_:)``.
    public var nativeEffects = false
    /// The device calibrates itself (ABI 1.7): its driver implements ``DeviceDriver/selfCalibrate()``
    /// and ``DeviceDriver/restoreCalibration(_:)``.
    public var selfCalibration = false

    /// A device description.
    public init(
        id: String, name: String, actuator: haptics_actuator_kind, channels: [ChannelSpec],
        minimumUpdateIntervalNanoseconds: UInt64, wakeLatencyNanoseconds: UInt64, physicalID: String? = nil,
        preference: Int32 = 0, unavailableReason: String? = nil, envelope: EnvelopeSpec? = nil
    ) {
        self.id = id
        self.name = name
        self.actuator = actuator.rawValue
        self.channels = channels
        self.minimumUpdateIntervalNanoseconds = minimumUpdateIntervalNanoseconds
        self.wakeLatencyNanoseconds = wakeLatencyNanoseconds
        self.physicalID = physicalID
        self.preference = preference
        self.unavailableReason = unavailableReason
        self.envelope = envelope
    }

    /// The C description of the facts beyond `haptics_device_v1` (its `struct_size` is this build's).
    public var infoValue: haptics_device_info_v1 {
        var info = haptics_device_info_v1()
        info.struct_size = UInt32(MemoryLayout<haptics_device_info_v1>.size)
        info.preference = preference
        copyCString(physicalID ?? "", into: &info.physical_id)
        if let unavailableReason {
            info.flags |= HAPTICS_DEVICE_UNAVAILABLE.rawValue
            copyCString(unavailableReason, into: &info.unavailable_reason)
        }
        info.period_step_ns = periodStepNanoseconds
        if adaptiveTriggers { info.flags |= HAPTICS_DEVICE_ADAPTIVE_TRIGGERS.rawValue }
        if nativeEffects { info.flags |= HAPTICS_DEVICE_NATIVE_EFFECTS.rawValue }
        if selfCalibration { info.flags |= HAPTICS_DEVICE_SELF_CALIBRATION.rawValue }
        if let sampleStream {
            info.flags |= HAPTICS_DEVICE_TAKES_SAMPLES.rawValue
            info.sample_rate_hz = sampleStream.rate
            info.sample_period_frames = sampleStream.periodFrames
            info.sample_buffer_frames = sampleStream.bufferFrames
            info.sample_latency_ns = sampleStream.latencyNanoseconds
        }
        if let envelope {
            info.flags |= HAPTICS_DEVICE_HAS_ENVELOPE.rawValue
            info.amplitude_offset = envelope.amplitudeOffset
            info.rated_level = envelope.ratedLevel
            info.kick_level = envelope.kickLevel
            info.kick_max_ns = envelope.kickNanoseconds
            info.max_continuous_ns = envelope.maxContinuousNanoseconds
            info.rest_ns = envelope.restNanoseconds
            if envelope.acceptsLevels { info.flags |= HAPTICS_DEVICE_ACCEPTS_LEVELS.rawValue }
        }
        return info
    }

    /// Writes ``infoValue`` into a host's `info`: only what its `struct_size` covers (a host built
    /// with an older header has a shorter struct), keeping that `struct_size`.
    public func writeInfo(into info: UnsafeMutablePointer<haptics_device_info_v1>) {
        var full = infoValue
        let hostSize = info.pointee.struct_size
        let room = min(Int(hostSize), MemoryLayout<haptics_device_info_v1>.size)
        withUnsafeBytes(of: &full) { source in
            UnsafeMutableRawPointer(info).copyMemory(from: source.baseAddress!, byteCount: room)
        }
        if room >= MemoryLayout<UInt32>.size { info.pointee.struct_size = hostSize }
    }

    /// The C description (channels past HAPTICS_MAX_CHANNELS are dropped).
    public var cValue: haptics_device_v1 {
        var raw = haptics_device_v1()
        copyCString(id, into: &raw.id)
        copyCString(name, into: &raw.name)
        raw.actuator = actuator
        let count = min(channels.count, Int(HAPTICS_MAX_CHANNELS))
        raw.channel_count = UInt32(count)
        withUnsafeMutableBytes(of: &raw.channels) { bytes in
            let slots = bytes.bindMemory(to: haptics_channel_v1.self)
            for index in 0..<count { slots[index] = channels[index].cValue }
        }
        raw.min_update_interval_ns = minimumUpdateIntervalNanoseconds
        raw.wake_latency_ns = wakeLatencyNanoseconds
        return raw
    }
}

extension DeviceSpec {
    /// The id of the listing for a configuration file that could not be used: `BACKEND:NAME` for
    /// `…/NAME.json`, else `BACKEND:CATEGORY` (`gpio:boards`, a problem with no one file).
    public static func unusableFileID(backend: String, category: String, _ failure: ConfigFileError) -> String {
        guard failure.file.hasSuffix(".json"), let name = failure.file.split(separator: "/").last else { return "\(backend):\(category)" }
        return "\(backend):" + name.dropLast(".json".count)
    }

    /// The unavailable listing of a configuration file that could not be used (`noun`: `board file`),
    /// its error the reason: one bad file neither hides the others nor goes unseen.
    public static func unusableFile(backend: String, category: String, noun: String, _ failure: ConfigFileError) -> DeviceSpec {
        DeviceSpec(
            id: unusableFileID(backend: backend, category: category, failure), name: "unusable \(noun)", actuator: HAPTICS_ACTUATOR_UNKNOWN,
            channels: [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_UNKNOWN, amplitudeSteps: 2)],
            minimumUpdateIntervalNanoseconds: 0, wakeLatencyNanoseconds: 0, unavailableReason: failure.description)
    }
}

/// The stream of samples a device takes (`haptics_device_info_v1`'s `sample_*` fields, ABI 1.4).
public struct SampleStreamSpec: Sendable, Hashable {
    /// Frames per second.
    public var rate: UInt32
    /// Frames the device takes at a time (one period): the host's block size.
    public var periodFrames: UInt32
    /// Frames the device holds queued at most (one buffer).
    public var bufferFrames: UInt32
    /// Time from a sample leaving the buffer to the actuator moving, in nanoseconds (0: unknown).
    public var latencyNanoseconds: UInt64

    /// A stream description.
    public init(rate: UInt32, periodFrames: UInt32, bufferFrames: UInt32, latencyNanoseconds: UInt64 = 0) {
        self.rate = rate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.latencyNanoseconds = latencyNanoseconds
    }
}

/// What a backend does to a drive before it reaches the hardware (`haptics_device_info_v1`'s envelope).
public struct EnvelopeSpec: Sendable, Hashable {
    /// A non-zero amplitude `a` becomes the level `offset + a × (1 − offset)`.
    public var amplitudeOffset: Float
    /// The highest level held steadily, 0…1.
    public var ratedLevel: Float
    /// The highest level during the kick at the start of a drive, ≥ ``ratedLevel``.
    public var kickLevel: Float
    /// How long the kick may last, in nanoseconds.
    public var kickNanoseconds: UInt64
    /// A drive longer than this is cut, in nanoseconds; 0 for never.
    public var maxContinuousNanoseconds: UInt64
    /// How long the drive must be off to end a drive, in nanoseconds.
    public var restNanoseconds: UInt64
    /// Whether the backend honours ``FrameView/isLevels`` (a frame of levels, not lifted over the
    /// offset): `HAPTICS_DEVICE_ACCEPTS_LEVELS`, so calibration can measure the actuator from zero.
    public var acceptsLevels: Bool

    /// An envelope.
    public init(
        amplitudeOffset: Float, ratedLevel: Float, kickLevel: Float, kickNanoseconds: UInt64, maxContinuousNanoseconds: UInt64,
        restNanoseconds: UInt64, acceptsLevels: Bool = false
    ) {
        self.acceptsLevels = acceptsLevels
        self.amplitudeOffset = amplitudeOffset
        self.ratedLevel = ratedLevel
        self.kickLevel = kickLevel
        self.kickNanoseconds = kickNanoseconds
        self.maxContinuousNanoseconds = maxContinuousNanoseconds
        self.restNanoseconds = restNanoseconds
    }
}

/// Copies `text` into a fixed-size C char array, truncated at a UTF-8 boundary, always NUL-terminated.
public func copyCString<T>(_ text: String, into array: inout T) {
    withUnsafeMutableBytes(of: &array) { bytes in
        guard !bytes.isEmpty else { return }
        let utf8 = Array(text.utf8)
        var cut = min(utf8.count, bytes.count - 1)
        // Never end inside a multi-byte sequence: back off to the start of the cut character.
        while cut < utf8.count, cut > 0, utf8[cut] & 0xC0 == 0x80 { cut -= 1 }
        let kept = utf8[0..<cut]
        for (offset, byte) in kept.enumerated() { bytes[offset] = byte }
        for offset in kept.count..<bytes.count { bytes[offset] = 0 }
    }
}
