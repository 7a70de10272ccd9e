import HapticsSupport

/// A point in time on the system's monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds.
///
/// Every time in swift-haptics is one of these: the power model's deadlines, the engine's
/// ``HapticEngine/currentTime``, the time stamps the recording backend writes. Because it is
/// `CLOCK_MONOTONIC`, an app can line haptics up with audio timestamps from ALSA or PipeWire.
public struct HapticInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the monotonic clock's epoch (boot, on Linux).
    public var nanoseconds: UInt64

    /// An instant from a nanosecond count.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// An instant from seconds since the monotonic epoch. Saturates rather than traps: negative
    /// values and NaN give 0, values past the last representable instant (about 584 years) give it.
    public init(seconds: Double) {
        self.nanoseconds = Monotonic.nanoseconds(seconds)
    }

    /// The instant in seconds since the monotonic epoch.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// The current value of `CLOCK_MONOTONIC`.
    public static func monotonicNow() -> HapticInstant {
        HapticInstant(nanoseconds: Monotonic.now())
    }

    /// This instant moved by `seconds` (negative moves back). Saturates at 0 and at the last
    /// representable instant; NaN leaves it where it is.
    public func advanced(bySeconds seconds: Double) -> HapticInstant {
        if seconds.isNaN { return self }
        if seconds >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(Monotonic.nanoseconds(seconds))
            return HapticInstant(nanoseconds: overflow ? .max : sum)
        }
        let back = Monotonic.nanoseconds(-seconds)
        return HapticInstant(nanoseconds: nanoseconds > back ? nanoseconds - back : 0)
    }

    /// This instant moved by `nanoseconds` (negative moves back). Saturates at 0 and at the last
    /// representable instant.
    public func advanced(byNanoseconds nanoseconds: Int64) -> HapticInstant {
        if nanoseconds >= 0 {
            let (sum, overflow) = self.nanoseconds.addingReportingOverflow(UInt64(nanoseconds))
            return HapticInstant(nanoseconds: overflow ? .max : sum)
        }
        let back = nanoseconds.magnitude
        return HapticInstant(nanoseconds: self.nanoseconds > back ? self.nanoseconds - back : 0)
    }

    /// Nanoseconds from `earlier` to this instant (negative if `earlier` is later), saturating at
    /// `Int64.min` and `Int64.max` for instants more than about 292 years apart.
    public func nanoseconds(since earlier: HapticInstant) -> Int64 {
        if nanoseconds >= earlier.nanoseconds {
            let difference = nanoseconds - earlier.nanoseconds
            return difference <= UInt64(Int64.max) ? Int64(difference) : .max
        }
        let difference = earlier.nanoseconds - nanoseconds
        return difference <= Int64.min.magnitude ? Int64(truncatingIfNeeded: 0 &- difference) : .min
    }

    /// Seconds from `earlier` to this instant (negative if `earlier` is later).
    public func seconds(since earlier: HapticInstant) -> Double {
        Double(nanoseconds(since: earlier)) / 1e9
    }

    public static func < (lhs: HapticInstant, rhs: HapticInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public var description: String {
        let s = nanoseconds / 1_000_000_000, ns = nanoseconds % 1_000_000_000
        let frac = String(ns)
        return "\(s).\(String(repeating: "0", count: 9 - frac.count))\(frac)s"
    }
}
