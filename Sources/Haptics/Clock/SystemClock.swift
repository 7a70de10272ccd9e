#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import CHapticsSystem

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
    /// - Parameter realtime: ask for `SCHED_FIFO` priority for the scheduler thread.
    public init(name: String = "haptics-sched", realtime: Bool = true) {
        core = SchedulerCore(name: name, realtime: realtime)
    }

    deinit { core.shutDown() }

    /// A process-wide clock for timers that belong to no engine (the power model's timeouts).
    public static let shared = SystemClock(name: "haptics-timers", realtime: false)

    public func now() -> HapticInstant { .monotonicNow() }

    @discardableResult
    public func schedule(at deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID {
        core.schedule(at: deadline, action)
    }

    public func cancel(_ id: ScheduledActionID) { core.cancel(id) }

    /// How many times the scheduler thread has woken up since it started.
    public var wakeUps: UInt64 { core.wakeUps.load(ordering: .relaxed) }

    /// Whether the scheduler thread runs with `SCHED_FIFO` priority (false until it starts).
    public var isRealtime: Bool { core.isRealtime.load(ordering: .relaxed) }
}

/// The state shared by a ``SystemClock`` and its thread; it outlives the clock until the thread ends.
private final class SchedulerCore: @unchecked Sendable {
    // The queue and flags are guarded by `mutex`; `condition` is signalled on every change that can
    // move the earliest deadline earlier, and on shut-down.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue = DeadlineQueue()
    private var started = false
    private var stopping = false
    let name: String
    let realtime: Bool
    let wakeUps = Atomic<UInt64>(0)
    let isRealtime = Atomic<Bool>(false)

    init(name: String, realtime: Bool) {
        self.name = name
        self.realtime = realtime
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func schedule(at deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let earliest = queue.earliestDeadline
        let id = queue.insert(deadline, action)
        if !started {
            started = true
            startThread()
        } else if earliest.map({ deadline < $0 }) ?? true {
            pthread_cond_signal(condition)
        }
        return id
    }

    func cancel(_ id: ScheduledActionID) {
        pthread_mutex_lock(mutex)
        queue.cancel(id)
        pthread_mutex_unlock(mutex)
        // No signal: a cancelled head only makes the thread wake early once and find nothing due.
    }

    func shutDown() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    private func startThread() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let core = Unmanaged<SchedulerCore>.fromOpaque(raw!).takeRetainedValue()
            core.run()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create failed for the haptics scheduler thread: errno \(rc)")
        pthread_detach(thread)
    }

    private func run() {
        let gotRealtime = haptics_tune_scheduler_thread(name, realtime ? 1 : 0, 20) == 1
        isRealtime.store(gotRealtime, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        while !stopping {
            if let entry = queue.popDue(at: .monotonicNow()) {
                pthread_mutex_unlock(mutex)
                entry.action()
                pthread_mutex_lock(mutex)
                continue
            }
            if let deadline = queue.earliestDeadline {
                var ts = timespec(
                    tv_sec: Int(deadline.nanoseconds / 1_000_000_000),
                    tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &ts)
            } else {
                pthread_cond_wait(condition, mutex)
            }
            wakeUps.add(1, ordering: .relaxed)
        }
        pthread_mutex_unlock(mutex)
    }
}
