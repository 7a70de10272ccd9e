/// What kind of actuator a device or a channel is.
public enum ActuatorKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// Not stated by the backend.
    case unknown
    /// Eccentric rotating mass: amplitude only; slow to start (50–100 ms).
    case erm
    /// Linear resonant actuator: sharp and fast (15–30 ms); resonates at 150–235 Hz.
    case lra
    /// Game-controller rumble: a strong low-frequency and a weak high-frequency motor.
    case dualRumble
    /// Motors behind a controller's triggers.
    case trigger
    /// Voice coil or other wideband actuator.
    case voiceCoil
}

/// The stream of samples a device takes (`haptics_device_info_v1`'s `sample_*` fields).
public struct SampleStreamFormat: Sendable, Hashable, Codable {
    /// Frames per second (48 000 on a sound card).
    public var rate: Int
    /// Frames the device takes at a time (one ALSA period): the size of each rendered block.
    public var periodFrames: Int
    /// Frames the device holds queued at most (one ALSA buffer).
    public var bufferFrames: Int
    /// Time from a sample leaving the device's buffer to the actuator moving, in seconds (0: unknown).
    public var latency: Double

    /// A stream format.
    public init(rate: Int, periodFrames: Int, bufferFrames: Int, latency: Double = 0) {
        self.rate = rate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.latency = latency
    }

    /// One period, in seconds.
    public var periodDuration: Double { Double(periodFrames) / Double(rate) }

    /// From a frame's time to the actuator moving, in seconds: the buffer, the millisecond the
    /// core renders ahead of the device's need, and ``latency``. Everything played on the device is
    /// felt this much after it was meant (a sensor measuring it looks this much later).
    public var outputDelay: Double { Double(bufferFrames) / Double(rate) + SampleStream.renderSlack + latency }
}

/// One output channel of a device: a motor, or one side of a controller.
public struct ChannelDescription: Sendable, Hashable, Codable {
    /// Short name: `main`, `strong`, `weak`, `left-trigger`.
    public var name: String
    /// The channel's actuator kind.
    public var actuator: ActuatorKind
    /// Distinct amplitude levels the hardware renders, off included (256 for a byte, 101 for 0–100).
    public var amplitudeSteps: Int
    /// The drive frequencies the channel accepts, in Hz; `nil` when the frequency cannot be chosen.
    public var frequencyRange: ClosedRange<Double>?
    /// The resonant frequency in Hz, if known.
    public var resonantFrequency: Double?
    /// The frequency in Hz the channel vibrates at when it cannot be chosen (an ERM at full speed), if known.
    public var nominalFrequency: Double?

    /// A channel description.
    public init(
        name: String, actuator: ActuatorKind, amplitudeSteps: Int = 256, frequencyRange: ClosedRange<Double>? = nil,
        resonantFrequency: Double? = nil, nominalFrequency: Double? = nil
    ) {
        self.name = name
        self.actuator = actuator
        self.amplitudeSteps = amplitudeSteps
        self.frequencyRange = frequencyRange
        self.resonantFrequency = resonantFrequency
        self.nominalFrequency = nominalFrequency
    }

    /// Whether the drive frequency can be chosen.
    public var controlsFrequency: Bool { frequencyRange != nil }
}

/// What a backend says about a device it found: enough for the engine to adapt without probing.
public struct DeviceDescription: Sendable, Hashable, Codable, Identifiable {
    /// Stable id, unique across backends and the same after a replug: `recording:lra`, `hid:054c:0ce6:usb:SERIAL`.
    public var id: String
    /// Human-readable name.
    public var name: String
    /// The backend that found the device (`recording`, `hid`, `gpio`).
    public var backend: String
    /// The device's primary actuator kind.
    public var actuator: ActuatorKind
    /// The channels, in the order drive frames address them (1…4).
    public var channels: [ChannelDescription]
    /// Shortest interval between two drive frames the device tolerates, in seconds.
    public var minimumUpdateInterval: Double
    /// Time from waking to rendering a frame at full strength, in seconds.
    public var wakeLatency: Double
    /// The physical device this listing is a view of, shared by every backend that reaches it (for a
    /// HID pad: the sysfs path of its HID device); `nil` when no other backend can reach it.
    public var physicalID: String?
    /// Which backend should serve a physical device several backends list: the highest preference
    /// among the available listings wins (a DualSense's coils through alsa 300, hidraw 200, evdev 100).
    public var preference: Int
    /// Why the device cannot be used now, and the fix (no permission, no usable effect); `nil` when it can.
    public var unavailableReason: String?
    /// What the backend does to a drive before it reaches the hardware; `nil` when it passes
    /// amplitudes through unchanged.
    public var envelope: DriveEnvelope?
    /// The ids of other backends' listings of the same physical device, hidden behind this one by
    /// ``HapticSystem/devices()`` (see ``physicalID``).
    public var alternatives: [String]
    /// The device plays a channel's frequency as a period in whole multiples of this many seconds
    /// (evdev's `FF_PERIODIC`: 0.001 s, so 166.7 Hz and 200 Hz but nothing between); `nil` when any
    /// frequency within a channel's range plays. See ``playedFrequency(_:within:)``.
    public var periodStep: Double?
    /// The stream of samples the device takes instead of drive frames (a voice coil on a sound card,
    /// ABI 1.4); `nil` for a device driven by frames. The engine still decides *what* plays, frame by
    /// frame; ``PluginActuator`` renders those frames into samples (``WaveformSynth``).
    public var sampleStream: SampleStreamFormat?
    /// The device has adaptive triggers (a DualSense's L2 and R2) that ``AdaptiveTriggers`` sets (ABI 1.6).
    public var hasAdaptiveTriggers = false
    /// The device plays effects stored in it by name (a DRV2605L's ROM library): ``HapticDevice/playNative(_:)`` (ABI 1.7).
    public var hasNativeEffects = false
    /// The device calibrates itself (a driver IC's auto-calibration): ``HapticDevice/selfCalibrate()``,
    /// and the results a profile stores are given back at each open (ABI 1.7).
    public var selfCalibrates = false

    /// A device description.
    public init(
        id: String, name: String, backend: String, actuator: ActuatorKind, channels: [ChannelDescription],
        minimumUpdateInterval: Double, wakeLatency: Double, physicalID: String? = nil, preference: Int = 0,
        unavailableReason: String? = nil, envelope: DriveEnvelope? = nil, alternatives: [String] = [], periodStep: Double? = nil,
        sampleStream: SampleStreamFormat? = nil
    ) {
        self.sampleStream = sampleStream
        self.id = id
        self.name = name
        self.backend = backend
        self.actuator = actuator
        self.channels = channels
        self.minimumUpdateInterval = minimumUpdateInterval
        self.wakeLatency = wakeLatency
        self.physicalID = physicalID
        self.preference = preference
        self.unavailableReason = unavailableReason
        self.envelope = envelope
        self.alternatives = alternatives
        self.periodStep = periodStep
    }

    /// Whether the device can be used now (``unavailableReason`` is `nil`).
    public var isAvailable: Bool { unavailableReason == nil }

    /// The frequency in Hz the device really plays when asked for `frequency` Hz: with a
    /// ``periodStep``, the frequency of the nearest whole period, kept within `range` when a whole
    /// period lies in it; otherwise `frequency` itself. A profile's frequency map is looked up there,
    /// and calibration measures there, so what is rendered is what was measured.
    public func playedFrequency(_ frequency: Double, within range: ClosedRange<Double>? = nil) -> Double {
        guard let step = periodStep, step > 0, frequency > 0, frequency.isFinite else { return frequency }
        var periods = max((1 / (frequency * step)).rounded(), 1)
        if let range, range.lowerBound > 0 {
            // The whole periods whose frequency lies in the range (a little slack for rounding: 5 ms is 200 Hz).
            let fewest = max((1 / (range.upperBound * step) - 1e-9).rounded(.up), 1)
            let most = (1 / (range.lowerBound * step) + 1e-9).rounded(.down)
            if fewest <= most { periods = min(max(periods, fewest), most) }
        }
        return 1 / (periods * step)
    }
}
