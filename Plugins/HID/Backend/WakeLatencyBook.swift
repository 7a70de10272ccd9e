import HapticsSupport
import HIDReports
import Synchronization

/// What the backend knows about how long each controller takes to wake, in nanoseconds: the
/// `wake_latency_ns` it reports.
///
/// Before a controller has been woken in this process, the figure is built from a timed
/// `hid_open_path` + `hid_close` of its node (the fastest of three, done once, when the controller
/// is first listed) and
/// the controller's set-up: one such open per set-up I/O (each report written, the DualSense's
/// feature read) plus the spacing the set-up must leave before the first rumble report (one
/// minimum interval per paced set-up report: 30 ms on a Switch Pro). After a wake, it is the
/// measured duration of the wake call (open, set-up and that spacing), the largest of the last
/// four, so one fast wake does not hide a slow one.
///
/// The book is process-wide: a wake latency belongs to the physical controller, and several backend
/// instances (one per `HapticSystem`) see the same controllers.
final class WakeLatencyBook: Sendable {
    /// The shared book.
    static let shared = WakeLatencyBook()

    private struct Entry {
        var probeOpen: UInt64?
        var measured: [UInt64] = []
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The latency to report for `gamepad`, probing its node once if nothing is known yet.
    func latency(for gamepad: DiscoveredGamepad) -> UInt64 {
        if let known = entries.withLock({ $0[gamepad.id] }) {
            if let worst = known.measured.max() { return worst }
            if let probe = known.probeOpen { return Self.estimate(gamepad, probeOpen: probe) }
        }
        let probe = Self.probe(gamepad.path)
        entries.withLock { $0[gamepad.id, default: Entry()].probeOpen = probe }
        return Self.estimate(gamepad, probeOpen: probe)
    }

    /// Records one measured wake of `gamepad`.
    func record(_ gamepad: DiscoveredGamepad, nanoseconds: UInt64) {
        entries.withLock { book in
            var entry = book[gamepad.id, default: Entry()]
            entry.measured.append(nanoseconds)
            if entry.measured.count > 4 { entry.measured.removeFirst(entry.measured.count - 4) }
            book[gamepad.id] = entry
        }
    }

    /// The estimate from a probe (see the type's discussion).
    static func estimate(_ gamepad: DiscoveredGamepad, probeOpen: UInt64) -> UInt64 {
        let reports = gamepad.family.setupReports(for: gamepad.transport, sequence: 0)
        let isSwitch = ObjectIdentifier(gamepad.family) == ObjectIdentifier(SwitchPro.self)
        let paced = reports.filter { !(isSwitch && $0.first == SwitchPro.usbCommandReportID) }.count
        let featureReads = ObjectIdentifier(gamepad.family) == ObjectIdentifier(DualSense.self) ? 1 : 0
        let io = UInt64(1 + reports.count + featureReads)
        return probeOpen * io + UInt64(paced) * gamepad.minimumInterval
    }

    /// Times an open and close of `path` three times and keeps the fastest, in nanoseconds: the
    /// fastest is the device's cost, the others include whatever else the machine was doing. When the
    /// node cannot be opened (no permission yet), the time the refusal took, which still measures
    /// the path to the node.
    static func probe(_ path: String) -> UInt64 {
        var fastest = UInt64.max
        for _ in 0..<3 {
            let start = Monotonic.now()
            if case .success(let handle) = HIDHandle.open(path: path) { handle.close() }
            fastest = min(fastest, Monotonic.now() - start)
        }
        return max(fastest, 1_000)
    }
}
