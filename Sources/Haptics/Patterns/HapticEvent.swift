/// One haptic or audio event of a ``HapticPattern`` (Core Haptics' `CHHapticEvent`).
public struct HapticEvent: Sendable, Hashable {
    /// The kind of event.
    public enum EventType: String, Sendable, Hashable, CaseIterable {
        /// A brief tap: a fixed, device-tuned pulse shaped by intensity and sharpness.
        case hapticTransient = "HapticTransient"
        /// A vibration lasting ``HapticEvent/duration`` (at most ``HapticEvent/maximumContinuousDuration``).
        case hapticContinuous = "HapticContinuous"
        /// A continuous audio event (a synthesized tone): played on waveform devices as a sine in the
        /// actuator's band (its pitch as sharpness, its volume as intensity); motors leave it out.
        case audioContinuous = "AudioContinuous"
        /// A custom audio event playing the clip registered as ``HapticEvent/waveformPath``
        /// (``HapticEngine/registerAudioResource(_:named:)``) on waveform devices; motors leave it out.
        case audioCustom = "AudioCustom"

        /// Whether every device renders this event (the audio events play on waveform devices only).
        public var isHaptic: Bool { self == .hapticTransient || self == .hapticContinuous }
    }

    /// Core Haptics limits a continuous event to 30 s; longer durations are clamped to it.
    public static let maximumContinuousDuration = 30.0

    /// The kind of event.
    public var type: EventType
    /// The start, in seconds from the pattern's start.
    public var relativeTime: Double
    /// How long a continuous or audio event lasts, in seconds (0 for transients).
    public var duration: Double
    /// The event's parameters (intensity, sharpness, envelope, audio), each at most once.
    public var parameters: [HapticEventParameter]
    /// The waveform file of an ``EventType/audioCustom`` event.
    public var waveformPath: String?
    /// `EventWaveformUseVolumeEnvelope` of an ``EventType/audioCustom`` event.
    public var waveformUsesVolumeEnvelope: Bool?
    /// `EventWaveformLoopEnabled` of an ``EventType/audioCustom`` event.
    public var waveformLoopEnabled: Bool?

    /// An event; values are checked and clamped when it becomes part of a ``HapticPattern``.
    public init(
        eventType: EventType, parameters: [HapticEventParameter] = [], relativeTime: Double, duration: Double = 0,
        waveformPath: String? = nil, waveformUsesVolumeEnvelope: Bool? = nil, waveformLoopEnabled: Bool? = nil
    ) {
        self.type = eventType
        self.parameters = parameters
        self.relativeTime = relativeTime
        self.duration = duration
        self.waveformPath = waveformPath
        self.waveformUsesVolumeEnvelope = waveformUsesVolumeEnvelope
        self.waveformLoopEnabled = waveformLoopEnabled
    }

    /// The value of parameter `id`, or its default.
    public func value(of id: HapticEventParameter.ID) -> Double {
        parameters.last(where: { $0.id == id })?.value ?? id.defaultValue
    }

    /// When the event stops contributing, in seconds from the pattern's start.
    public var endTime: Double { relativeTime + duration }
}

/// A static parameter of a ``HapticEvent`` (Core Haptics' `CHHapticEventParameter`).
public struct HapticEventParameter: Sendable, Hashable {
    /// Which parameter.
    public enum ID: String, Sendable, Hashable, CaseIterable {
        /// Strength, 0 (weak) … 1 (strong). Default 1.
        case hapticIntensity = "HapticIntensity"
        /// Feel, 0 (round, organic) … 1 (crisp, precise). Default 0.5.
        case hapticSharpness = "HapticSharpness"
        /// Attack adjuster of a continuous event's envelope, 0 (shortest) … 1; grows exponentially. Default 0.
        case attackTime = "AttackTime"
        /// Decay adjuster (only when not sustained), 0 … 1; grows exponentially. Default 0.
        case decayTime = "DecayTime"
        /// Release adjuster, 0 … 1; grows exponentially. Default 0.
        case releaseTime = "ReleaseTime"
        /// Whether a continuous event holds for its whole duration (1) or ends when its decay reaches 0 (0). Default 1.
        case sustained = "Sustained"
        /// Audio volume, 0 … 1 (audio events; not rendered).
        case audioVolume = "AudioVolume"
        /// Audio pitch, -1 … 1 (audio events; not rendered).
        case audioPitch = "AudioPitch"
        /// Audio pan, -1 … 1 (audio events; not rendered).
        case audioPan = "AudioPan"
        /// Audio brightness, 0 … 1 (audio events; not rendered).
        case audioBrightness = "AudioBrightness"

        /// The allowed range; values outside are clamped, as Core Haptics does.
        public var range: ClosedRange<Double> {
            switch self {
            case .audioPitch, .audioPan: -1...1
            default: 0...1
            }
        }

        /// The value an event has when it does not set this parameter.
        public var defaultValue: Double {
            switch self {
            case .hapticIntensity, .sustained, .audioVolume: 1
            case .hapticSharpness, .audioBrightness: 0.5
            default: 0
            }
        }
    }

    /// Which parameter.
    public var id: ID
    /// The value (clamped to ``ID/range`` in a pattern).
    public var value: Double

    /// A parameter value.
    public init(parameterID: ID, value: Double) {
        self.id = parameterID
        self.value = value
    }
}
