import CHapticsABI
import EvdevEffects
import HapticsPluginKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The entry point of `libhaptics-evdev.so`: the `evdev` backend, the kernel's force-feedback
/// interface on `/dev/input/event*` (see ``EvdevBackend``).
@_cdecl("haptics_backend_fill_v1")
public func evdevBackendFill(
    _ host: UnsafePointer<haptics_host_v1>, _ table: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int
) -> Int32 {
    fillBackendTable(name: "evdev", host: host, table: table, size: size) { services in
        EvdevBackend(services: services)
    }
}

/// The `evdev` backend: every device whose kernel driver offers force feedback on an event node:
/// phone and handheld vibrators (`pwm-vibrator`, `gpio-vibrator`, `drv260x`, `regulator-haptic`,
/// `da7280`, …), USB Xbox pads (`xpad`), and every pad whose HID driver is loaded
/// (`hid-playstation`, `hid-sony`, `hid-nintendo`, `hid-microsoft`, `hid-steam`), plus user-space
/// drivers behind uinput.
///
/// ## Devices, ids and the one-entry rule
///
/// Discovery and hotplug go through libudev (``Discovery``, ``UdevMonitor``); capabilities come
/// from sysfs (`capabilities/ff`, `capabilities/key`), so listing never opens an event node (an
/// open powers a USB pad up, and the user may not be allowed to). The id is
/// ``EvdevEffects/InputDeviceFacts/id``: `evdev:DRIVER:VVVV:PPPP:BUS:KEY`, from sysfs alone, so
/// it is the same with and without a udev daemon. The physical id is the sysfs path of the HID
/// device above the input device (the one the `hid` backend states for the pad's hidraw node), else
/// the input device's parent; preference 100, below hidraw's 200, so the host lists a pad both
/// reach once and serves it through hidraw when that can be opened.
///
/// A device the user may not open, and a device with no effect the backend can render
/// (``EvdevEffects/EffectStrategy``), are listed unavailable with the reason and the fix.
///
/// ## Rendering, power and safety
///
/// See ``ForceFeedbackDevice``: one effect per device, uploaded at wake (prepared = descriptor open
/// and effect uploaded), updated in place, played and stopped with `EV_FF` writes, bounded by
/// `replay.length` and refreshed while held (``EvdevEffects/ReplayPolicy``). The kernel erases a
/// descriptor's effects when it is closed, including by the death of the process: a crash leaves
/// nothing running, with no help from user space.
final class EvdevBackend: BackendDriver {
    /// What the host offers.
    let services: HostServices

    private struct State {
        var known: [String: DiscoveredInput] = [:]
        var scanned = false
        var generation: UInt64 = 0
        var subscription: UdevMonitor.Subscription?
        var open: [WeakDevice] = []
    }

    private struct WeakDevice {
        weak var device: ForceFeedbackDevice?
        let id: String
    }

    private let state = Mutex(State())

    /// The udev rule file in the source tree.
    static let ruleFile = "Hardware/udev/70-haptics-vibrators.rules"
    /// Where it is installed.
    static let installedRuleFile = "/etc/udev/rules.d/70-haptics-vibrators.rules"

    init(services: HostServices) {
        self.services = services
    }

    /// The devices. A scan reads a few dozen sysfs files per input device, and hosts list often
    /// (every `openDevice` resolves its query against a fresh listing), so the process's newest scan
    /// is reused while it holds (``Discovery/current()``: no input or HID uevent since it started).
    /// Permission and the wake latency are evaluated anew each time.
    func devices() throws(BackendFailure) -> [DeviceSpec] {
        try startMonitor()
        let scan: Discovery.Scan
        if let current = Discovery.current() {
            apply(current)
            scan = current
        } else {
            scan = try rescan()
        }
        return scan.inputs.map { $0.spec(wakeLatencyNanoseconds: WakeLatencies.shared.latency(for: $0)) }
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        var input = state.withLock { $0.known[deviceID] }
        if input == nil { input = try rescan().inputs.first { $0.id == deviceID } }
        guard let input else {
            let known = state.withLock { $0.known.keys.sorted() }
            throw BackendFailure(
                code: ENODEV,
                "evdev: no force-feedback device '\(deviceID)' is connected"
                    + (known.isEmpty ? "; none is (see `haptic-cal list`)" : "; connected: \(known.joined(separator: ", "))"))
        }
        if case .unusable(let reason) = input.strategy {
            throw BackendFailure(code: EOPNOTSUPP, "\(input.id): \(input.facts.eventNode) (\(input.name)) has \(reason)")
        }
        // The node is opened by the first wake; here only the permission is checked, which opens nothing.
        if faccessat(AT_FDCWD, input.facts.eventNode, R_OK | W_OK, AT_EACCESS) != 0 {
            let code = errno
            throw openFailure(input, errno: code)
        }
        let device = try ForceFeedbackDevice(input: input, backend: self)
        state.withLock { $0.open.append(WeakDevice(device: device, id: input.id)) }
        return device
    }

    func destroy() {
        let subscription = state.withLock { state in
            defer { state.subscription = nil }
            return state.subscription
        }
        if let subscription { UdevMonitor.shared.unsubscribe(subscription) }
    }

    // MARK: Scanning and events

    /// Scans, updates what is known and reports the changes.
    @discardableResult
    func rescan() throws(BackendFailure) -> Discovery.Scan {
        let scan = try Discovery.scan()
        apply(scan)
        return scan
    }

    /// Takes `scan` as what is connected now, unless a newer scan was applied already; reports what
    /// appeared and disappeared since the last one (nothing after the first) and marks open devices
    /// whose input device went away lost.
    func apply(_ scan: Discovery.Scan) {
        state.withLock { state in
            guard scan.generation > state.generation else { return }
            state.generation = scan.generation
            let now = Dictionary(scan.inputs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            // An open device is lost when its input device is gone, even if a replug already brought
            // the same id back (a new input device: the descriptor the open device holds is dead).
            for entry in state.open {
                guard let device = entry.device else { continue }
                if now[entry.id]?.facts.inputSyspath != device.input.facts.inputSyspath {
                    device.markLost("\(entry.id): the device was unplugged (\(device.input.facts.eventNode) disappeared)")
                }
            }
            if state.scanned {
                for (id, gone) in state.known where now[id]?.facts.inputSyspath != gone.facts.inputSyspath {
                    services.log(HAPTICS_LOG_DEBUG, "evdev: \(id) removed (\(gone.facts.eventNode))")
                    services.notify(HAPTICS_EVENT_DEVICE_REMOVED, deviceID: id)
                }
                for (id, added) in now where state.known[id]?.facts.inputSyspath != added.facts.inputSyspath {
                    services.log(HAPTICS_LOG_DEBUG, "evdev: \(id) added (\(added.facts.eventNode), \(added.name), \(added.strategy.summary))")
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
        let subscription = try UdevMonitor.shared.subscribe { [weak self] scan in self?.apply(scan) }
        let duplicate = state.withLock { state -> Bool in
            guard state.subscription == nil else { return true }
            state.subscription = subscription
            return false
        }
        if duplicate { UdevMonitor.shared.unsubscribe(subscription) }
    }

    // MARK: For the devices

    /// Forgets a closed device.
    func closed(_ device: ForceFeedbackDevice) {
        state.withLock { $0.open.removeAll { $0.device == nil || $0.device === device } }
    }

    /// The failure for an `open(2)` of `input`'s node that failed with `errno`.
    func openFailure(_ input: DiscoveredInput, errno code: Int32) -> BackendFailure {
        let detail = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM:
            return BackendFailure(code: EACCES, Self.permissionMessage(id: input.id, path: input.facts.eventNode, name: input.name))
        case ENOENT, ENODEV, ENXIO:
            return BackendFailure(code: ENODEV, "\(input.id): \(input.facts.eventNode) is gone (the device was unplugged): \(detail)")
        case EBUSY:
            return BackendFailure(code: EBUSY, "\(input.id): \(input.facts.eventNode) is busy: \(detail)")
        default:
            return BackendFailure(code: EIO, "\(input.id): cannot open \(input.facts.eventNode): \(detail)")
        }
    }

    /// The message for an event node the user may not open: the node, the rule and the fix.
    static func permissionMessage(id: String, path: String, name: String) -> String {
        "\(id): permission denied opening \(path) (\(name)). "
            + "Install the udev rule that gives the logged-in user access to vibrators: "
            + "sudo install -m 0644 \(ruleFile) \(installedRuleFile) && sudo udevadm control --reload-rules "
            + "&& sudo udevadm trigger --subsystem-match=input --action=change "
            + "(game pads' event nodes get that access from systemd's own rules; see Hardware/udev/README.md)"
    }
}

/// What the backend knows about how long each device takes to wake, in nanoseconds.
///
/// Listing never opens a node, so before a device was woken in this process the figure is an
/// estimate: 1 ms (an open, four ioctls and one upload, each a system call into the input core; a
/// uinput device's upload is a round trip to its driver process, well under that when it answers).
/// After a wake, the largest of its last four measured wakes.
final class WakeLatencies: Sendable {
    /// The shared book (a wake latency belongs to the device, whichever instance opened it).
    static let shared = WakeLatencies()

    /// The estimate before any wake, in nanoseconds.
    static let estimateNanoseconds: UInt64 = 1_000_000

    private let measured = Mutex<[String: [UInt64]]>([:])

    /// The latency to report for `input`.
    func latency(for input: DiscoveredInput) -> UInt64 {
        measured.withLock { $0[input.id]?.max() } ?? Self.estimateNanoseconds
    }

    /// Records one measured wake.
    func record(_ input: DiscoveredInput, nanoseconds: UInt64) {
        measured.withLock { book in
            var recent = book[input.id, default: []]
            recent.append(nanoseconds)
            if recent.count > 4 { recent.removeFirst(recent.count - 4) }
            book[input.id] = recent
        }
    }
}
