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

    /// An instant from seconds since the monotonic epoch; negative values clamp to 0.
    public init(seconds: Double) {
        self.nanoseconds = seconds > 0 ? UInt64((seconds * 1e9).rounded()) : 0
    }

    /// The instant in seconds since the monotonic epoch.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// The current value of `CLOCK_MONOTONIC`.
    public static func monotonicNow() -> HapticInstant {
        HapticInstant(nanoseconds: Monotonic.now())
    }

    /// This instant moved by `seconds` (negative moves back, stopping at 0).
    public func advanced(bySeconds seconds: Double) -> HapticInstant {
        advanced(byNanoseconds: Int64((seconds * 1e9).rounded()))
    }

    /// This instant moved by `nanoseconds` (negative moves back, stopping at 0).
    public func advanced(byNanoseconds nanoseconds: Int64) -> HapticInstant {
        if nanoseconds >= 0 { return HapticInstant(nanoseconds: self.nanoseconds &+ UInt64(nanoseconds)) }
        let back = UInt64(-nanoseconds)
        return HapticInstant(nanoseconds: self.nanoseconds > back ? self.nanoseconds - back : 0)
    }

    /// Nanoseconds from `earlier` to this instant (negative if `earlier` is later).
    public func nanoseconds(since earlier: HapticInstant) -> Int64 {
        Int64(bitPattern: nanoseconds &- earlier.nanoseconds)
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
