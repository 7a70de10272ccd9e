import CHapticsSystem
import HapticsSupport
import Synchronization

/// The monotonic clock with its own scheduler thread.
///
/// The thread starts with the first ``schedule(at:_:)`` and sleeps to absolute `CLOCK_MONOTONIC`
/// deadlines (`pthread_cond_timedwait` on a monotonic condition variable, timer slack 1 ns), so a
/// deadline is not pushed back by the time spent running earlier actions. With nothing scheduled
/// it blocks without a timeout: an idle clock causes zero wake-ups (``wakeUps`` counts them).
/// When `realtime` is requested and allowed (root or `CAP_SYS_NICE`), the thread runs
/// `SCHED_FIFO`, as haptic servers do; ``isRealtime`` tells whether that took effect.
///
/// Each ``HapticEngine`` owns one `SystemClock`: one scheduler thread per engine. The thread
/// ends when the clock is released.
public final class SystemClock: HapticClock {
    private let core: SchedulerCore

    /// A clock whose thread is named `name` (15 characters at most are kept).
    /// - Parameters:
    ///   - name: the scheduler thread's name, as `ps` and `top` show it.
    ///   - realtime: ask for `SCHED_FIFO` priority for the scheduler thread.
    public init(name: String = "haptics-sched", realtime: Bool = true) {
        core = SchedulerCore(name: name, realtime: realtime)
    }

    deinit { core.shutDown() }

    /// A process-wide clock for timers that belong to no engine (the power model's timeouts).
    public static let shared = SystemClock(name: "haptics-timers", realtime: false)

    /// `CLOCK_MONOTONIC` now.
    public func now() -> HapticInstant { .monotonicNow() }

    /// Runs `action` on the scheduler thread at `deadline` (started by the first call).
    @discardableResult
    public func schedule(at deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID {
        core.schedule(at: deadline, action)
    }

    /// Drops a scheduled action that has not started.
    public func cancel(_ id: ScheduledActionID) { core.cancel(id) }

    /// How many times the scheduler thread has woken up since it started.
    public var wakeUps: UInt64 { core.wakeUps.load(ordering: .relaxed) }

    /// Whether the scheduler thread runs with `SCHED_FIFO` priority (false until it starts).
    public var isRealtime: Bool { core.isRealtime.load(ordering: .relaxed) }
}

/// The state shared by a ``SystemClock`` and its thread; it outlives the clock until the thread ends.
private final class SchedulerCore: Sendable {
    private struct State {
        var queue = DeadlineQueue()
        var started = false
        var stopping = false
        /// The thread is asleep on the condition variable (the next call of the wait body is a wake-up).
        var sleeping = false
    }

    private let shared = Guarded(State())
    let name: String
    let realtime: Bool
    let wakeUps = Atomic<UInt64>(0)
    let isRealtime = Atomic<Bool>(false)

    init(name: String, realtime: Bool) {
        self.name = name
        self.realtime = realtime
    }

    func schedule(at deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID {
        let (id, wake) = shared.locked { state -> (ScheduledActionID, Bool) in
            let earliest = state.queue.earliestDeadline
            let id = state.queue.insert(deadline, action)
            if !state.started {
                state.started = true
                do {
                    try PosixThread.start(name: name) { [self] in run() }.detach()
                } catch {
                    preconditionFailure("the haptics scheduler thread could not start: \(error)")
                }
                return (id, false)
            }
            return (id, earliest.map { deadline < $0 } ?? true)
        }
        if wake { shared.broadcast() }
        return id
    }

    func cancel(_ id: ScheduledActionID) {
        // No wake-up: a cancelled head only makes the thread wake early once and find nothing due.
        shared.locked { $0.queue.cancel(id) }
    }

    func shutDown() {
        shared.locked { $0.stopping = true }
        shared.broadcast()
    }

    private func run() {
        isRealtime.store(haptics_tune_scheduler_thread(name, realtime ? 1 : 0, 20) == 1, ordering: .relaxed)
        while let entry = shared.wait({ state -> Guarded<State>.Decision<DeadlineQueue.Entry?> in
            if state.sleeping {
                state.sleeping = false
                wakeUps.add(1, ordering: .relaxed)
            }
            if state.stopping { return .done(nil) }
            if let entry = state.queue.popDue(at: .monotonicNow()) { return .done(entry) }
            state.sleeping = true
            return state.queue.earliestDeadline.map { .sleepUntil($0.nanoseconds) } ?? .sleep
        }) {
            entry.action()
        }
    }
}
