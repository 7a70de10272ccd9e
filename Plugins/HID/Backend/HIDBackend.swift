import CHapticsABI
import HIDReports
import HapticsPluginKit
import HapticsStopGuard
import StopGuardKit

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
/// the controller's set-up (``ControllerSetup``). One process-wide ``HIDBackend/monitor`` (inotify on
/// `/dev`) rescans on changes and reports `HAPTICS_EVENT_DEVICE_ADDED` / `_REMOVED`; an open device
/// whose node disappears, or whose write fails with ENODEV, fails every later call with `-ENODEV`,
/// which the host reports as device lost. A replugged controller comes back with the same id.
///
/// ## Permissions
///
/// hidraw nodes belong to root (mode 0600) unless a udev rule says otherwise. Opening one without
/// access fails with `-EACCES` and a message naming the node, the rule file
/// `Hardware/udev/70-haptics-gamepads.rules` and how to install it (``HIDBackend/udevRule``).
final class HIDBackend: BackendDriver {
    /// What the host offers.
    let services: HostServices
    /// The controllers of the last scan and the open ones.
    let registry: DeviceRegistry<DiscoveredGamepad, HIDGamepad>
    /// The coils of the Bluetooth DualSenses of the last scan, and the open ones.
    let coilRegistry: DeviceRegistry<CoilListing, DualSenseCoils>
    /// Whether a Bluetooth DualSense's coils are listed (`hid.dualsense-coils`: `on`, the default, or `off`).
    let listsCoils: Bool

    /// The rule that grants the logged-in user the hidraw nodes of game controllers.
    static let udevRule = UdevRule(
        file: "Hardware/udev/70-haptics-gamepads.rules", installedFile: "/etc/udev/rules.d/70-haptics-gamepads.rules",
        grants: "game controllers", trigger: "--subsystem-match=hidraw", afterword: ", then reconnect the controller (see Hardware/udev/README.md)")

    /// The process's monitor: inotify on `/dev` for hidraw nodes; while a controller's driver is
    /// still binding it rescans every 50 ms.
    static let monitor = HotplugMonitor<Discovery.Scan>(
        threadName: "haptics-hid-hp", timing: .init(pendingMilliseconds: 50),
        source: { InotifySource(directory: "/dev", namePrefix: "hidraw") }, scan: { () throws(BackendFailure) in try Discovery.scan() },
        isPending: { $0.pending })

    /// Wake latencies (see ``DiscoveredGamepad/estimatedWakeLatency``).
    static let wakeLatencies = WakeLatencyBook()

    init(services: HostServices) {
        self.services = services
        registry = DeviceRegistry(backend: "hid", noun: "controller", services: services)
        coilRegistry = DeviceRegistry(backend: "hid", noun: "controller's coils", services: services)
        listsCoils = services.configuration("hid.dualsense-coils") != "off"
    }

    /// The coils of the Bluetooth DualSenses among `gamepads` (none when `listed` is false:
    /// `hid.dualsense-coils=off`).
    static func coils(_ gamepads: [DiscoveredGamepad], listed: Bool) -> [CoilListing] {
        guard listed else { return [] }
        return gamepads.filter { $0.family is DualSense.Type && $0.transport == .bluetooth }.map(CoilListing.init)
    }

    /// The coils of the Bluetooth DualSenses among `gamepads`, as this instance lists them.
    func coils(_ gamepads: [DiscoveredGamepad]) -> [CoilListing] { Self.coils(gamepads, listed: listsCoils) }

    func devices() throws(BackendFailure) -> [DeviceSpec] {
        let found = try rescan().gamepads
        try registry.follow(Self.monitor) { ($0.gamepads, $0.generation) }
        let listed = listsCoils
        try coilRegistry.follow(Self.monitor) { (Self.coils($0.gamepads, listed: listed), $0.generation) }
        return found.map { $0.spec(wakeLatencyNanoseconds: Self.wakeLatencies.latency(for: $0.id, estimate: $0.estimatedWakeLatency)) }
            + self.coils(found).map { DualSenseCoils.spec($0.gamepad) }
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        if deviceID.hasSuffix(":coils") {
            var listing = coilRegistry.device(deviceID)
            if listing == nil { listing = coils(try rescan().gamepads).first { $0.id == deviceID } }
            guard let listing else { throw coilRegistry.unknown(deviceID) }
            try Self.udevRule.checkAccess(id: listing.id, node: listing.gamepad.path, name: listing.gamepad.name, noun: "controller")
            let device = try DualSenseCoils(gamepad: listing.gamepad, backend: self)
            coilRegistry.opened(device, as: listing)
            return device
        }
        var gamepad = registry.device(deviceID)
        if gamepad == nil { gamepad = try rescan().gamepads.first { $0.id == deviceID } }
        guard let gamepad else { throw registry.unknown(deviceID) }
        // Opening the node comes with the first wake; here only the permission is checked.
        try Self.udevRule.checkAccess(id: gamepad.id, node: gamepad.path, name: gamepad.name, noun: "controller")
        let device = try HIDGamepad(gamepad: gamepad, backend: self)
        registry.opened(device, as: gamepad)
        return device
    }

    func destroy() {
        registry.stopFollowing()
        coilRegistry.stopFollowing()
    }

    /// Scans and applies the scan (see ``HapticsPluginKit/DeviceRegistry/apply(_:generation:)``).
    @discardableResult
    func rescan() throws(BackendFailure) -> Discovery.Scan {
        let scan = try Discovery.scan()
        registry.apply(scan.gamepads, generation: scan.generation)
        coilRegistry.apply(coils(scan.gamepads), generation: scan.generation)
        return scan
    }

    // MARK: For the devices

    /// Records a measured wake.
    func recordWake(of gamepad: DiscoveredGamepad, nanoseconds: UInt64) {
        Self.wakeLatencies.record(gamepad.id, nanoseconds: nanoseconds)
    }

    /// Logs what the stop guard could not set up, once each. Called on every wake, a latency path:
    /// it never waits for a supervisor still starting (a refusal is logged at a later wake).
    func logStopGuardWarning() {
        StopGuardWarning.log(to: services, backend: "hid", waitMilliseconds: 0)
    }

    /// The failure for an `open(2)`/`hid_open_path` of `gamepad`'s node that failed with `errno`.
    func openFailure(_ gamepad: DiscoveredGamepad, errno code: Int32, detail: String) -> BackendFailure {
        Self.udevRule.openFailure(id: gamepad.id, node: gamepad.path, name: gamepad.name, noun: "controller", errno: code, detail: detail)
    }
}

extension DiscoveredGamepad: FoundDevice {
    var nodePath: String { path }
    /// The node's path: a replugged controller gets a node of its own.
    var connection: String { path }
    var arrival: String { "(\(path), \(name))" }
}
