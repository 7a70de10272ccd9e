/// A sound a waveform device can play as it is: decoded samples, mono or stereo, at their own rate
/// (Core Haptics' registered audio resource). An AHAP `AudioCustom` event names one by its
/// `EventWaveformPath`, under which it was registered with the engine
/// (``HapticEngine/registerAudioResource(_:named:)``).
///
/// On a waveform device (``DeviceDescription/sampleStream``: a voice coil, the DualSense's coils, a
/// tactile transducer on a sound card) a sample of ±1 is the channel's full scale, as for the
/// synth's own output; a mono clip plays on every channel, a stereo one left on the first channel
/// and right on the second (a one-channel device takes their mean, further channels the mean too).
/// Motor devices cannot follow an audio-rate signal and do not play clips.
///
/// The samples are held once and shared: copying a clip, or handing it to a device's stream,
/// copies a reference (no allocation on the real-time path).
public struct AudioClip: Sendable, Hashable, CustomStringConvertible {
    /// The samples, interleaved, held by reference.
    final class Storage: Sendable {
        let samples: [Float]
        init(_ samples: [Float]) { self.samples = samples }
    }

    let storage: Storage
    /// Frames per second of the samples (Hz).
    public let sampleRate: Double
    /// Samples per frame: 1 (mono) or 2 (left, right).
    public let channelCount: Int
    /// What messages call it (the file it came from, or a name).
    public let name: String

    /// The longest clip, in seconds: 60 s of stereo at 48 kHz is 23 MB of samples.
    public static let maximumDuration = 60.0
    /// The rates a clip may have, in Hz.
    public static let sampleRates: ClosedRange<Double> = 1_000...384_000

    /// A clip of `samples`, interleaved (`channelCount` per frame), at `sampleRate` frames per second.
    ///
    /// - Throws: ``AudioClipError`` naming the problem: a channel count other than 1 or 2, a rate
    ///   outside ``sampleRates``, no frame, a sample that is not a finite number, or more than
    ///   ``maximumDuration`` seconds.
    public init(interleaved samples: [Float], channelCount: Int, sampleRate: Double, name: String = "audio clip") throws(AudioClipError) {
        guard (1...2).contains(channelCount) else { throw .channelCount(name: name, channelCount) }
        guard sampleRate.isFinite, Self.sampleRates.contains(sampleRate) else { throw .sampleRate(name: name, sampleRate) }
        guard !samples.isEmpty, samples.count.isMultiple(of: channelCount) else { throw .empty(name: name) }
        let seconds = Double(samples.count / channelCount) / sampleRate
        guard seconds <= Self.maximumDuration else { throw .tooLong(name: name, seconds: seconds) }
        if let index = samples.firstIndex(where: { !$0.isFinite }) { throw .notANumber(name: name, frame: index / channelCount) }
        storage = Storage(samples)
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.name = name
    }

    /// The interleaved samples.
    public var samples: [Float] { storage.samples }
    /// Frames (samples per channel).
    public var frameCount: Int { storage.samples.count / channelCount }
    /// How long the clip plays at its own rate, in seconds.
    public var duration: Double { Double(frameCount) / sampleRate }

    public var description: String { "\(name) (\(channelCount == 1 ? "mono" : "stereo"), \(Int(sampleRate)) Hz, \(duration) s)" }

    /// Two clips are the same when they share their samples (a copy of one clip).
    public static func == (lhs: AudioClip, rhs: AudioClip) -> Bool { lhs.storage === rhs.storage }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(storage)) }
}

/// Why samples cannot be an ``AudioClip``: each names the clip and what would do.
public enum AudioClipError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not 1 or 2 channels.
    case channelCount(name: String, Int)
    /// A rate outside ``AudioClip/sampleRates``.
    case sampleRate(name: String, Double)
    /// No frame at all.
    case empty(name: String)
    /// Longer than ``AudioClip/maximumDuration``.
    case tooLong(name: String, seconds: Double)
    /// A sample that is NaN or infinite, at this frame.
    case notANumber(name: String, frame: Int)

    public var description: String {
        switch self {
        case .channelCount(let name, let count):
            "\(name): \(count) channels; a clip is mono or stereo (left and right actuators). Keep the haptic channels, "
                + "e.g. `sox in.wav out.wav remix 3 4` for the coils of a 4-channel DualSense file"
        case .sampleRate(let name, let rate): "\(name): a sample rate of \(rate) Hz is outside 1,000…384,000 Hz"
        case .empty(let name): "\(name): no audio (no complete frame)"
        case .tooLong(let name, let seconds):
            "\(name): \((seconds * 10).rounded() / 10) s long; a clip is at most \(Int(AudioClip.maximumDuration)) s (cut it, or loop a shorter one with EventWaveformLoopEnabled)"
        case .notANumber(let name, let frame): "\(name): frame \(frame) is not a finite number"
        }
    }
}

/// A registered clip's handle (Core Haptics' `CHHapticAudioResourceID`).
public struct AudioResourceID: Sendable, Hashable {
    /// The engine's number for it.
    public let rawValue: UInt64
}

/// One clip sounding on a device: what the engine sends with a ``DriveFrame`` to a waveform
/// device, which mixes it into its samples.
public struct ClipVoice: Sendable, Hashable {
    /// The sound.
    public var clip: AudioClip
    /// When the clip's first frame plays (or would have played: a voice sent after a seek or a
    /// resume started in the past, and plays from where that puts it).
    public var start: HapticInstant
    /// Multiplies every sample, 0 … 1 (the event's `AudioVolume` times the player's and the
    /// policy's intensity scales).
    public var gain: Double
    /// Clip seconds per second (the player's rate): 2 plays it twice as fast, an octave up.
    public var speed: Double
    /// How long it plays, in clip seconds from its first frame; the end of the clip ends it first,
    /// unless it ``loops``.
    public var length: Double
    /// Whether it starts over at its end until ``length`` (`EventWaveformLoopEnabled`).
    public var loops: Bool

    /// A voice; values are taken as given (the stream clamps what it mixes).
    public init(clip: AudioClip, start: HapticInstant, gain: Double = 1, speed: Double = 1, length: Double? = nil, loops: Bool = false) {
        self.clip = clip
        self.start = start
        self.gain = gain
        self.speed = speed
        self.length = length ?? clip.duration
        self.loops = loops
    }

    /// Whether `other` is this voice carried on (the same clip from the same start, within half
    /// a millisecond of rounding, at the same speed), perhaps at another gain.
    public func continues(_ other: ClipVoice) -> Bool {
        clip == other.clip && speed == other.speed && loops == other.loops && length == other.length
            && (start.nanoseconds > other.start.nanoseconds ? start.nanoseconds - other.start.nanoseconds : other.start.nanoseconds - start.nanoseconds) < 500_000
    }
}
