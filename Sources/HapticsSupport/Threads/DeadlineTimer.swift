import CHapticsSystem

#if canImport(Glibc)
import Glibc
#endif

/// A deadline that one thread sleeps to and any thread may bring forward without waking it now:
/// a `timerfd` on `CLOCK_MONOTONIC`, armed with absolute times.
///
/// A thread asleep in `pthread_cond_timedwait` can only be given an earlier deadline by waking it,
/// so that it starts a shorter wait; when the new deadline is milliseconds away, that wake costs a
/// context switch now (on a small machine, taken from the thread whose work set the deadline) for
/// nothing. Arming a timerfd is one `timerfd_settime(2)` on the arming thread, and the kernel
/// wakes the sleeper when the deadline comes. A timerfd's high-resolution timer takes no timer
/// slack, so the deadline is kept to the microsecond.
///
/// The owner serialises the deadline with its own lock: the sleeping thread arms its next deadline
/// before it sleeps, other threads arm only a deadline earlier than the one armed, and ``wait()``
/// is called by one thread only, outside the lock. ``wait()`` returns when the armed deadline
/// has come (at once if it came since it was armed); the owner then looks at its state again.
///
/// Without a timerfd (`timerfd_create` failed: no descriptor left) it falls back to a condition
/// variable with the same behaviour, except that arming wakes the sleeper for a moment (to wait
/// again for the new deadline): correct, only less frugal.
public final class DeadlineTimer: @unchecked Sendable {
    // `descriptor` is immutable and owned (closed once, in deinit). The fallback's deadline is read
    // and written only under `mutex`.
    private let descriptor: Int32
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var fallbackDeadline: UInt64 = .max

    /// A disarmed timer.
    ///
    /// - Parameter timerfd: `false` builds the condition-variable implementation, which is what a
    ///   process without a free descriptor gets (for tests of it, and for comparison).
    public init(timerfd: Bool = true) {
        descriptor = timerfd ? haptics_timerfd_create() : -1
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
        if descriptor >= 0 { Glibc.close(descriptor) }
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Whether the timer is a timerfd (false: the condition-variable fallback).
    public var isTimerfd: Bool { descriptor >= 0 }

    /// Arms the timer for `deadline`, in `CLOCK_MONOTONIC` nanoseconds, replacing the armed one:
    /// `.max` disarms it, a time already past (0 included) makes ``wait()`` return at once.
    public func arm(at deadline: UInt64) {
        guard descriptor >= 0 else {
            pthread_mutex_lock(mutex)
            fallbackDeadline = deadline
            pthread_mutex_unlock(mutex)
            pthread_cond_broadcast(condition)
            return
        }
        // Fails only for invalid arguments, which these are not.
        _ = haptics_timerfd_arm(descriptor, deadline)
    }

    /// Sleeps until the armed deadline has come; returns at once if it came since it was armed.
    /// A disarmed timer sleeps until it is armed and that deadline comes.
    public func wait() {
        guard descriptor >= 0 else {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            // Re-armed meanwhile, it waits for the new deadline, as a timerfd would.
            while fallbackDeadline > Monotonic.now() {
                if fallbackDeadline == .max {
                    pthread_cond_wait(condition, mutex)
                } else {
                    var time = timespec(tv_sec: Int(fallbackDeadline / 1_000_000_000), tv_nsec: Int(fallbackDeadline % 1_000_000_000))
                    pthread_cond_timedwait(condition, mutex, &time)
                }
            }
            return
        }
        _ = haptics_timerfd_wait(descriptor)
    }
}
