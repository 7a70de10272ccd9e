#if canImport(Glibc)
import Glibc
#endif

/// `CLOCK_MONOTONIC` in nanoseconds: the one clock every time stamp, deadline and spacing rule in
/// swift-haptics is measured on, in the core and in the backends alike.
public enum Monotonic {
    /// Now, in nanoseconds since an arbitrary start. Inlinable, as ``nanoseconds(_:)``: every
    /// trigger reads the clock.
    @inlinable
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

    /// `seconds` as nanoseconds, rounded and saturating: NaN and negative values give 0, values
    /// beyond `UInt64.max` nanoseconds (about 584 years) give `UInt64.max`. Never traps.
    @inlinable
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        let scaled = seconds * 1e9
        guard scaled > 0 else { return 0 }  // also NaN
        // From 2^53 on every Double is whole; past 2^64 nanoseconds it saturates.
        guard scaled < 0x1p63 else { return scaled < 0x1p64 ? UInt64(scaled) : .max }
        // Rounded half away from zero, as `rounded()` does, without its call into libm (x86-64
        // has no rounding instruction before SSE4.1): the conversion truncates exactly below
        // 2^63, and the fraction it leaves is exact.
        let whole = UInt64(scaled)
        return scaled - Double(whole) >= 0.5 ? whole + 1 : whole
    }
}
