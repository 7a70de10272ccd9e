import Synchronization

/// Keeps feedback of one kind from flooding a device: within a kind's minimum interval, further
/// feedback is coalesced into one play at the end of the interval (the newest effect wins), so a
/// fast sweep across fifty detents gives a steady stream of ticks the device can render, not fifty
/// overlapping ones.
///
/// The interval for a kind is the larger of the user's ``HapticPolicy/minimumInterval(for:)`` and
/// the time the engine's slowest device needs to render one tap and be updated again.
public final class OveruseGuard: Sendable {
    /// What happened to one request.
    public enum Decision: Sendable, Hashable {
        /// Played at once.
        case played
        /// Will play at this instant, standing for every request until then.
        case deferred(until: HapticInstant)
        /// Absorbed into a play already deferred.
        case coalesced
    }

    /// Counts of what the guard did, per kind.
    public struct Statistics: Sendable, Hashable {
        /// Plays started (at once or deferred).
        public var played = 0
        /// Requests absorbed into another play.
        public var coalesced = 0
    }

    private struct KindState {
        var last: HapticInstant?
        var pending: (effect: FeedbackEffect, scale: Double, at: HapticInstant)?
        var statistics = Statistics()
    }

    /// Per kind. A handful of kinds: a linear search of short strings costs less than hashing one.
    private let kinds = Mutex<[(kind: String, state: KindState)]>([])

    /// A guard with no history.
    public init() {}

    /// Plays `effect` (at `scale` of its intensity) through `play` now, later, or not at all,
    /// keeping `interval` seconds between plays of its kind. A coalesced request replaces the
    /// pending one: the newest wins. A deferred play is scheduled on `clock` and is dropped if the
    /// guard is released first; `play` should not hold the clock's owner strongly.
    @discardableResult
    public func request(
        _ effect: FeedbackEffect, scale: Double = 1, interval: Double, clock: any HapticClock,
        play: @escaping @Sendable (FeedbackEffect, Double) -> Void
    ) -> Decision {
        let decision = admit(effect, scale: scale, interval: interval, at: clock.now(), clock: clock, play: play)
        if case .played = decision { play(effect, scale) }
        return decision
    }

    /// ``request(_:scale:interval:clock:play:)`` at `now` (read from `clock` by the caller, which
    /// starts a play at once at that instant too), except that a play at once
    /// (``Decision/played``) is left to the caller, which plays it directly rather than through
    /// `play` (only a deferred play goes through it).
    func admit(
        _ effect: FeedbackEffect, scale: Double, interval: Double, at now: HapticInstant, clock: any HapticClock,
        play: @escaping @Sendable (FeedbackEffect, Double) -> Void
    ) -> Decision {
        let decision: Decision = kinds.withLock { kinds in
            let index = Self.slot(effect.kind, in: &kinds)
            if let pending = kinds[index].state.pending {
                kinds[index].state.pending = (effect, scale, pending.at)
                kinds[index].state.statistics.coalesced += 1
                return .coalesced
            }
            if let last = kinds[index].state.last, now < last.advanced(bySeconds: interval) {
                let at = last.advanced(bySeconds: interval)
                kinds[index].state.pending = (effect, scale, at)
                return .deferred(until: at)
            }
            kinds[index].state.last = now
            kinds[index].state.statistics.played += 1
            return .played
        }
        switch decision {
        case .played, .coalesced:
            break
        case .deferred(let at):
            // The action sits in the clock's queue until `at`; it must not hold the clock (or,
            // through `play`, the engine that owns the clock), or an engine released with a
            // feedback pending would keep itself alive. The play counts from its deadline.
            clock.schedule(at: at) { [weak self] in
                guard let self, let pending = self.takePending(kind: effect.kind, at: at) else { return }
                play(pending.effect, pending.scale)
            }
        }
        return decision
    }

    /// The index of `kind`'s state, added when new.
    private static func slot(_ kind: String, in kinds: inout [(kind: String, state: KindState)]) -> Int {
        // An index loop: no generic algorithm, which allocates in an unoptimised build.
        for index in kinds.indices where kinds[index].kind == kind { return index }
        kinds.append((kind, KindState()))
        return kinds.count - 1
    }

    private func takePending(kind: String, at now: HapticInstant) -> (effect: FeedbackEffect, scale: Double)? {
        kinds.withLock { kinds in
            guard let index = kinds.firstIndex(where: { $0.kind == kind }), let pending = kinds[index].state.pending else { return nil }
            kinds[index].state.pending = nil
            kinds[index].state.last = now
            kinds[index].state.statistics.played += 1
            return (pending.effect, pending.scale)
        }
    }

    /// What the guard did for `kind` so far.
    public func statistics(for kind: String) -> Statistics {
        kinds.withLock { kinds in kinds.first { $0.kind == kind }?.state.statistics ?? Statistics() }
    }
}
