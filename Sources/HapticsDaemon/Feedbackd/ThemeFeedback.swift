import Haptics
import HapticsSupport

/// One feedback of a feedbackd theme: what an event makes the haptic motor (or the speaker, or an
/// LED) do, as feedbackd's theme JSON describes it, and the ``HapticPattern`` hapticsd plays for it.
///
/// The haptic types are feedbackd's (`doc/feedback-themes.rst`, `src/fbd-feedback-vibra-*.c`), with
/// its defaults and quirks; `Effect` and `Pattern` are this project's additions:
///
/// | type | keys | plays |
/// |---|---|---|
/// | `VibraRumble` | `duration` ms (1000), `count` (1), `pause` ms (0), `magnitude` 0…1 (0.5) | `count` rumbles of `duration/count − pause` ms, `pause` apart |
/// | `VibraPeriodic` | `duration` ms (1000), `magnitude` (0.5), `fade-in-time` ms (500), `fade-in-level` (0) | one buzz fading in from `fade-in-level` |
/// | `VibraPattern` | `magnitudes` [0…1], `durations` [ms] | steps of those levels; magnitude 0 is a pause |
/// | `Effect` | `effect` (a vocabulary name), `intensity` 0…1 (1) | that effect |
/// | `Pattern` | `ahap` (an AHAP document as a JSON object) | that pattern |
/// | `Dummy` | `duration` ms (0) | nothing, for that long: the event lasts it (feedbackd's silent, timed feedback) |
/// | `Sound`, `Led` | (feedbackd's) | nothing: hapticsd has no speaker or LED, so, as feedbackd without those devices, it leaves them out |
///
/// feedbackd drives a motor's strong side at `magnitude` (`FF_RUMBLE`) or a 10 ms sine
/// (`FF_PERIODIC`): rumbles play at sharpness ``rumbleSharpness`` (low and round: the strong motor
/// of a pad, the low end of an LRA's band) and periodic buzzes at ``periodicSharpness``; magnitude
/// becomes intensity as is, so the device's calibration profile decides what it feels like.
public enum ThemeFeedback: Sendable, Hashable {
    case vibraRumble(durationMs: Int, count: Int, pauseMs: Int, magnitude: Double)
    case vibraPeriodic(durationMs: Int, magnitude: Double, fadeInTimeMs: Int, fadeInLevel: Double)
    case vibraPattern(magnitudes: [Double], durationsMs: [Int])
    case effect(name: String, intensity: Double)
    case pattern(HapticPattern)
    /// feedbackd's `Dummy`: nothing plays, for `durationMs` (`fbd-feedback-dummy.c`).
    case dummy(durationMs: Int)
    /// A feedback hapticsd does not play (`Sound`, `Led`, unknown types), kept so a theme reads as written.
    case other(type: String)

    /// The sharpness feedbackd's rumbles play at.
    public static let rumbleSharpness = 0.2
    /// The sharpness feedbackd's periodic buzzes play at.
    public static let periodicSharpness = 0.5
    /// The longest duration a theme may give, in milliseconds (one hour).
    public static let maximumDurationMs = 3_600_000

    /// Whether it makes the haptic motor move.
    public var isHaptic: Bool {
        switch self {
        case .other, .dummy: false
        default: true
        }
    }

    /// The feedbackd type name.
    public var typeName: String {
        switch self {
        case .vibraRumble: "VibraRumble"
        case .vibraPeriodic: "VibraPeriodic"
        case .vibraPattern: "VibraPattern"
        case .effect: "Effect"
        case .pattern: "Pattern"
        case .dummy: "Dummy"
        case .other(let type): type
        }
    }

    /// How long a tap rings out after its start, in seconds: what an `Effect` or `Pattern` run adds
    /// after its last event (a transient has no duration of its own).
    public static let tapAllowance = 0.05

    /// How long one run lasts, in seconds: what a repeating event (timeout 0 or > 0) loops over. The
    /// `Vibra` types say it (`duration`, or the sum of `durations`); an `Effect` or `Pattern` lasts its
    /// pattern plus ``tapAllowance``.
    public var runLength: Double {
        switch self {
        case .vibraRumble(let duration, let count, let pause, _):
            let plan = Self.rumblePlan(durationMs: duration, count: count, pauseMs: pause)
            return Double(max(duration, plan.count * (plan.rumble + plan.pause))) / 1000
        case .vibraPeriodic(let duration, _, _, _): return Double(duration) / 1000
        case .vibraPattern(_, let durations): return Double(durations.reduce(0, +)) / 1000
        case .effect(let name, _): return (FeedbackEffect.named(name)?.pattern.duration ?? 0) + Self.tapAllowance
        case .pattern(let pattern): return pattern.duration + Self.tapAllowance
        case .dummy(let duration): return Double(duration) / 1000
        case .other: return 0
        }
    }

    /// feedbackd's rumble arithmetic: `duration / count − pause` ms per rumble; when that is not
    /// positive, one rumble of its default 1000 ms.
    static func rumblePlan(durationMs: Int, count: Int, pauseMs: Int) -> (rumble: Int, pause: Int, count: Int) {
        let rumble = durationMs / max(count, 1) - pauseMs
        return rumble > 0 ? (rumble, pauseMs, max(count, 1)) : (1000, 0, 1)
    }

    /// The pattern hapticsd plays for it; nil for a feedback that is not haptic.
    public func hapticPattern() -> HapticPattern? {
        var events: [HapticEvent] = []
        var curves: [HapticParameterCurve] = []
        func buzz(at startMs: Int, durationMs: Int, intensity: Double, sharpness: Double) {
            // Continuous events are at most 30 s: a longer buzz is laid as consecutive pieces.
            let maximum = Int(HapticEvent.maximumContinuousDuration * 1000)
            var offset = 0
            while offset < durationMs {
                let piece = min(durationMs - offset, maximum)
                events.append(HapticEvent(
                    eventType: .hapticContinuous,
                    parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)],
                    relativeTime: Double(startMs + offset) / 1000, duration: Double(piece) / 1000))
                offset += piece
            }
        }
        switch self {
        case .vibraRumble(let duration, let count, let pause, let magnitude):
            let plan = Self.rumblePlan(durationMs: duration, count: count, pauseMs: pause)
            for index in 0..<plan.count {
                buzz(at: index * (plan.rumble + plan.pause), durationMs: plan.rumble, intensity: magnitude, sharpness: Self.rumbleSharpness)
            }
        case .vibraPeriodic(let duration, let magnitude, let fadeInTime, let fadeInLevel):
            buzz(at: 0, durationMs: duration, intensity: magnitude, sharpness: Self.periodicSharpness)
            if fadeInTime > 0, magnitude > 0, duration > 0 {
                let start = min(max(fadeInLevel / magnitude, 0), 1)
                curves.append(HapticParameterCurve(
                    parameterID: .hapticIntensityControl,
                    controlPoints: [.init(relativeTime: 0, value: start), .init(relativeTime: Double(min(fadeInTime, duration)) / 1000, value: 1)]))
            }
        case .vibraPattern(let magnitudes, let durations):
            var at = 0
            for (magnitude, duration) in zip(magnitudes, durations) {
                if magnitude > 0, duration > 0 { buzz(at: at, durationMs: duration, intensity: magnitude, sharpness: Self.rumbleSharpness) }
                at += duration
            }
        case .effect(let name, let intensity):
            return FeedbackEffect.named(name)?.scaled(by: intensity).pattern
        case .pattern(let pattern):
            return pattern
        case .dummy, .other:
            return nil
        }
        // Every value above is finite and in range (checked when the theme was read).
        return try? HapticPattern(events: events, parameterCurves: curves)
    }

    /// Reads one feedback object of a theme (its `event-name` is read by the caller). Unknown keys
    /// are ignored, as feedbackd ignores them; known keys must have the right type and range.
    static func parse(_ object: JSONObjectCursor, warnings: inout [String]) throws(JSONPathError) -> ThemeFeedback {
        let rawType = try object.required("type").string()
        // feedbackd upper-cases the first letter ("vibraRumble" works too).
        let type = rawType.prefix(1).uppercased() + rawType.dropFirst()
        func milliseconds(_ key: String, default value: Int) throws(JSONPathError) -> Int {
            try object.optional(key)?.integer(in: 0...maximumDurationMs) ?? value
        }
        /// feedbackd took 0…0xFFFF for these before 0…1, and still divides a value above 1 by 0xFFFF.
        func legacyLevel(_ key: String, default value: Double) throws(JSONPathError) -> Double {
            guard let cursor = object.optional(key) else { return value }
            let level = try cursor.number(in: 0...65535)
            return level > 1 ? level / 65535 : level
        }
        switch type {
        case "VibraRumble":
            return .vibraRumble(
                durationMs: try milliseconds("duration", default: 1000), count: try object.optional("count")?.integer(in: 1...1000) ?? 1,
                pauseMs: try milliseconds("pause", default: 0), magnitude: try object.optional("magnitude")?.number(in: 0...1) ?? 0.5)
        case "VibraPeriodic":
            return .vibraPeriodic(
                durationMs: try milliseconds("duration", default: 1000), magnitude: try legacyLevel("magnitude", default: 0.5),
                fadeInTimeMs: try milliseconds("fade-in-time", default: 500), fadeInLevel: try legacyLevel("fade-in-level", default: 0))
        case "VibraPattern":
            let magnitudes = try object.required("magnitudes").array().map { cursor throws(JSONPathError) in try cursor.number() }
            let durations = try object.required("durations").array().map { cursor throws(JSONPathError) in
                try cursor.integer(in: 0...maximumDurationMs)
            }
            guard magnitudes.count == durations.count else {
                throw object.error("magnitudes has \(magnitudes.count) entries and durations \(durations.count); they must be as long")
            }
            guard magnitudes.allSatisfy(\.isFinite) else { throw object.error("magnitudes must be finite numbers") }
            // feedbackd clamps magnitudes to 0…1.
            return .vibraPattern(magnitudes: magnitudes.map { min(max($0, 0), 1) }, durationsMs: durations)
        case "Effect":
            let cursor = try object.required("effect")
            let name = try cursor.string()
            guard FeedbackEffect.named(name) != nil else {
                throw cursor.error("no effect '\(name)'; effects: \(FeedbackEffect.vocabulary.map(\.name).joined(separator: ", "))")
            }
            return .effect(name: name, intensity: try object.optional("intensity")?.number(in: 0...1) ?? 1)
        case "Pattern":
            let cursor = try object.required("ahap")
            _ = try cursor.object()
            do {
                return .pattern(try HapticPattern(ahap: cursor.value.serialized()))
            } catch {
                throw cursor.error("not a usable AHAP pattern: \(error)")
            }
        case "Dummy":
            return .dummy(durationMs: try milliseconds("duration", default: 0))
        case "Sound", "Led":
            return .other(type: type)
        default:
            warnings.append("\(object.path): feedback type '\(rawType)' is unknown; it is ignored (types: VibraRumble, VibraPeriodic, VibraPattern, Effect, Pattern, Dummy, Sound, Led)")
            return .other(type: rawType)
        }
    }
}
