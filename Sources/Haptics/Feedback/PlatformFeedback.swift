import Synchronization

/// SwiftUI's `SensoryFeedback` (iOS 17), shaped like it: a value naming a feedback, played with
/// ``EffectFeedbackGenerator/play(_:)-(SensoryFeedback)`` or when a value changes (``SensoryFeedbackTrigger``).
///
/// ```swift
/// let feedback = EffectFeedbackGenerator(engine: engine)
/// feedback.play(.impact(weight: .heavy, intensity: 0.8))
/// feedback.play(.success)
/// ```
public struct SensoryFeedback: Sendable, Hashable {
    /// The vocabulary effect it plays (`sensory.success`, `sensory.impact.heavy`).
    public let effect: FeedbackEffect
    /// Its strength, 0 … 1 of the effect's.
    public let intensity: Double

    private init(_ name: String, intensity: Double = 1) {
        // Every name below is in the vocabulary (a test checks each).
        effect = FeedbackEffect.named(name)!
        self.intensity = intensity.isFinite ? max(0, min(intensity, 1)) : 0
    }

    /// A task completed successfully.
    public static let success = SensoryFeedback("sensory.success")
    /// A task produced a warning.
    public static let warning = SensoryFeedback("sensory.warning")
    /// An error occurred.
    public static let error = SensoryFeedback("sensory.error")
    /// The selection changed.
    public static let selection = SensoryFeedback("sensory.selection")
    /// A value increased.
    public static let increase = SensoryFeedback("sensory.increase")
    /// A value decreased.
    public static let decrease = SensoryFeedback("sensory.decrease")
    /// An activity started.
    public static let start = SensoryFeedback("sensory.start")
    /// An activity stopped.
    public static let stop = SensoryFeedback("sensory.stop")
    /// An item aligned with another.
    public static let alignment = SensoryFeedback("sensory.alignment")
    /// The pressure moved to another discrete level.
    public static let levelChange = SensoryFeedback("sensory.levelChange")
    /// A drawn path was completed (iOS 17.5).
    public static let pathComplete = SensoryFeedback("sensory.pathComplete")
    /// A physical impact, medium weight at full intensity.
    public static let impact = SensoryFeedback("sensory.impact")

    /// How heavy the colliding object is.
    public enum Weight: String, Sendable, Hashable, CaseIterable {
        /// A light object.
        case light
        /// A medium object (the default).
        case medium
        /// A heavy object.
        case heavy
    }

    /// How much the colliding object flexes.
    public enum Flexibility: String, Sendable, Hashable, CaseIterable {
        /// It does not flex.
        case rigid
        /// It flexes a little.
        case solid
        /// It flexes a lot.
        case soft
    }

    /// An impact of an object of `weight`, at `intensity` (0 … 1).
    public static func impact(weight: Weight = .medium, intensity: Double = 1) -> SensoryFeedback {
        SensoryFeedback(weight == .medium ? "sensory.impact" : "sensory.impact.\(weight.rawValue)", intensity: intensity)
    }

    /// An impact of an object of `flexibility`, at `intensity` (0 … 1).
    public static func impact(flexibility: Flexibility, intensity: Double = 1) -> SensoryFeedback {
        SensoryFeedback("sensory.impact.\(flexibility.rawValue)", intensity: intensity)
    }
}

/// SwiftUI's `sensoryFeedback(_:trigger:)` without a view: plays a feedback each time the value it
/// watches changes, optionally only when `condition(old, new)` holds, or whatever
/// `feedback(old, new)` returns (nil: nothing).
public final class SensoryFeedbackTrigger<Value: Equatable & Sendable>: Sendable {
    private let generator: EffectFeedbackGenerator
    private let choose: @Sendable (Value, Value) -> SensoryFeedback?
    /// The value last seen.
    private let last: Mutex<Value>

    /// Plays `feedback` whenever the value changes from `initial`, when `condition` allows it.
    public convenience init(
        _ feedback: SensoryFeedback, initial: Value, engine: HapticEngine, condition: @escaping @Sendable (Value, Value) -> Bool = { _, _ in true }
    ) {
        self.init(initial: initial, engine: engine) { old, new in condition(old, new) ? feedback : nil }
    }

    /// Plays what `feedback(old, new)` returns whenever the value changes from `initial`.
    public init(initial: Value, engine: HapticEngine, feedback: @escaping @Sendable (Value, Value) -> SensoryFeedback?) {
        generator = EffectFeedbackGenerator(engine: engine)
        choose = feedback
        last = Mutex(initial)
    }

    /// The watched value is now `value`: plays the feedback if it changed.
    public func update(_ value: Value) {
        let old: Value? = last.withLock { last in
            guard value != last else { return nil }
            defer { last = value }
            return last
        }
        guard let old, let feedback = choose(old, value) else { return }
        generator.play(feedback)
    }
}

/// UIKit's `UICanvasFeedbackGenerator` (iOS 17.5): feedback for a drawing canvas.
public final class CanvasFeedbackGenerator: Sendable {
    private let generator: EffectFeedbackGenerator

    /// A generator on `engine`'s devices; it holds them until released.
    public init(engine: HapticEngine) {
        generator = EffectFeedbackGenerator(engine: engine)
    }

    /// Wakes the devices for minimum latency.
    public func prepare() { generator.prepare() }

    /// An element snapped to a guide or ruler.
    public func alignmentOccurred() { generator.play(FeedbackEffect.named("canvas.alignment")!) }

    /// A path was completed, or a shape recognized.
    public func pathCompleted() { generator.play(FeedbackEffect.named("canvas.pathCompleted")!) }
}

/// Android's `HapticFeedbackConstants` (the values `View.performHapticFeedback` takes), each played
/// as AOSP plays it on a vibrator without composition primitives.
public enum HapticFeedbackConstant: Int, Sendable, Hashable, CaseIterable {
    /// A long press triggered an action (API 3).
    case longPress = 0
    /// An on-screen key was pressed (API 5).
    case virtualKey = 1
    /// A software keyboard key was pressed (API 8; KEYBOARD_TAP, renamed KEYBOARD_PRESS in API 27).
    case keyboardPress = 3
    /// An hour or minute tick of a clock was pressed (API 21).
    case clockTick = 4
    /// A context click on an object (API 23).
    case contextClick = 6
    /// A keyboard key was released (API 27).
    case keyboardRelease = 7
    /// A virtual key was released (API 27).
    case virtualKeyRelease = 8
    /// A text selection handle moved (API 27).
    case textHandleMove = 9
    /// A gesture started (API 30).
    case gestureStart = 12
    /// A gesture finished (API 30).
    case gestureEnd = 13
    /// An interaction was confirmed or completed (API 30).
    case confirm = 16
    /// An interaction was rejected or failed (API 30).
    case reject = 17
    /// A switch was turned on (API 34).
    case toggleOn = 21
    /// A switch was turned off (API 34).
    case toggleOff = 22
    /// A gesture passed the point where releasing acts (API 34).
    case gestureThresholdActivate = 23
    /// A gesture went back under that point (API 34).
    case gestureThresholdDeactivate = 24
    /// A drag-and-drop target was picked up (API 34).
    case dragStart = 25
    /// Stepped between a few choices (API 34).
    case segmentTick = 26
    /// Stepped between many choices, very softly (API 34).
    case segmentFrequentTick = 27

    /// The vocabulary effect it plays (`android.feedback.confirm`).
    public var effect: FeedbackEffect {
        let name = String(describing: self)
        // Every case has an entry (a test checks each).
        return FeedbackEffect.named("android.feedback.\(name)")!
    }
}

/// Android's predefined effects (`VibrationEffect.createPredefined`, API 29).
public enum PredefinedEffect: Int, Sendable, Hashable, CaseIterable {
    /// EFFECT_CLICK: the baseline click.
    case click = 0
    /// EFFECT_DOUBLE_CLICK.
    case doubleClick = 1
    /// EFFECT_TICK: less strong than a click.
    case tick = 2
    /// EFFECT_HEAVY_CLICK: stronger than a click.
    case heavyClick = 5

    /// The vocabulary effect it plays (`android.effect.click`).
    public var effect: FeedbackEffect {
        FeedbackEffect.named("android.effect.\(String(describing: self))")!
    }
}

extension EffectFeedbackGenerator {
    /// Plays SwiftUI's `feedback`, through the overuse guard of its kind.
    @discardableResult
    public func play(_ feedback: SensoryFeedback) -> OveruseGuard.Decision {
        play(feedback.effect, intensity: feedback.intensity)
    }

    /// Plays Android's `constant` as `View.performHapticFeedback` would.
    @discardableResult
    public func perform(_ constant: HapticFeedbackConstant) -> OveruseGuard.Decision {
        play(constant.effect)
    }

    /// Plays Android's predefined `effect`.
    @discardableResult
    public func play(_ effect: PredefinedEffect) -> OveruseGuard.Decision {
        play(effect.effect)
    }
}
