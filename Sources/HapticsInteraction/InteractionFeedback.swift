import Haptics

/// Plays interaction events as feedback on an engine, through its overuse guard: a fast sweep
/// across many detents becomes ticks the device can render, never a flood.
public final class InteractionFeedback: Sendable {
    private let generator: EffectFeedbackGenerator
    /// Selection-tick intensity for detents, 0 … 1.
    public let detentStrength: Double
    /// End-stop impact intensity, 0 … 1.
    public let endStopStrength: Double

    /// Feedback on `engine`'s devices, with detent and end-stop strengths (a knob's configuration).
    public init(engine: HapticEngine, detentStrength: Double = 1, endStopStrength: Double = 1) {
        generator = EffectFeedbackGenerator(engine: engine)
        self.detentStrength = detentStrength
        self.endStopStrength = endStopStrength
    }

    /// Wakes the devices (call when an interaction begins).
    public func prepare() { generator.prepare() }

    /// Plays the feedback of `event`, if it has one.
    /// - Returns: the feedback's name and what the overuse guard did, or nil for events without feedback.
    @discardableResult
    public func play(_ event: InteractionEvent) -> (effect: String, strength: Double, decision: OveruseGuard.Decision)? {
        guard let (effect, strength) = event.feedback(detentStrength: detentStrength, endStopStrength: endStopStrength) else { return nil }
        return (effect.name, strength, generator.play(effect, intensity: strength))
    }
}
