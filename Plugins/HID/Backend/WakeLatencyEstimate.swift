import HIDReports
import HapticsPluginKit

extension DiscoveredGamepad {
    /// What one hidraw open or set-up I/O is taken to cost before a wake was measured, in
    /// nanoseconds: 1 ms, above the slowest open measured in the VM rig under emulation (about
    /// 0.3 ms) and a USB pad's 1 ms interrupt interval (a write completes within one), so the
    /// estimate errs on the slow side and `prepare()` wakes early enough.
    static let documentedIONanoseconds: UInt64 = 1_000_000

    /// The wake latency to report before a wake of this controller was measured, in nanoseconds.
    ///
    /// Listing a controller never opens its node (an open wakes a USB pad from autosuspend and can
    /// make a Bluetooth pad's firmware renegotiate), so this is an estimate from documented costs:
    /// one hidraw I/O (``documentedIONanoseconds``) for the open and for each step of the family's
    /// set-up plan (a report written, a feature report read), plus the spacing the set-up must leave
    /// before the first rumble report (one minimum interval per paced set-up write: 30 ms on a
    /// Switch Pro). After a wake, ``HIDBackend/wakeLatencies`` has the measured duration of the wake
    /// call (open, set-up and that spacing).
    var estimatedWakeLatency: UInt64 {
        let steps = family.setupPlan(for: transport, sequence: 0)
        let paced = steps.filter { if case .write(_, true, _) = $0 { true } else { false } }.count
        let io = UInt64(1 + steps.count)
        return Self.documentedIONanoseconds * io + UInt64(paced) * minimumInterval
    }
}
