#if canImport(Glibc)
import Glibc
#endif

/// State behind a pthread mutex with one condition variable on `CLOCK_MONOTONIC`.
///
/// `Synchronization.Mutex` has no condition variable, and the writer thread must sleep until "a new
/// state was submitted, or the spacing deadline passed", so this small owner wraps the two pthread
/// objects. It allocates them once and destroys them exactly once, in `deinit`.
///
/// Waiting never happens inside an access to the state: ``wait(_:)`` calls its body (one `inout`
/// access), and only after the body returned does it sleep on the condition variable, so another
/// thread's changes made meanwhile are seen by the next call and never overwritten.
public final class Guarded<State>: @unchecked Sendable {
    // The state is only touched between pthread_mutex_lock and pthread_mutex_unlock; it and the
    // pthread objects live at stable heap addresses for the object's lifetime. The state sits
    // behind a pointer rather than in a stored `var`, whose every access the runtime would check
    // for exclusivity although the mutex already makes it exclusive. Visible to inlinable code, so
    // the calls below are specialised for each `State` in the modules that use them (a generic
    // call across the module boundary looked up `Decision`'s metadata at run time on every wait:
    // about a thousand instructions per wake of an engine's scheduler thread).
    @usableFromInline let state: UnsafeMutablePointer<State>
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let condition: UnsafeMutablePointer<pthread_cond_t>

    /// What the body of ``wait(_:)`` decides.
    public enum Decision<Result> {
        /// Stop waiting with this result.
        case done(Result)
        /// Sleep until the next ``broadcast()``, then call the body again.
        case sleep
        /// Sleep until the next broadcast or this time (nanoseconds on `CLOCK_MONOTONIC`), then call
        /// the body again.
        case sleepUntil(UInt64)
    }

    /// Guards `initial`.
    public init(_ initial: State) {
        state = .allocate(capacity: 1)
        state.initialize(to: initial)
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
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
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with the state locked.
    @inlinable
    public func locked<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }

    /// Calls `body` with the state locked until it decides `.done`, sleeping on the condition
    /// variable (the lock released) whenever it asks to.
    @inlinable
    public func wait<Result>(_ body: (inout State) -> Decision<Result>) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            switch body(&state.pointee) {
            case .done(let result):
                return result
            case .sleep:
                pthread_cond_wait(condition, mutex)
            case .sleepUntil(let deadline):
                var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &time)
            }
        }
    }

    /// Wakes every waiter.
    @inlinable
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
