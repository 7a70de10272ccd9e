import Logging

/// What every generator shares: the engine, a hold on each of its devices (so ``prepare()`` and
/// release drive the power model), and the engine's overuse guard.
final class FeedbackCore: Sendable {
    let engine: HapticEngine
    let holds: [DeviceHold]
    /// What the overuse guard calls for a deferred play, built once rather than on every trigger.
    private let deferredPlay: @Sendable (FeedbackEffect, Double) -> Void

    init(engine: HapticEngine) {
        self.engine = engine
        holds = engine.devices.map { $0.hold() }
        // Weak: a deferred play waits in the engine's clock, which the engine owns.
        deferredPlay = { [weak engine] effect, scale in
            guard let engine else { return }
            do throws(HapticEngineError) {
                try engine.play(effect.timeline, intensityScale: scale, feedback: effect.name, at: engine.clock.now())
            } catch {
                Self.notPlayed(effect, error, on: engine)
            }
        }
    }

    private static func notPlayed(_ effect: FeedbackEffect, _ error: HapticEngineError, on engine: HapticEngine) {
        engine.logger.warning("feedback \(effect.name) did not play: \(error)")
    }

    deinit {
        for hold in holds { hold.release() }
    }

    func prepare() {
        if let remote = engine.remote { return remote.prepare() }
        for hold in holds { hold.prepare() }
    }

    @discardableResult
    func trigger(_ effect: FeedbackEffect, scale: Double = 1) -> OveruseGuard.Decision {
        let engine = self.engine
        // hapticsd's overuse guard (per app, per device) decides: it sees every app's feedback.
        if let remote = engine.remote { return remote.play(effect, scale: scale, clock: engine.clock) }
        // The engine asks its guard and starts an effect admitted at once under one lock, at the
        // instant the guard admitted it (one clock read for both).
        let (decision, failure) = engine.playFeedback(effect, scale: scale, at: engine.clock.now(), deferredPlay: deferredPlay)
        if let failure { Self.notPlayed(effect, failure, on: engine) }
        return decision
    }
}

/// Impact feedback (UIKit's `UIImpactFeedbackGenerator`): something hit something.
///
/// ```swift
/// let impact = ImpactFeedbackGenerator(style: .rigid, engine: engine)
/// impact.prepare()          // when a collision is about to happen
/// impact.impactOccurred()   // the moment it does
/// ```
public final class ImpactFeedbackGenerator: Sendable {
    /// The mass and feel of the objects colliding.
    public enum FeedbackStyle: String, Sendable, Hashable, CaseIterable {
        case light, medium, heavy, soft, rigid
    }

    /// The style.
    public let style: FeedbackStyle
    private let core: FeedbackCore
    private let effect: FeedbackEffect

    /// A generator playing `style` impacts on `engine`'s devices; it holds them until released.
    public init(style: FeedbackStyle = .medium, engine: HapticEngine) {
        self.style = style
        core = FeedbackCore(engine: engine)
        effect = FeedbackEffect.named("impact.\(style.rawValue)")!
    }

    /// Wakes the devices so the next impact plays with minimum latency (for a few seconds).
    public func prepare() { core.prepare() }

    /// Plays the impact.
    public func impactOccurred() { core.trigger(effect) }

    /// Plays the impact at `intensity` (0 … 1) of the style's strength.
    public func impactOccurred(intensity: Double) { core.trigger(effect, scale: max(0, min(intensity.isFinite ? intensity : 0, 1))) }
}

/// Selection feedback (`UISelectionFeedbackGenerator`): a value stepped (a picker, a detent).
/// Fast changes are coalesced by the overuse guard.
public final class SelectionFeedbackGenerator: Sendable {
    private let core: FeedbackCore
    private let effect = FeedbackEffect.named("selection")!

    /// A generator on `engine`'s devices; it holds them until released.
    public init(engine: HapticEngine) {
        core = FeedbackCore(engine: engine)
    }

    /// Wakes the devices for minimum latency.
    public func prepare() { core.prepare() }

    /// Plays a selection tick.
    public func selectionChanged() { core.trigger(effect) }
}

/// Notification feedback (`UINotificationFeedbackGenerator`): a task succeeded, needs attention, or failed.
public final class NotificationFeedbackGenerator: Sendable {
    /// The outcome to convey.
    public enum FeedbackType: String, Sendable, Hashable, CaseIterable {
        case success, warning, error
    }

    private let core: FeedbackCore

    /// A generator on `engine`'s devices; it holds them until released.
    public init(engine: HapticEngine) {
        core = FeedbackCore(engine: engine)
    }

    /// Wakes the devices for minimum latency.
    public func prepare() { core.prepare() }

    /// Plays the notification for `type`.
    public func notificationOccurred(_ type: FeedbackType) {
        core.trigger(FeedbackEffect.named("notification.\(type.rawValue)")!)
    }
}

/// Plays any ``FeedbackEffect``: watchOS's `WKHapticType` set, macOS's patterns, Android's
/// primitives, or an effect of the app's own.
public final class EffectFeedbackGenerator: Sendable {
    private let core: FeedbackCore

    /// A generator on `engine`'s devices; it holds them until released.
    public init(engine: HapticEngine) {
        core = FeedbackCore(engine: engine)
    }

    /// Wakes the devices for minimum latency.
    public func prepare() { core.prepare() }

    /// Plays `effect` at `intensity` (0 … 1) of its strength, through the overuse guard of its kind.
    /// - Returns: whether it played now, was deferred, or was coalesced into a deferred play.
    @discardableResult
    public func play(_ effect: FeedbackEffect, intensity: Double = 1) -> OveruseGuard.Decision {
        core.trigger(effect, scale: max(0, min(intensity.isFinite ? intensity : 0, 1)))
    }

    /// Plays the vocabulary effect called `name` (`watch.directionUp`, `mac.alignment`, `android.thud`).
    /// - Throws: ``FeedbackError/unknownEffect(_:available:)``.
    public func play(named name: String) throws(FeedbackError) {
        guard let effect = FeedbackEffect.named(name) else {
            throw .unknownEffect(name, available: FeedbackEffect.vocabulary.map(\.name))
        }
        play(effect)
    }
}

/// A feedback request that could not be understood.
public enum FeedbackError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No effect has this name.
    case unknownEffect(String, available: [String])

    public var description: String {
        switch self {
        case .unknownEffect(let name, let available):
            "no feedback effect named '\(name)'; effects: \(available.joined(separator: ", "))"
        }
    }
}
