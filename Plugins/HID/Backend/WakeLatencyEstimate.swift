import HapticsSupport
import HIDReports
import Synchronization

/// What the backend knows about how long each controller takes to wake, in nanoseconds: the
/// `wake_latency_ns` it reports.
///
/// Listing a controller never opens its node (an open wakes a USB pad from autosuspend and can
/// make a Bluetooth pad's firmware renegotiate). Before a controller has been woken in this
/// process, the figure is an estimate from documented costs: one hidraw I/O
/// (``documentedIONanoseconds``) for the open and for each step of the family's set-up plan (a
/// report written, a feature report read), plus the spacing the set-up must leave before the first
/// rumble report (one minimum interval per paced set-up write: 30 ms on a Switch Pro). After a wake, it is the
/// measured duration of the wake call (open, set-up and that spacing), the largest of the last
/// four, so one fast wake does not hide a slow one.
///
/// The book is process-wide: a wake latency belongs to the physical controller, and several backend
/// instances (one per `HapticSystem`) see the same controllers.
final class WakeLatencyBook: Sendable {
    /// The shared book.
    static let shared = WakeLatencyBook()

    /// What one hidraw open or set-up I/O is taken to cost before a wake was measured, in
    /// nanoseconds: 1 ms, above the slowest open measured in the VM rig under emulation (about
    /// 0.3 ms) and a USB pad's 1 ms interrupt interval (a write completes within one), so the
    /// estimate errs on the slow side and `prepare()` wakes early enough.
    static let documentedIONanoseconds: UInt64 = 1_000_000

    private let measured = Mutex<[String: [UInt64]]>([:])

    /// The latency to report for `gamepad`: the worst of its last measured wakes, else the estimate.
    func latency(for gamepad: DiscoveredGamepad) -> UInt64 {
        measured.withLock { $0[gamepad.id]?.max() } ?? Self.estimate(gamepad)
    }

    /// Records one measured wake of `gamepad`.
    func record(_ gamepad: DiscoveredGamepad, nanoseconds: UInt64) {
        measured.withLock { book in
            var recent = book[gamepad.id, default: []]
            recent.append(nanoseconds)
            if recent.count > 4 { recent.removeFirst(recent.count - 4) }
            book[gamepad.id] = recent
        }
    }

    /// The estimate before any wake (see the type's discussion).
    static func estimate(_ gamepad: DiscoveredGamepad) -> UInt64 {
        let steps = gamepad.family.setupPlan(for: gamepad.transport, sequence: 0)
        let paced = steps.filter { if case .write(_, true, _) = $0 { true } else { false } }.count
        let io = UInt64(1 + steps.count)
        return documentedIONanoseconds * io + UInt64(paced) * gamepad.minimumInterval
    }
}
