/// Which of a pad's two triggers hold an effect other than off: what a backend, the core and
/// hapticsd each keep to know whether there is anything to release.
public struct TriggerEngagement: Sendable, Hashable {
    /// R2 holds an effect.
    public var right: Bool
    /// L2 holds an effect.
    public var left: Bool

    /// Neither engaged unless said.
    public init(right: Bool = false, left: Bool = false) {
        self.right = right
        self.left = left
    }

    /// Whether either trigger holds an effect.
    public var any: Bool { right || left }

    /// The engagement after `right` and `left` are set (nil: that trigger as it was). Checks both
    /// effects as ``AdaptiveTriggerEffect/plan()`` does.
    ///
    /// - Throws: ``AdaptiveTriggerError`` for an effect that cannot be played.
    public func after(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(AdaptiveTriggerError) -> TriggerEngagement {
        var next = self
        if let right { next.right = try right.plan() != .off }
        if let left { next.left = try left.plan() != .off }
        return next
    }
}
