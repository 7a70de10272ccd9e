#if canImport(Glibc)
import Glibc
#endif

/// The haptic controls a timeline carries (audio controls are kept in patterns, not rendered).
enum HapticControl: Int, CaseIterable, Sendable {
    case intensity, sharpness, attack, decay, release

    init?(_ id: HapticDynamicParameter.ID) {
        switch id {
        case .hapticIntensityControl: self = .intensity
        case .hapticSharpnessControl: self = .sharpness
        case .hapticAttackTimeControl: self = .attack
        case .hapticDecayTimeControl: self = .decay
        case .hapticReleaseTimeControl: self = .release
        default: return nil
        }
    }

    var defaultValue: Double { self == .intensity ? 1 : 0 }
}

/// A full set of control tracks.
struct ControlSet: Sendable, Hashable {
    /// Every control at its default, built once: a new player's set shares its storage.
    private static let defaults = HapticControl.allCases.map { ControlTrack(defaultValue: $0.defaultValue) }

    private(set) var tracks = ControlSet.defaults

    /// Whether every control is at its default for all time (nothing set or ramped): kept as a
    /// flag, since every start asks. Only the subscript's setter changes a track, and a track
    /// only ever gains pieces.
    private(set) var isUntouched = true

    subscript(control: HapticControl) -> ControlTrack {
        get { tracks[control.rawValue] }
        set {
            tracks[control.rawValue] = newValue
            if !newValue.pieces.isEmpty { isUntouched = false }
        }
    }

    /// Adds dynamic parameters and curves, in start-time order (a later start overrides).
    mutating func apply(parameters: [HapticDynamicParameter], curves: [HapticParameterCurve], offset: Double) {
        enum Change { case step(HapticDynamicParameter), curve(HapticParameterCurve) }
        let changes: [(time: Double, change: Change)] =
            parameters.map { (offset + $0.relativeTime, .step($0)) }
            + curves.map { (offset + $0.relativeTime + ($0.controlPoints.first?.relativeTime ?? 0), .curve($0)) }
        for (_, change) in changes.enumerated().sorted(by: { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }).map(\.element) {
            switch change {
            case .step(let parameter):
                guard let control = HapticControl(parameter.id) else { continue }
                self[control].set(parameter.value, at: offset + parameter.relativeTime)
            case .curve(let curve):
                guard let control = HapticControl(curve.id) else { continue }
                self[control].ramp(through: curve.controlPoints.map { (offset + curve.relativeTime + $0.relativeTime, $0.value) })
            }
        }
    }

    func value(_ control: HapticControl, at time: Double) -> Double { self[control].value(at: time) }

    /// Every control's value at `time`.
    func values(at time: Double) -> [Double] { tracks.map { $0.value(at: time) } }

    func isRamping(at time: Double) -> Bool {
        for index in tracks.indices where tracks[index].isRamping(at: time) { return true }
        return false
    }

    /// The first breakpoint of any control after `time` (an index loop: a pass asks on every render).
    func nextBreakpoint(after time: Double) -> Double? {
        var earliest: Double?
        for index in tracks.indices {
            guard let breakpoint = tracks[index].nextBreakpoint(after: time) else { continue }
            earliest = min(earliest ?? breakpoint, breakpoint)
        }
        return earliest
    }
}

/// One thing sounding at an instant: the summed continuous events, or one transient pulse.
struct Voice: Sendable, Hashable {
    var intensity: Double
    var sharpness: Double
    /// Drive multiplier (a transient's kick), 1 otherwise.
    var gain: Double
    /// A sustained vibration in its first ``PatternTimeline/startWindow``: a channel with a start
    /// threshold is driven at least at it, so the actuator breaks away from rest and then holds
    /// the lower drive asked for (``DriveMapper``).
    var starting = false
    /// The summed `AudioContinuous` events: a tone only waveform devices play (``DeviceOutput/takesClips``).
    var audio = false
}

/// A pattern prepared for rendering: its haptic events in time order and its control tracks.
///
/// Evaluation is a pure function of pattern time, so seeking, looping, pausing and rate changes
/// need no state beyond the player's clock.
///
/// A class, immutable: every player of a pattern and every play of a feedback effect share one,
/// so starting one retains one object, and what a render remembered for a timeline is found again
/// by its identity.
final class PatternTimeline: Sendable {
    /// How long a sustained vibration is driven at least at its channel's start threshold, in
    /// seconds: a motor breaks away as soon as its drive passes the threshold (its winding's
    /// current rises in well under a millisecond), and 20 ms outlasts a late write or two.
    static let startWindow = 0.020

    struct Event: Sendable {
        var start: Double
        var duration: Double
        var transient: Bool
        var intensity: Double
        var sharpness: Double
        var attack: Double
        var decay: Double
        var release: Double
        var sustained: Bool
        /// An `AudioContinuous` event: its volume is the intensity and its pitch (-1 … 1) the
        /// sharpness (0 … 1); the haptic controls do not touch it.
        var audio = false
    }

    /// An `AudioCustom` event whose clip was found: played on waveform devices.
    struct ClipEvent: Sendable {
        var start: Double
        /// How long it sounds, in pattern seconds (clip seconds at the player's rate).
        var length: Double
        var clip: AudioClip
        /// `AudioVolume`, 0 … 1.
        var volume: Double
        var loops: Bool
    }

    let events: [Event]
    /// The clip events in start order (empty for most patterns).
    let clipEvents: [ClipEvent]
    let controls: ControlSet
    let duration: Double
    private let longestEvent: Double
    private let lastTransientStart: Double?

    /// A timeline of `pattern`'s haptic events, and of its `AudioCustom` events whose
    /// `EventWaveformPath` names one of `clips` (the engine's registered audio resources). An
    /// audio event with no duration plays its clip once; one with a duration is cut there, or
    /// loops until then (`EventWaveformLoopEnabled`).
    init(pattern: HapticPattern, clips: [String: AudioClip] = [:]) {
        events = pattern.events.filter { $0.type.isHaptic || $0.type == .audioContinuous }.sorted { $0.relativeTime < $1.relativeTime }.map { event in
            let audio = event.type == .audioContinuous
            return Event(
                start: event.relativeTime, duration: event.type == .hapticTransient ? 0 : min(event.duration, HapticEvent.maximumContinuousDuration),
                transient: event.type == .hapticTransient, intensity: event.value(of: audio ? .audioVolume : .hapticIntensity),
                sharpness: audio ? (min(max(event.value(of: .audioPitch), -1), 1) + 1) / 2 : event.value(of: .hapticSharpness),
                attack: event.value(of: .attackTime), decay: event.value(of: .decayTime), release: event.value(of: .releaseTime),
                sustained: event.value(of: .sustained) >= 0.5, audio: audio)
        }
        var controls = ControlSet()
        controls.apply(parameters: pattern.parameters, curves: pattern.parameterCurves, offset: 0)
        self.controls = controls
        clipEvents = clips.isEmpty ? [] : pattern.events.compactMap { event -> ClipEvent? in
            guard event.type == .audioCustom, let path = event.waveformPath, let clip = clips[path] else { return nil }
            let loops = event.waveformLoopEnabled ?? false
            let length = event.duration > 0 ? (loops ? event.duration : min(event.duration, clip.duration)) : clip.duration
            return ClipEvent(start: event.relativeTime, length: length, clip: clip, volume: min(max(event.value(of: .audioVolume), 0), 1), loops: loops)
        }.sorted { $0.start < $1.start }
        duration = max(pattern.duration, clipEvents.map { $0.start + $0.length }.max() ?? 0)
        longestEvent = events.map(\.duration).max() ?? 0
        lastTransientStart = events.last(where: \.transient)?.start
    }

    /// Calls `body` with each clip event sounding at pattern time `time`, in start order; returns
    /// the next pattern time a clip starts or ends (nil: none).
    func soundingClips(at time: Double, _ body: (ClipEvent) -> Void) -> Double? {
        var next = Double.infinity
        for event in clipEvents {
            if event.start > time {
                next = min(next, event.start)
                break
            }
            let end = event.start + event.length
            guard time < end else { continue }
            body(event)
            next = min(next, end)
        }
        return next.isFinite ? next : nil
    }

    /// An envelope adjuster (0 … 1) as seconds: 0 → 0 s, 0.5 → 31 ms, 1 → 1 s, growing exponentially;
    /// a time control c (-1 … 1) scales it by 10^c.
    static func envelopeTime(_ adjuster: Double, control: Double) -> Double {
        (pow(1001, adjuster) - 1) / 1000 * pow(10, control)
    }

    /// When the pattern has finished sounding on a device whose taps last `transientDuration` seconds.
    func end(transientDuration: Double) -> Double {
        max(duration, (lastTransientStart ?? -.infinity) + transientDuration)
    }

    /// The voices at pattern time `time`; the next pattern time anything changes (a boundary, or
    /// `time + step` while ramping); and whether any event is under way (it may be silent now and
    /// audible later, as under an intensity ramp rising from 0). `external` holds the current values
    /// of the controls sent to the player at run time (indexed by ``HapticControl``): intensity
    /// multiplies, the others add. A sustained vibration is ``Voice/starting`` for its first
    /// `startWindow` seconds (``DriveMapper/startWindow``: 0 where no channel has a start threshold,
    /// so nothing changes there).
    func evaluate(
        at time: Double, shape: CalibrationProfile.TransientShape, external: [Double]?, step: Double, startWindow: Double = 0
    ) -> (voices: [Voice], next: Double?, active: Bool) {
        var voices: [Voice] = []
        let (next, active) = evaluate(at: time, shape: shape, external: external, step: step, startWindow: startWindow, into: &voices)
        return (voices, next, active)
    }

    /// ``evaluate(at:shape:external:step:startWindow:)`` appending the voices to `voices` (the
    /// engine's pass reuses one buffer, so rendering builds no array).
    func evaluate(
        at time: Double, shape: CalibrationProfile.TransientShape, external: [Double]?, step: Double, startWindow: Double = 0,
        into voices: inout [Voice]
    ) -> (next: Double?, active: Bool) {
        // The pattern sets no control (no dynamic parameter, no curve): each is at its default.
        let untouched = controls.isUntouched
        func control(_ which: HapticControl, _ at: Double, audio: Bool = false) -> Double {
            // The haptic controls leave an audio event alone.
            if audio { return which == .intensity ? 1 : 0 }
            let own = untouched ? which.defaultValue : controls.value(which, at: at)
            guard let sent = external?[which.rawValue] else { return own }
            return which == .intensity ? own * sent : own + sent
        }
        var next = (untouched ? nil : controls.nextBreakpoint(after: time)) ?? .infinity
        var ramping = false
        var active = false
        var summed = 0.0, weightedSharpness = 0.0
        var audioSummed = 0.0, audioSharpness = 0.0
        var starting = false

        // Events starting after `time` only matter for the next breakpoint: the first of them.
        let firstLater = events.partitionIndex { $0.start > time }
        if firstLater < events.count { next = min(next, events[firstLater].start) }
        let horizon = time - max(longestEvent, shape.duration)
        var index = firstLater
        while index > 0 {
            index -= 1
            let event = events[index]
            if event.start < horizon { break }
            let age = time - event.start
            if event.transient {
                guard age < shape.duration else { continue }
                active = true
                let kick = age < shape.overdriveDuration
                let at = event.start
                let intensity = event.intensity * control(.intensity, at)
                let sharpness = min(max(event.sharpness + control(.sharpness, at), 0), 1)
                voices.append(Voice(
                    intensity: (shape.intensityExponent == 1 ? intensity : pow(max(intensity, 0), shape.intensityExponent)) * shape.level(atSharpness: sharpness),
                    sharpness: sharpness,
                    gain: kick ? shape.overdriveGain : 1))
                next = min(next, event.start + (kick ? shape.overdriveDuration : shape.duration))
                continue
            }
            let attack = Self.envelopeTime(event.attack, control: control(.attack, time, audio: event.audio))
            var release = Self.envelopeTime(event.release, control: control(.release, time, audio: event.audio))
            let decay = Self.envelopeTime(event.decay, control: control(.decay, time, audio: event.audio))
            var attackEnd = attack
            let length: Double
            var envelope: Double
            if event.sustained {
                length = event.duration
                if attack + release > length, attack + release > 0 {
                    let scale = length / (attack + release)
                    attackEnd = attack * scale
                    release *= scale
                }
                guard age < length else { continue }
                envelope = 1
                if age < attackEnd { envelope = age / attackEnd; ramping = true; next = min(next, event.start + attackEnd) }
                if release > 0, age > length - release {
                    envelope = min(envelope, (length - age) / release)
                    ramping = true
                } else if release > 0 {
                    next = min(next, event.start + length - release)
                }
            } else {
                length = min(event.duration, attack + decay)
                guard age < length else { continue }
                if age < attack {
                    envelope = age / attack
                    next = min(next, event.start + attack)
                } else {
                    envelope = decay > 0 ? 1 - (age - attack) / decay : 0
                }
                ramping = true
            }
            next = min(next, event.start + length)
            active = true
            let intensity = event.intensity * max(envelope, 0) * control(.intensity, time, audio: event.audio)
            if event.audio {
                audioSummed += intensity
                audioSharpness += intensity * event.sharpness
                continue
            }
            if age < startWindow {
                starting = true
                next = min(next, event.start + startWindow)
            }
            summed += intensity
            weightedSharpness += intensity * min(max(event.sharpness + control(.sharpness, time), 0), 1)
        }
        if summed > 0 {
            voices.append(Voice(intensity: min(summed, 1), sharpness: weightedSharpness / summed, gain: 1, starting: starting))
        }
        if audioSummed > 0 {
            voices.append(Voice(intensity: min(audioSummed, 1), sharpness: audioSharpness / audioSummed, gain: 1, audio: true))
        }
        // A control moving under an event changes the output even when it is silent this instant.
        if active, !untouched, controls.isRamping(at: time) { ramping = true }
        if ramping { next = min(next, time + step) }
        return (next.isFinite ? next : nil, active)
    }
}

extension HapticPattern {
    /// What the pattern asks for over time, as the renderer reads it before any device: the
    /// strongest voice's intensity and sharpness (0 … 1) at instants from 0 to the end of its last
    /// tap or event, `spacing` seconds apart (more where that would exceed `maximumPoints`);
    /// taps last `transientDuration` seconds. For plots and tools; the engine renders directly.
    public func strongestVoice(transientDuration: Double = 0.012, spacing: Double = 0.0005, maximumPoints: Int = 20_000)
        -> [(time: Double, intensity: Double, sharpness: Double)]
    {
        let timeline = PatternTimeline(pattern: self)
        let shape = CalibrationProfile.TransientShape(duration: transientDuration)
        let length = timeline.end(transientDuration: transientDuration)
        let spacing = max(spacing, length / Double(max(maximumPoints, 1)))
        var result: [(time: Double, intensity: Double, sharpness: Double)] = []
        var time = 0.0
        while time <= length + spacing {
            let strongest = timeline.evaluate(at: time, shape: shape, external: nil, step: 0.001).voices.filter { !$0.audio }.max { $0.intensity < $1.intensity }
            result.append((time, strongest?.intensity ?? 0, strongest?.sharpness ?? 0))
            time += spacing
        }
        return result
    }
}

extension Array {
    /// The index of the first element for which `predicate` holds, the array being partitioned
    /// (all `false` before all `true`); `count` if none.
    func partitionIndex(where predicate: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
