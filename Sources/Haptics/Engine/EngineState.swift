#if canImport(Glibc)
import Glibc
#endif

/// A command a player was given for an engine time.
enum PlayerCommand: Sendable {
    case start
    case stop
    case pause
    case resume
    case parameters([HapticDynamicParameter])
    case curve(HapticParameterCurve)
}

/// Control values sent to a player at run time, over engine time (seconds on the engine's clock).
struct PlayerControls: Sendable {
    var tracks = ControlSet()
}

/// Everything the engine knows about one player. Guarded by the engine's lock.
struct PlayerState: Sendable {
    enum Status: Sendable, Equatable { case idle, playing, paused, finished }

    let timeline: PatternTimeline
    var status: Status = .idle
    /// Engine instant at which ``startOffset`` was the pattern position (while playing).
    var anchor = HapticInstant(nanoseconds: 0)
    /// Pattern position at ``anchor``, or where it is frozen (while paused or idle).
    var startOffset = 0.0
    var rate = 1.0
    var loopEnabled = false
    /// Where a loop wraps, in pattern seconds; 0 means the pattern's end.
    var loopEnd = 0.0
    var isMuted = false
    /// Multiplies every intensity (the feedback generators' `impactOccurred(intensity:)`).
    var intensityScale = 1.0
    /// Commands for engine instants, in time order (ties in arrival order).
    var pending: [(time: HapticInstant, command: PlayerCommand)] = []
    var controls = PlayerControls()
    var completion: (@Sendable ((any Error)?) -> Void)?
    /// No object owns the player any more (a feedback play, a released player): the engine forgets
    /// it once it has finished.
    var isOrphan = false
    /// The feedback vocabulary's effect the timeline is (its name), when it is one: at each start,
    /// a silent device that stores a fitting effect plays it itself (ABI 1.8's `start_native`).
    var feedback: String?
    /// The devices (bit i: output i) playing this start from their own stored effects: nothing
    /// is rendered for them.
    var native: UInt64 = 0

    /// Whether output `index` plays this player from its own stored effects.
    func isNative(on index: Int) -> Bool {
        index < UInt64.bitWidth && native & (1 << UInt64(index)) != 0
    }

    init(timeline: PatternTimeline) {
        self.timeline = timeline
    }

    mutating func enqueue(_ command: PlayerCommand, at time: HapticInstant) {
        let index = pending.partitionIndex { $0.time > time }
        pending.insert((time, command), at: index)
    }

    var loopLength: Double {
        let length = loopEnd > 0 ? loopEnd : timeline.duration
        return length > 0 ? length : 0
    }

    /// The pattern position at engine instant `now`, wrapped into the loop when looping.
    func position(at now: HapticInstant) -> Double {
        guard status == .playing else { return startOffset }
        let position = startOffset + now.seconds(since: anchor) * rate
        if loopEnabled, loopLength > 0, position >= loopLength { return position.truncatingRemainder(dividingBy: loopLength) }
        return position
    }

    /// Re-anchors the position at `now` (before a rate change, a pause, a seek).
    mutating func rebase(at now: HapticInstant) {
        startOffset = position(at: now)
        anchor = now
    }

    /// The engine instant of the player's next change: pattern position `next` (nil: none), or
    /// where it wraps its loop or ends (`end`: the timeline's end on the engine's devices),
    /// whichever comes first; `position` is the position at `now`.
    func instant(ofChange next: Double?, end: Double, from now: HapticInstant, position: Double) -> HapticInstant {
        let wrap = loopEnabled && loopLength > 0 ? loopLength : end
        return instant(ofPosition: min(next ?? wrap, wrap), from: now, position: position)
    }

    /// The engine instant at which pattern position `target` (≥ the position at `now`) is reached.
    /// Rounded up to the next nanosecond and at least 1 ns ahead, so the engine always moves on.
    func instant(ofPosition target: Double, from now: HapticInstant, position: Double) -> HapticInstant {
        let nanoseconds = ((target - position) / max(rate, 1e-9) * 1e9).rounded(.up)
        // Saturating: a position too far ahead to count in nanoseconds is "never" (and NaN, which
        // fails both comparisons, is the next nanosecond), never a trap.
        let step: Int64 = nanoseconds >= 1 ? (nanoseconds < 0x1p63 ? Int64(nanoseconds) : .max) : 1
        return now.advanced(byNanoseconds: step)
    }
}

/// The engine's players in id order. Ids only grow, so a new player is appended; a player is found
/// by binary search and changed in place: no hashing and no copy of a state out of the table on
/// the trigger path or in a pass. Guarded by the engine's lock.
struct PlayerTable: Sendable {
    struct Slot: Sendable {
        let id: UInt64
        var state: PlayerState
    }

    /// The players, by increasing id.
    var slots: [Slot] = []

    init() {
        // An app's handful of players and feedback effects under way fit without growing.
        slots.reserveCapacity(16)
    }

    /// Where player `id` is, if the engine knows it.
    func index(of id: UInt64) -> Int? {
        var low = 0, high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if slots[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < slots.count && slots[low].id == id ? low : nil
    }

    /// Adds player `id`, newer than every player in the table.
    mutating func append(_ id: UInt64, _ state: consuming PlayerState) {
        // The last id read in place: `slots.last` would copy the whole state out.
        precondition(slots.isEmpty || slots[slots.count - 1].id < id, "player ids only grow")
        slots.append(Slot(id: id, state: state))
    }
}

/// What the engine drives on one device. Guarded by the engine's lock.
struct DeviceOutput: Sendable {
    let device: HapticDevice
    var mapper: DriveMapper {
        didSet { firstFrames.removeAll(keepingCapacity: true) }
    }
    /// The first frames starts rendered on the silent device lately, and what each came from: a
    /// repeated trigger (the same feedback, the same pattern) reuses its frame instead of rendering
    /// again. A few entries (an app's handful of feedback effects and patterns), oldest first, in
    /// storage reserved once.
    private var firstFrames: [(timeline: PatternTimeline, position: Double, scale: Double, drives: [ChannelDrive]?, next: Double?)] = []
    private static let firstFrameCapacity = 8
    /// Seconds between frames while something ramps: the device's update interval, at least 4 ms.
    let step: Double
    /// What the engine last sent. Only ever written element by element (``record(_:)``), so its
    /// storage is this output's alone and a pass changes it in place.
    private(set) var lastDrives: [ChannelDrive]
    /// Every channel off: what a silent pass sends, built once per device.
    let silence: [ChannelDrive]
    /// A pass's scratch: the voices of one player, then the mix of every player (one entry per
    /// channel), reused from pass to pass.
    var voices: [Voice] = []
    var mixed: [ChannelDrive]
    /// Whether the device mixes clips (a waveform device), and the clips of this pass and of the
    /// last frame sent, in storage reserved once (``InlineClips/capacity`` each).
    let takesClips: Bool
    var clips: [ClipVoice] = []
    private(set) var lastClips: [ClipVoice] = []
    /// Each channel's amplitude steps less one (at least 1): what ``quantized(_:)`` rounds to.
    private let steps: [Double]
    var lastSubmit: HapticInstant?
    /// The device's minimum update interval, in nanoseconds.
    private let updateInterval: Int64
    /// Whether the engine has begun an activity (a trigger) on the device.
    var active = false
    var lost = false
    /// The device failed with an error other than loss: nothing is sent to it until the next start.
    var faulted = false
    /// Whether the device stores effects of its own (``DeviceDescription/hasNativeEffects``).
    let hasNativeEffects: Bool
    /// What the device answered for feedback effects lately (``HapticDevice/nativeFeedback(_:scale:)``):
    /// the effect's name, its scale and the stored effects that play it (nil: none fits), a few
    /// entries, oldest first. Only devices with effects of their own fill it.
    private var nativeAnswers: [(effect: String, scale: Double, sequence: String?)] = []

    init(device: HapticDevice, profile: CalibrationProfile?) {
        self.device = device
        mapper = DriveMapper(device: device.description, profile: profile)
        step = max(device.description.minimumUpdateInterval, 0.004)
        updateInterval = Int64(clamping: HapticInstant(seconds: device.description.minimumUpdateInterval).nanoseconds)
        silence = Array(repeating: .off, count: device.description.channels.count)
        lastDrives = Array(repeating: .off, count: device.description.channels.count)
        mixed = silence
        steps = device.description.channels.map { Double(max($0.amplitudeSteps - 1, 1)) }
        firstFrames.reserveCapacity(Self.firstFrameCapacity)
        voices.reserveCapacity(8)
        takesClips = device.description.sampleStream != nil
        hasNativeEffects = device.description.hasNativeEffects
        if takesClips {
            clips.reserveCapacity(InlineClips.capacity)
            lastClips.reserveCapacity(InlineClips.capacity)
        }
    }

    /// Whether this pass's clips differ from those last sent (a voice that only carries on, within
    /// its rounding, is no change).
    var clipsChanged: Bool {
        guard clips.count == lastClips.count else { return true }
        for index in clips.indices where !clips[index].continues(lastClips[index]) || clips[index].gain != lastClips[index].gain { return true }
        return false
    }

    /// Forgets every clip, sent or not (the device was silenced, or failed).
    mutating func forgetClips() {
        clips.removeAll(keepingCapacity: true)
        lastClips.removeAll(keepingCapacity: true)
    }

    /// Sets ``lastClips`` to ``clips``, element by element (its storage stays its own).
    mutating func recordClips() {
        lastClips.removeAll(keepingCapacity: true)
        for index in clips.indices { lastClips.append(clips[index]) }
    }

    /// Sets ``lastDrives`` to `drives` (as many channels), element by element.
    /// When the next frame may go out: one update interval after the last one (`now` before the first).
    func nextUpdate(orNow now: HapticInstant) -> HapticInstant {
        lastSubmit?.advanced(byNanoseconds: updateInterval) ?? now
    }

    mutating func record(_ drives: [ChannelDrive]) {
        // Through one buffer: one uniqueness check, not one per channel.
        lastDrives.withUnsafeMutableBufferPointer { last in
            for index in last.indices { last[index] = drives[index] }
        }
    }

    /// Empties the mix: every channel off.
    mutating func clearMix() {
        for index in mixed.indices { mixed[index] = .off }
        if !clips.isEmpty { clips.removeAll(keepingCapacity: true) }
    }

    /// Mixes ``voices``, every intensity times `scale`, into ``mixed``.
    mutating func mixVoices(scale: Double) {
        for index in voices.indices {
            let voice = voices[index]
            if voice.audio, !takesClips { continue }
            mapper.mix(intensity: voice.intensity * scale, sharpness: voice.sharpness, gain: voice.gain, starting: voice.starting, into: &mixed)
        }
    }

    /// Rounds ``mixed`` in place as ``quantized(_:)`` does.
    mutating func quantizeMix() {
        for index in mixed.indices { mixed[index] = quantized(mixed[index], channel: index) }
    }

    /// `drive` rounded to the amplitude steps channel `channel` renders (no frequency when off).
    private func quantized(_ drive: ChannelDrive, channel: Int) -> ChannelDrive {
        ChannelDrive(amplitude: (drive.amplitude * steps[channel]).rounded() / steps[channel], frequency: drive.amplitude > 0 ? drive.frequency : 0)
    }

    /// The stored effects that play feedback effect `effect` at `scale` on this device, or nil
    /// (asked once per effect and scale, then remembered).
    mutating func nativeFeedback(_ effect: String, scale: Double) -> String? {
        for index in nativeAnswers.indices where nativeAnswers[index].effect == effect && nativeAnswers[index].scale == scale {
            return nativeAnswers[index].sequence
        }
        let sequence = device.nativeFeedback(effect, scale: scale)
        if nativeAnswers.count == Self.firstFrameCapacity { nativeAnswers.removeFirst() }
        nativeAnswers.append((effect, scale, sequence))
        return sequence
    }

    /// Whether the engine last sent silence on every channel, and no clip.
    var isSilent: Bool {
        if !lastClips.isEmpty { return false }
        for index in lastDrives.indices where lastDrives[index].amplitude != 0 { return false }
        return true
    }

    /// What `timeline` sounds like at `position` with every intensity times `scale` and its controls
    /// untouched, on this device while it is silent (what a start sends first), quantized; nil when
    /// nothing sounds; and the next pattern position at which it changes (nil: none before its end).
    /// Remembered for the next start of the same timeline: the render is a pure function of these
    /// and of the mapper, whose change forgets it.
    mutating func firstFrame(of timeline: PatternTimeline, at position: Double, scale: Double) -> (drives: [ChannelDrive]?, next: Double?) {
        for index in firstFrames.indices
        where firstFrames[index].timeline === timeline && firstFrames[index].position == position && firstFrames[index].scale == scale {
            return (firstFrames[index].drives, firstFrames[index].next)
        }
        let (voices, next, _) = timeline.evaluate(at: position, shape: mapper.profile.transient, external: nil, step: step, startWindow: mapper.startWindow)
        var drives: [ChannelDrive]?
        if !voices.isEmpty {
            var frame = [ChannelDrive](repeating: .off, count: lastDrives.count)
            for voice in voices where !voice.audio || takesClips {
                mapper.mix(intensity: voice.intensity * scale, sharpness: voice.sharpness, gain: voice.gain, starting: voice.starting, into: &frame)
            }
            drives = quantized(frame)
        }
        if firstFrames.count == Self.firstFrameCapacity { firstFrames.removeFirst() }
        firstFrames.append((timeline, position, scale, drives, next))
        return (drives, next)
    }

    /// `drives` rounded to the amplitude steps each channel can render, so frames that the
    /// hardware could not tell apart are not sent twice.
    func quantized(_ drives: [ChannelDrive]) -> [ChannelDrive] {
        var result = drives
        for index in result.indices { result[index] = quantized(result[index], channel: index) }
        return result
    }
}
