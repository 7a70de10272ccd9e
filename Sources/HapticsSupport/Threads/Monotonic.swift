#if canImport(Glibc)
import Glibc
#endif

/// `CLOCK_MONOTONIC` in nanoseconds: the one clock every time stamp, deadline and spacing rule in
/// swift-haptics is measured on, in the core and in the backends alike.
public enum Monotonic {
    /// Now, in nanoseconds since an arbitrary start.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Sleeps until `deadline` (nanoseconds on `CLOCK_MONOTONIC`), through signals.
    public static func sleep(until deadline: UInt64) {
        var request = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
    }

    /// `seconds` as nanoseconds, rounded, never negative.
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(max(0, (seconds * 1e9).rounded()))
    }
}
