import CHapticsABI
import HIDReports
import HapticsPluginKit
import HapticsStopGuard
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The entry point of `libhaptics-hid.so`: the `hid` backend, game-controller rumble over hidapi's
/// hidraw backend (see ``HIDBackend``).
@_cdecl("haptics_backend_fill_v1")
public func hidBackendFill(
    _ host: UnsafePointer<haptics_host_v1>, _ table: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int
) -> Int32 {
    fillBackendTable(name: "hid", host: host, table: table, size: size) { services in
        HIDBackend(services: services)
    }
}

/// The `hid` backend: rumble on DualShock 4, DualSense, Xbox One/Series (Bluetooth) and Switch Pro
/// controllers through `/dev/hidraw*`, with hidapi's hidraw backend (the only place that links it).
///
/// ## Devices and ids
///
/// Every hidraw node whose vendor/product id and transport appear in `HIDReports.ControllerTable`
/// is listed once its kernel driver has finished binding. Its id is
/// `hid:vvvv:pppp:TRANSPORT:KEY`, e.g. `hid:054c:0ce6:bluetooth:a4:ae:12:34:56:78`:
/// - `vvvv:pppp`: vendor and product id, four lower-case hex digits each;
/// - `TRANSPORT`: `usb` or `bluetooth`. The same pad on a cable and paired over Bluetooth at once
///   shows up twice, with different reports, so the transport is part of the id;
/// - `KEY`: hidapi's serial number, which on hidraw is the kernel's `HID_UNIQ` (a Bluetooth
///   device's address; hid-playstation and hid-sony also put a USB pad's MAC address there), so it
///   survives replugs, other ports and reboots. When it is empty (a USB pad under hid-generic), the
///   kernel's `HID_PHYS` (the USB port path, `usb-0000:00:14.0-2/input3`) is used: stable while the
///   pad stays on the same port. Two controllers with the same key get `#hidrawN` appended to the
///   later one's id.
///
/// The transport is hidapi's bus type; when hidapi says "unknown" (it sets USB only for nodes with a
/// `usb_device` parent in sysfs, which uhid-based devices never have) the kernel's `HID_ID` bus
/// field decides (`0003` USB, `0005` Bluetooth).
///
/// Each device has the family's channels (`strong`, `weak`, and `left-trigger`, `right-trigger` on
/// Xbox pads; LRAs with frequency control on a Switch Pro), its amplitude resolution, the family's
/// minimum write interval for that transport as `min_update_interval_ns`, and a measured wake
/// latency (``WakeLatencyBook``).
///
/// ## Threads, power, hotplug
///
/// One writer thread per open device (``HIDGamepad``), coalescing to the newest state with the
/// family's spacing and refresh (``WriteSchedule``). Idle closes the node; `wake` opens it and runs
/// the controller's set-up (``ControllerSetup``). One process-wide ``HotplugMonitor`` (inotify on
/// `/dev`) rescans on changes and reports `HAPTICS_EVENT_DEVICE_ADDED` / `_REMOVED`; an open device
/// whose node disappears, or whose write fails with ENODEV, fails every later call with `-ENODEV`,
/// which the host reports as device lost. A replugged controller comes back with the same id.
///
/// ## Permissions
///
/// hidraw nodes belong to root (mode 0600) unless a udev rule says otherwise. Opening one without
/// access fails with `-EACCES` and a message naming the node, the rule file
/// `Hardware/udev/70-haptics-gamepads.rules` and how to install it (``HIDBackend/permissionMessage``).
final class HIDBackend: BackendDriver {
    /// What the host offers.
    let services: HostServices

    private struct State {
        /// The controllers of the last scan, by id.
        var known: [String: DiscoveredGamepad] = [:]
        /// Whether a scan happened (the first one establishes what is there, without events).
        var scanned = false
        /// The generation of the last scan applied.
        var generation: UInt64 = 0
        var subscription: HotplugMonitor.Subscription?
        var open: [WeakGamepad] = []
    }

    private struct WeakGamepad {
        weak var device: HIDGamepad?
        let id: String
    }

    private let state = Mutex(State())

    /// The udev rule file in the source tree.
    static let ruleFile = "Hardware/udev/70-haptics-gamepads.rules"
    /// Where the rule file is installed.
    static let installedRuleFile = "/etc/udev/rules.d/70-haptics-gamepads.rules"

    init(services: HostServices) {
        self.services = services
    }

    func devices() throws(BackendFailure) -> [DeviceSpec] {
        let found = try rescan().gamepads
        try startMonitor()
        return found.map { $0.spec(wakeLatencyNanoseconds: WakeLatencyBook.shared.latency(for: $0)) }
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        var gamepad = state.withLock { $0.known[deviceID] }
        if gamepad == nil { gamepad = try rescan().gamepads.first { $0.id == deviceID } }
        guard let gamepad else {
            let known = state.withLock { $0.known.keys.sorted() }
            throw BackendFailure(
                code: ENODEV,
                "hid: no controller '\(deviceID)' is connected"
                    + (known.isEmpty ? "; none is (see `haptic-cal list`)" : "; connected: \(known.joined(separator: ", "))"))
        }
        // Opening the node comes with the first wake; here only the permission is checked, with
        // the effective ids, which opens nothing.
        if faccessat(AT_FDCWD, gamepad.path, R_OK | W_OK, AT_EACCESS) != 0 {
            let code = errno
            throw openFailure(gamepad, errno: code, detail: String(cString: strerror(code)))
        }
        let device = try HIDGamepad(gamepad: gamepad, backend: self)
        state.withLock { $0.open.append(WeakGamepad(device: device, id: gamepad.id)) }
        return device
    }

    func destroy() {
        let subscription = state.withLock { state in
            defer { state.subscription = nil }
            return state.subscription
        }
        if let subscription { HotplugMonitor.shared.unsubscribe(subscription) }
    }

    // MARK: Scanning and events

    /// Scans, updates what is known and reports the changes (see ``apply(_:)``).
    @discardableResult
    func rescan() throws(BackendFailure) -> Discovery.Scan {
        let scan = try Discovery.scan()
        apply(scan)
        return scan
    }

    /// Takes `scan` as what is connected now, unless a newer scan was applied already, and reports
    /// what appeared and disappeared since the last one (nothing after the first). Devices still
    /// open under a vanished id are marked lost.
    func apply(_ scan: Discovery.Scan) {
        state.withLock { state in
            guard scan.generation > state.generation else { return }
            state.generation = scan.generation
            let now = Dictionary(scan.gamepads.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            if state.scanned {
                for (id, gone) in state.known where now[id] == nil {
                    for entry in state.open where entry.id == id {
                        entry.device?.markLost("\(id): the controller was unplugged (\(gone.path) disappeared)")
                    }
                    services.log(HAPTICS_LOG_DEBUG, "hid: \(id) removed (\(gone.path))")
                    services.notify(HAPTICS_EVENT_DEVICE_REMOVED, deviceID: id)
                }
                for (id, added) in now where state.known[id] == nil {
                    services.log(HAPTICS_LOG_DEBUG, "hid: \(id) added (\(added.path), \(added.name))")
                    services.notify(HAPTICS_EVENT_DEVICE_ADDED, deviceID: id)
                }
            }
            state.known = now
            state.scanned = true
            state.open.removeAll { $0.device == nil }
        }
    }

    private func startMonitor() throws(BackendFailure) {
        guard state.withLock({ $0.subscription == nil }) else { return }
        let subscription = try HotplugMonitor.shared.subscribe { [weak self] scan in self?.apply(scan) }
        let duplicate = state.withLock { state -> Bool in
            guard state.subscription == nil else { return true }
            state.subscription = subscription
            return false
        }
        if duplicate { HotplugMonitor.shared.unsubscribe(subscription) }
    }

    // MARK: For the devices

    /// Records a measured wake.
    func recordWake(of gamepad: DiscoveredGamepad, nanoseconds: UInt64) {
        WakeLatencyBook.shared.record(gamepad, nanoseconds: nanoseconds)
    }

    /// Logs what the stop guard could not set up (its supervisor missing, refusing, or replaced), once
    /// each. Called on every wake, a latency path: it never waits for a supervisor still starting
    /// (a refusal is logged at a later wake).
    func logStopGuardWarning() {
        var text = [CChar](repeating: 0, count: 1024)
        guard haptics_stop_guard_take_warning(&text, text.count, 0) == 1 else { return }
        services.log(HAPTICS_LOG_WARNING, "hid: " + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Forgets a closed device.
    func closed(_ device: HIDGamepad) {
        state.withLock { $0.open.removeAll { $0.device == nil || $0.device === device } }
    }

    /// The failure for an `open(2)`/`hid_open_path` of `gamepad`'s node that failed with `errno`.
    func openFailure(_ gamepad: DiscoveredGamepad, errno code: Int32, detail: String) -> BackendFailure {
        switch code {
        case EACCES, EPERM:
            return BackendFailure(code: EACCES, Self.permissionMessage(id: gamepad.id, path: gamepad.path, name: gamepad.name))
        case ENOENT, ENODEV, ENXIO:
            return BackendFailure(code: ENODEV, "\(gamepad.id): \(gamepad.path) is gone (the controller was unplugged): \(detail)")
        case EBUSY:
            return BackendFailure(code: EBUSY, "\(gamepad.id): \(gamepad.path) is busy: \(detail)")
        default:
            return BackendFailure(code: EIO, "\(gamepad.id): cannot open \(gamepad.path): \(detail)")
        }
    }

    /// The message for a hidraw node the user may not open: the node, the rule file and the fix.
    static func permissionMessage(id: String, path: String, name: String) -> String {
        "\(id): permission denied opening \(path) (\(name)). "
            + "Install the udev rule that gives the logged-in user access to game controllers: "
            + "sudo install -m 0644 \(ruleFile) \(installedRuleFile) && sudo udevadm control --reload-rules "
            + "&& sudo udevadm trigger --subsystem-match=hidraw, then reconnect the controller "
            + "(see Hardware/udev/README.md)"
    }
}
