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
public final class DeadlineTimer: Sendable {
    // `descriptor` is immutable and owned (closed once, in deinit).
    private let descriptor: Int32
    /// Without a timerfd: the armed deadline (`.max`: disarmed), waited on with a condition variable.
    private let fallback: Guarded<UInt64>?

    /// A disarmed timer.
    ///
    /// - Parameter timerfd: `false` builds the condition-variable implementation, which is what a
    ///   process without a free descriptor gets (for tests of it, and for comparison).
    public init(timerfd: Bool = true) {
        descriptor = timerfd ? haptics_timerfd_create() : -1
        fallback = descriptor >= 0 ? nil : Guarded(.max)
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Whether the timer is a timerfd (false: the condition-variable fallback).
    public var isTimerfd: Bool { descriptor >= 0 }

    /// Arms the timer for `deadline`, in `CLOCK_MONOTONIC` nanoseconds, replacing the armed one:
    /// `.max` disarms it, a time already past (0 included) makes ``wait()`` return at once.
    public func arm(at deadline: UInt64) {
        if let fallback {
            fallback.locked { $0 = deadline }
            fallback.broadcast()
        } else {
            // Fails only for invalid arguments, which these are not.
            _ = haptics_timerfd_arm(descriptor, deadline)
        }
    }

    /// Sleeps until the armed deadline has come; returns at once if it came since it was armed.
    /// A disarmed timer sleeps until it is armed and that deadline comes.
    public func wait() {
        if let fallback {
            // Re-armed meanwhile, it waits for the new deadline, as a timerfd would.
            fallback.wait { deadline -> Guarded<UInt64>.Decision<Void> in
                if deadline <= Monotonic.now() { return .done(()) }
                return deadline == .max ? .sleep : .sleepUntil(deadline)
            }
        } else {
            _ = haptics_timerfd_wait(descriptor)
        }
    }
}
