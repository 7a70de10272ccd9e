import CHapticsSystem
import HapticsSupport
import Synchronization

/// The monotonic clock with its own scheduler thread.
///
/// The thread starts with the first ``schedule(at:_:)`` and sleeps to absolute `CLOCK_MONOTONIC`
/// deadlines (a `timerfd`, see `DeadlineTimer` in HapticsSupport), so a deadline is not pushed back by the time
/// spent running earlier actions, and an earlier deadline is armed without waking the thread
/// before it. With nothing scheduled the timer is disarmed: an idle clock causes zero wake-ups
/// (``wakeUps`` counts them).
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
///
/// The thread sleeps on a `DeadlineTimer` armed for the earliest deadline. A `schedule` whose
/// deadline comes before the armed one re-arms the timer and leaves the thread asleep: an engine's
/// start arms its pass for the tap's end without waking the thread at once, which on a small
/// machine would take a CPU from the very write the start just made.
private final class SchedulerCore: Sendable {
    private struct State {
        var queue = DeadlineQueue()
        var started = false
        var stopping = false
        /// What the timer is armed for, in nanoseconds (`.max`: disarmed).
        var armed: UInt64 = .max
    }

    /// What the thread does after looking at the state.
    private enum Step {
        case run(DeadlineQueue.Entry)
        case sleep
        case exit
    }

    private let shared = Guarded(State())
    private let timer = DeadlineTimer()
    let name: String
    let realtime: Bool
    let wakeUps = Atomic<UInt64>(0)
    let isRealtime = Atomic<Bool>(false)

    init(name: String, realtime: Bool) {
        self.name = name
        self.realtime = realtime
    }

    func schedule(at deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID {
        shared.locked { state -> ScheduledActionID in
            let id = state.queue.insert(deadline, action)
            if !state.started {
                state.started = true
                do {
                    try PosixThread.start(name: name) { [self] in run() }.detach()
                } catch {
                    preconditionFailure("the haptics scheduler thread could not start: \(error)")
                }
            } else if deadline.nanoseconds < state.armed {
                state.armed = deadline.nanoseconds
                timer.arm(at: state.armed)
            }
            return id
        }
    }

    func cancel(_ id: ScheduledActionID) {
        // The timer stays armed: a cancelled head only makes the thread wake early once and find nothing due.
        shared.locked { $0.queue.cancel(id) }
    }

    func shutDown() {
        shared.locked { state in
            state.stopping = true
            state.armed = 0
            timer.arm(at: 0)
        }
    }

    private func run() {
        isRealtime.store(haptics_tune_scheduler_thread(name, realtime ? 1 : 0, 20) == 1, ordering: .relaxed)
        while true {
            let step = shared.locked { state -> Step in
                if state.stopping { return .exit }
                let now = HapticInstant.monotonicNow()
                if let entry = state.queue.popDue(at: now) { return .run(entry) }
                let next = state.queue.earliestDeadline?.nanoseconds ?? .max
                // Armed already for that deadline, still to come: nothing to change.
                if next != state.armed || state.armed <= now.nanoseconds {
                    state.armed = next
                    timer.arm(at: next)
                }
                return .sleep
            }
            switch step {
            case .run(let entry):
                entry.action()
            case .sleep:
                timer.wait()
                wakeUps.add(1, ordering: .relaxed)
            case .exit:
                return
            }
        }
    }
}
