import CHapticsABI
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One device a backend's scan found, as the ``DeviceRegistry`` sees it.
public protocol FoundDevice: Sendable {
    /// The id the backend states (`hid:054c:0ce6:usb:…`).
    var id: String { get }
    /// The node a person would look for (`/dev/hidraw3`), for messages.
    var nodePath: String { get }
    /// What tells one connection of the device from the next (the sysfs path of its node's device):
    /// an open device whose connection is gone is lost, even if a replug brought its id back.
    var connection: String { get }
    /// What the log says of it when it arrives: `(/dev/hidraw3, DualSense Wireless Controller)`.
    var arrival: String { get }
}

/// An open device a backend can mark lost: every later call then fails with `ENODEV`.
public protocol LosableDevice: AnyObject, Sendable {
    /// Marks the device gone, with `message`; returns the first such failure.
    @discardableResult func markLost(_ message: String) -> BackendFailure
}

/// What a backend knows of its devices between scans, the same for every backend: the devices of
/// the newest scan by id, the open devices (weakly), and the process-wide monitor subscription.
///
/// Applying a scan reports what appeared and disappeared since the one before (nothing for the
/// first, which establishes what is there) through the host's `notify`, and marks lost every open
/// device whose connection is gone. Scans are numbered: one older than the last applied is ignored
/// (the monitor's thread and a listing may scan at once).
public final class DeviceRegistry<Found: FoundDevice, Device: LosableDevice>: Sendable {
    private struct Opened {
        weak var device: Device?
        let id: String
        let node: String
        let connection: String
    }

    private struct State {
        var known: [String: Found] = [:]
        var scanned = false
        var generation: UInt64 = 0
        var open: [Opened] = []
        var unsubscribe: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let services: HostServices
    private let backend: String
    private let noun: String

    /// A registry for backend `backend` (`hid`, for messages), whose devices are called `noun`
    /// (`controller`, `device`).
    public init(backend: String, noun: String, services: HostServices) {
        self.backend = backend
        self.noun = noun
        self.services = services
    }

    /// The device `id` of the newest scan, if it had one.
    public func device(_ id: String) -> Found? { state.withLock { $0.known[id] } }

    /// The failure for an id no scan found: the id and what is connected instead.
    public func unknown(_ id: String) -> BackendFailure {
        let known = state.withLock { $0.known.keys.sorted() }
        return BackendFailure(
            code: ENODEV,
            "\(backend): no \(noun) '\(id)' is connected"
                + (known.isEmpty ? "; none is (see `haptic-cal list`)" : "; connected: \(known.joined(separator: ", "))"))
    }

    /// Takes `found` (scan number `generation`) as what is connected now, unless a newer scan was
    /// applied already (see the type's discussion).
    public func apply(_ found: [Found], generation: UInt64) {
        state.withLock { state in
            guard generation > state.generation else { return }
            state.generation = generation
            let now = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for entry in state.open where now[entry.id]?.connection != entry.connection {
                entry.device?.markLost("\(entry.id): the \(noun) was unplugged (\(entry.node) disappeared)")
            }
            if state.scanned {
                for (id, gone) in state.known where now[id]?.connection != gone.connection {
                    services.log(HAPTICS_LOG_DEBUG, "\(backend): \(id) removed (\(gone.nodePath))")
                    services.notify(HAPTICS_EVENT_DEVICE_REMOVED, deviceID: id)
                }
                for (id, added) in now where state.known[id]?.connection != added.connection {
                    services.log(HAPTICS_LOG_DEBUG, "\(backend): \(id) added \(added.arrival)")
                    services.notify(HAPTICS_EVENT_DEVICE_ADDED, deviceID: id)
                }
            }
            state.known = now
            state.scanned = true
            state.open.removeAll { $0.device == nil }
        }
    }

    /// Follows `monitor` (once: later calls do nothing), applying each scan it hands over through
    /// `devices`, which gives a scan's devices and number.
    public func follow<Scan>(_ monitor: HotplugMonitor<Scan>, devices: @escaping @Sendable (Scan) -> (found: [Found], generation: UInt64))
        throws(BackendFailure)
    {
        guard state.withLock({ $0.unsubscribe == nil }) else { return }
        let subscription = try monitor.subscribe { [weak self] scan in
            let (found, generation) = devices(scan)
            self?.apply(found, generation: generation)
        }
        let duplicate = state.withLock { state -> Bool in
            guard state.unsubscribe == nil else { return true }
            state.unsubscribe = { monitor.unsubscribe(subscription) }
            return false
        }
        if duplicate { monitor.unsubscribe(subscription) }
    }

    /// Stops following the monitor (the backend instance is destroyed).
    public func stopFollowing() {
        let unsubscribe = state.withLock { state in
            defer { state.unsubscribe = nil }
            return state.unsubscribe
        }
        unsubscribe?()
    }

    /// Remembers an open device, connected as `found` says, so a scan without it marks it lost.
    public func opened(_ device: Device, as found: Found) {
        state.withLock { $0.open.append(Opened(device: device, id: found.id, node: found.nodePath, connection: found.connection)) }
    }

    /// Forgets a closed device.
    public func closed(_ device: Device) {
        state.withLock { $0.open.removeAll { $0.device == nil || $0.device === device } }
    }
}
