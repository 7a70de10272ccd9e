import Haptics

/// Something an interaction did that deserves feedback, or is worth reporting.
public enum InteractionEvent: Sendable, Hashable, CustomStringConvertible {
    /// The pointer entered a target's hit region (`magnetic`: it pulls the pointer in).
    case targetEntered(id: String, magnetic: Bool)
    /// The pointer left a target's hit region.
    case targetExited(id: String)
    /// A flick will carry the pointer to this magnetic target.
    case flickProjected(id: String)
    /// A dragged item snapped into alignment with a guide.
    case snapped(guide: String)
    /// A knob or slider stepped onto detent `index`, moving up (+1) or down (-1).
    case detentCrossed(index: Int, direction: Int)
    /// A discrete level (pressure, value) was reached.
    case levelChanged(level: Int)
    /// The end of the range was hit (`upper` or lower end).
    case endStop(upper: Bool)

    public var description: String {
        switch self {
        case .targetEntered(let id, let magnetic): "entered \(id)\(magnetic ? " (magnetic)" : "")"
        case .targetExited(let id): "exited \(id)"
        case .flickProjected(let id): "flick → \(id)"
        case .snapped(let guide): "snapped to \(guide)"
        case .detentCrossed(let index, let direction): "detent \(index) \(direction > 0 ? "↑" : "↓")"
        case .levelChanged(let level): "level \(level)"
        case .endStop(let upper): "end stop (\(upper ? "upper" : "lower"))"
        }
    }

    /// The feedback the event plays, and at what strength (0 … 1); nil for events that are only reported.
    ///
    /// Entering a magnetic target and snapping into alignment play the alignment feedback; a
    /// detent plays selection feedback at the detent strength; a level plays level-change feedback;
    /// an end stop plays a firmer (rigid) impact at the end-stop strength.
    public func feedback(detentStrength: Double = 1, endStopStrength: Double = 1) -> (effect: FeedbackEffect, strength: Double)? {
        switch self {
        case .targetEntered(_, true), .snapped: (FeedbackEffect.named("mac.alignment")!, 1)
        case .detentCrossed: (FeedbackEffect.named("selection")!, detentStrength)
        case .levelChanged: (FeedbackEffect.named("mac.levelChange")!, 1)
        case .endStop: (FeedbackEffect.named("impact.rigid")!, endStopStrength)
        case .targetEntered(_, false), .targetExited, .flickProjected: nil
        }
    }
}
