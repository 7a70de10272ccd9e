import Haptics
import Synchronization

/// Plays a trace's feedback on an engine at the trace's own pace, and reports what fired when.
public enum TraceReplay {
    /// One event of the replay and what became of its feedback.
    public struct Fired: Sendable, CustomStringConvertible {
        /// Seconds from the start of the trace.
        public var time: Double
        /// The event.
        public var event: InteractionEvent
        /// The feedback effect's name, if the event has feedback.
        public var effect: String?
        /// The feedback's strength, 0 … 1.
        public var strength: Double
        /// Whether it played at once, was deferred, or was coalesced by the overuse guard.
        public var decision: OveruseGuard.Decision?

        public var description: String {
            let milliseconds = (time * 1000).rounded()
            let seconds = milliseconds.isFinite ? JSONValue.format(milliseconds) + " ms" : "\(time) s"
            guard let effect, let decision else { return "\(seconds)  \(event)" }
            let outcome: String
            switch decision {
            case .played: outcome = "played"
            case .deferred: outcome = "deferred (overuse guard)"
            case .coalesced: outcome = "coalesced (overuse guard)"
            }
            return "\(seconds)  \(event)  → \(effect) ×\((strength * 100).rounded() / 100)  \(outcome)"
        }
    }

    /// Replays `trace` on `engine`: each event's feedback is requested at the event's time after
    /// the engine's current time, on the engine's clock. Returns when the last one has been
    /// requested and `tail` seconds more have passed (on a manual clock: after advancing it).
    ///
    /// Only events within ``InteractionTrace/Limits/span`` (a day) of the first are replayed, as a
    /// trace file allows: a trace made in code with times centuries apart would otherwise drive the
    /// engine's clock to the end of its range.
    public static func run(
        _ trace: InteractionTrace, on engine: HapticEngine, parameters: InteractionParameters = InteractionParameters(), tail: Double = 0.3,
        advance: (@Sendable (HapticInstant) -> Void)? = nil
    ) -> [Fired] {
        let all = trace.events(parameters: parameters)
        let events = all.filter { $0.time.isFinite && $0.time - all[0].time <= InteractionTrace.Limits.span }
        let strengths = trace.strengths
        let feedback = InteractionFeedback(engine: engine, detentStrength: strengths.detent, endStopStrength: strengths.endStop)
        feedback.prepare()
        let fired = Mutex<[Fired]>([])
        let firstTime = events.first?.time ?? 0
        let start = engine.clock.now()
        for entry in events {
            engine.clock.schedule(at: start.advanced(bySeconds: entry.time - firstTime)) {
                let result = feedback.play(entry.event)
                fired.withLock {
                    $0.append(Fired(time: entry.time, event: entry.event, effect: result?.effect, strength: result?.strength ?? 0, decision: result?.decision))
                }
            }
        }
        // Every request falls due before `end`; the tail lets the last feedback finish playing.
        let end = start.advanced(bySeconds: (events.last?.time ?? firstTime) - firstTime + min(max(tail, 0), InteractionTrace.Limits.span))
        if let advance { advance(end) } else { sleep(until: end) }
        return fired.withLock { $0 }
    }

    private static func sleep(until instant: HapticInstant) {
        let now = HapticInstant.monotonicNow()
        guard instant > now else { return }
        let nanoseconds = instant.nanoseconds(since: now)
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 { request = remaining }
    }
}

#if canImport(Glibc)
import Glibc
#endif
