import CHapticsABI
import EvdevEffects
import HapticsPluginKit

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
/// Discovery and hotplug go through libudev (``Discovery``, ``UdevSource``); capabilities come
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
    /// The devices of the last scan and the open ones.
    let registry: DeviceRegistry<DiscoveredInput, ForceFeedbackDevice>

    /// The rule that grants the logged-in user the event nodes of vibrators (game pads' get that
    /// access from systemd's own rules).
    static let udevRule = UdevRule(
        file: "Hardware/udev/70-haptics-vibrators.rules", installedFile: "/etc/udev/rules.d/70-haptics-vibrators.rules",
        grants: "vibrators", trigger: "--subsystem-match=input --action=change",
        afterword: " (game pads' event nodes get that access from systemd's own rules; see Hardware/udev/README.md)")

    /// The process's monitor (see ``UdevSource``): while a HID driver is still probing, the HID
    /// device's "bind" uevent ends the wait; a rescan once a second is only a safety net.
    static let monitor = HotplugMonitor<Discovery.Scan>(
        threadName: "haptics-evdev-hp", timing: .init(pendingMilliseconds: 1000), source: { UdevSource() },
        scan: { () throws(BackendFailure) in try Discovery.scan() }, isPending: { $0.pending })

    /// Wake latencies. Before a device was woken in this process, 1 ms (an open, four ioctls and
    /// one upload, each a system call into the input core; a uinput device's upload is a round trip
    /// to its driver process, well under that when it answers).
    static let wakeLatencies = WakeLatencyBook()
    /// The estimate before any wake, in nanoseconds.
    static let estimatedWakeNanoseconds: UInt64 = 1_000_000

    init(services: HostServices) {
        self.services = services
        registry = DeviceRegistry(backend: "evdev", noun: "device", services: services)
    }

    /// The devices. A scan reads a few dozen sysfs files per input device, and hosts list often
    /// (every `openDevice` resolves its query against a fresh listing), so the process's newest scan
    /// is reused while it holds (``Discovery/current()``: no input or HID uevent since it started).
    /// Permission and the wake latency are evaluated anew each time.
    func devices() throws(BackendFailure) -> [DeviceSpec] {
        try registry.follow(Self.monitor) { ($0.inputs, $0.generation) }
        let scan: Discovery.Scan
        if let current = Discovery.current() {
            registry.apply(current.inputs, generation: current.generation)
            scan = current
        } else {
            scan = try rescan()
        }
        return scan.inputs.map { $0.spec(wakeLatencyNanoseconds: Self.wakeLatencies.latency(for: $0.id, estimate: Self.estimatedWakeNanoseconds)) }
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        var input = registry.device(deviceID)
        if input == nil { input = try rescan().inputs.first { $0.id == deviceID } }
        guard let input else { throw registry.unknown(deviceID) }
        if case .unusable(let reason) = input.strategy {
            throw BackendFailure(code: EOPNOTSUPP, "\(input.id): \(input.facts.eventNode) (\(input.name)) has \(reason)")
        }
        // The node is opened by the first wake; here only the permission is checked.
        try Self.udevRule.checkAccess(id: input.id, node: input.facts.eventNode, name: input.name, noun: "device")
        let device = try ForceFeedbackDevice(input: input, backend: self)
        registry.opened(device, as: input)
        return device
    }

    func destroy() { registry.stopFollowing() }

    /// Scans and applies the scan (see ``HapticsPluginKit/DeviceRegistry/apply(_:generation:)``).
    @discardableResult
    func rescan() throws(BackendFailure) -> Discovery.Scan {
        let scan = try Discovery.scan()
        registry.apply(scan.inputs, generation: scan.generation)
        return scan
    }

    /// The failure for an `open(2)` of `input`'s node that failed with `errno`.
    func openFailure(_ input: DiscoveredInput, errno code: Int32) -> BackendFailure {
        Self.udevRule.openFailure(id: input.id, node: input.facts.eventNode, name: input.name, noun: "device", errno: code)
    }
}

extension DiscoveredInput: FoundDevice {
    var nodePath: String { facts.eventNode }
    /// The input device's sysfs path: a replug makes a new input device, even under the same id.
    var connection: String { facts.inputSyspath }
    var arrival: String { "(\(facts.eventNode), \(name), \(strategy.summary))" }
}
