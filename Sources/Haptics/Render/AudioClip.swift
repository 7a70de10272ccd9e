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
    /// The samples, interleaved, held by reference: fixed, or a ``LiveAudioRing`` a capture writes.
    final class Storage: Sendable {
        let fixed: [Float]
        let live: LiveAudioRing?
        init(_ samples: [Float]) {
            fixed = samples
            live = nil
        }
        init(live ring: LiveAudioRing) {
            fixed = []
            live = ring
        }

        /// How many samples there are.
        var count: Int { live?.frames ?? fixed.count }

        /// Calls `body` with the samples (a live ring's as they are now).
        @inline(__always)
        func withSamples<Result>(_ body: (UnsafeBufferPointer<Float>) -> Result) -> Result {
            if let live { return body(UnsafeBufferPointer(live.buffer)) }
            return fixed.withUnsafeBufferPointer(body)
        }
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

    /// A mono clip whose samples `ring` holds as a capture writes them: played looping, it follows
    /// the live audio a fixed delay behind (``LiveAudioRing``). Lives as long as the ring.
    public init(live ring: LiveAudioRing, name: String = "live audio") {
        storage = Storage(live: ring)
        channelCount = 1
        sampleRate = ring.rate
        self.name = name
    }

    /// The interleaved samples (a live clip's as they are now).
    public var samples: [Float] { storage.withSamples { Array($0) } }
    /// Frames (samples per channel).
    public var frameCount: Int { storage.count / channelCount }
    /// How long the clip plays at its own rate, in seconds.
    public var duration: Double { Double(frameCount) / sampleRate }

    public var description: String { "\(name) (\(channelCount == 1 ? "mono" : "stereo"), \(Int(sampleRate)) Hz, \(duration) s)" }

    /// Two clips are the same when they share their samples (a copy of one clip).
    public static func == (lhs: AudioClip, rhs: AudioClip) -> Bool { lhs.storage === rhs.storage }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(storage)) }
}

/// A ring of mono samples that a capture writes as audio arrives and a waveform device's stream
/// reads as a looping ``AudioClip`` (``AudioClip/init(live:name:)``): the live path of waveform
/// devices, which play the filtered audio itself.
///
/// The writer puts each sample at the ring frame its time gives (the voice's start, plus a delay
/// longer than a capture period and the work, so the reader — a device's stream, rendering each
/// frame just before it is due — always finds it written), and clears ``guardFrames`` beyond what
/// it wrote: if the writer stalls, the reader catches up into silence, never into audio a ring's
/// length old. The two threads touch different frames (the reader stays the delay behind); a
/// sample is a 32-bit float, written and read whole.
public final class LiveAudioRing: @unchecked Sendable {
    // One writer thread (the capture's); readers only read, the delay behind it.
    /// Frames in the ring.
    public let frames: Int
    /// Frames per second.
    public let rate: Double
    /// Frames cleared ahead of each write: how long a stalled writer is heard as silence.
    public let guardFrames: Int
    let buffer: UnsafeMutableBufferPointer<Float>
    /// Where the last write ended (a write that starts there clears only what enters the guard).
    private var end: Int?

    /// A silent ring of `seconds` (0.1 … 60) at `rate` Hz (1 kHz … 384 kHz, ``AudioClip/sampleRates``),
    /// keeping seven eighths of it ahead of each write silent: a write holds at most an eighth (a
    /// quarter second of a 2 s ring), and a reader would meet old audio only after the writer
    /// stalled for the rest.
    public init(seconds: Double, rate: Double) {
        self.rate = min(max(rate.isFinite ? rate : 48_000, AudioClip.sampleRates.lowerBound), AudioClip.sampleRates.upperBound)
        frames = max(Int((min(max(seconds.isFinite ? seconds : 2, 0.1), AudioClip.maximumDuration) * self.rate).rounded()), 16)
        guardFrames = frames - frames / 8
        buffer = .allocate(capacity: frames)
        buffer.initialize(repeating: 0)
    }

    deinit { buffer.deallocate() }

    /// Writes `samples` from ring frame `position` on (wrapping), and keeps the ``guardFrames``
    /// after them silent (a write that continues the last clears only the frames that enter the
    /// guard). At most a ring's length less the guard is written (the rest is dropped).
    public func write(_ samples: UnsafeBufferPointer<Float>, at position: Int) {
        let count = min(samples.count, frames - guardFrames)
        let start = ((position % frames) + frames) % frames
        var index = start
        for sample in samples.prefix(count) {
            buffer[index] = sample.isFinite ? sample : 0
            index = index + 1 == frames ? 0 : index + 1
        }
        let continues = end == start && count <= guardFrames
        end = index
        // The guard after a continued write is silent already but for its last `count` frames.
        var clear = continues ? count : guardFrames
        if continues { index = (index + guardFrames - count) % frames }
        while clear > 0 {
            buffer[index] = 0
            index = index + 1 == frames ? 0 : index + 1
            clear -= 1
        }
    }
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
