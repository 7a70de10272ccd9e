import Synchronization

/// A clock that moves only when told to: for tests that pin time-driven rules exactly.
///
/// ``advance(bySeconds:)`` runs every action that falls due, on the calling thread, in deadline
/// order, with ``now()`` reading each action's own deadline while it runs (so an action that
/// schedules another inside the advanced span sees it run too).
public final class ManualClock: HapticClock {
    private struct State {
        var now: HapticInstant
        var queue = DeadlineQueue()
    }

    private let state: Mutex<State>

    /// A clock reading `start` (default: 1000 s, far from zero so negative offsets stay representable).
    public init(start: HapticInstant = HapticInstant(seconds: 1000)) {
        state = Mutex(State(now: start))
    }

    /// The manual time: where the last ``advance(to:)`` left it.
    public func now() -> HapticInstant { state.withLock { $0.now } }

    /// Queues `action` for `deadline`; it runs during the ``advance(to:)`` that reaches it.
    @discardableResult
    public func schedule(at deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID {
        state.withLock { $0.queue.insert(deadline, action) }
    }

    /// Drops a queued action that has not run.
    public func cancel(_ id: ScheduledActionID) {
        state.withLock { $0.queue.cancel(id) }
    }

    /// Moves the clock forward by `seconds`, running every action due on the way.
    public func advance(bySeconds seconds: Double) {
        advance(to: now().advanced(bySeconds: seconds))
    }

    /// Moves the clock forward to `target`, running every action due on the way. Never moves back.
    public func advance(to target: HapticInstant) {
        while true {
            let entry: DeadlineQueue.Entry? = state.withLock { state in
                guard let entry = state.queue.popDue(at: target) else {
                    state.now = max(state.now, target)
                    return nil
                }
                state.now = max(state.now, entry.deadline)
                return entry
            }
            guard let entry else { return }
            entry.action()
        }
    }

    /// The deadline of the earliest pending action, if any.
    public var nextDeadline: HapticInstant? { state.withLock { $0.queue.earliestDeadline } }
}
