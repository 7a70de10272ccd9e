import CHapticsABI
import HIDReports
import HapticsPluginKit
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One supported controller found on a hidraw node.
struct DiscoveredGamepad: Sendable {
    /// The device id: `hid:vvvv:pppp:TRANSPORT:SERIAL` (see ``HIDBackend``).
    var id: String
    /// The hidraw node, `/dev/hidrawN`.
    var path: String
    /// USB vendor id.
    var vendorID: UInt16
    /// USB product id.
    var productID: UInt16
    /// How the controller is connected.
    var transport: HIDTransport
    /// The family that encodes its reports.
    var family: any ControllerFamily.Type
    /// Its model entry (name, transports).
    var model: ControllerModel
    /// `HID_UNIQ` and `HID_PHYS` when it was found.
    var uniq: String
    var phys: String
    /// The node's identity when it was found (see ``Discovery/stillPresent(_:)``).
    var node: NodeIdentity?
    /// The sysfs path of the HID device (see ``HidrawSysfs/deviceDirectory(path:)``).
    var physicalID: String?

    /// `DualShock 4 (CUH-ZCT2) (USB)`.
    var name: String { "\(model.name) (\(transport == .usb ? "USB" : "Bluetooth"))" }

    /// The shortest interval between two writes, in nanoseconds.
    var minimumInterval: UInt64 { Monotonic.nanoseconds(family.minimumWriteInterval(for: transport)) }

    /// What hidraw offers over the kernel's force-feedback interface (HD rumble frequencies,
    /// trigger motors, DualSense vibration modes): the `hid` backend serves a pad both can reach.
    static let preference: Int32 = 200

    /// The description the host sees. Whether the user may open the node is checked with
    /// `access(2)`, which opens nothing: a node the user may not open is listed unavailable, with
    /// the udev rule that fixes it.
    func spec(wakeLatencyNanoseconds: UInt64) -> DeviceSpec {
        var spec = DeviceSpec(
            id: id, name: name, actuator: HAPTICS_ACTUATOR_DUAL_RUMBLE,
            channels: family.channels.map(Self.channelSpec),
            minimumUpdateIntervalNanoseconds: minimumInterval, wakeLatencyNanoseconds: wakeLatencyNanoseconds,
            physicalID: physicalID, preference: Self.preference,
            unavailableReason: HIDBackend.udevRule.deniedReason(id: id, node: path, name: name))
        spec.adaptiveTriggers = HIDGamepad.hasAdaptiveTriggers(self)
        return spec
    }

    /// Typical frequencies of a gamepad's grip motors at full speed, in Hz: a large eccentric mass
    /// spins at roughly 3,300 rpm (55 Hz), the small one near 9,600 rpm (160 Hz). The renderer uses
    /// them to tell the low-frequency motor from the high-frequency one; calibration replaces them.
    static let strongMotorFrequency: Float = 55
    static let weakMotorFrequency: Float = 160

    /// A family channel as the contract describes it.
    ///
    /// - Grip motors: ERMs with the family's amplitude resolution (256 steps for Sony's bytes, 101 for
    ///   Xbox's 0–100) and the typical frequency above.
    /// - Trigger motors (Xbox): `HAPTICS_ACTUATOR_TRIGGER`, 101 steps.
    /// - Switch HD rumble: LRAs with real frequency control over 41–1253 Hz (the low band covers
    ///   41–626 Hz, the high band 82–1253 Hz; the encoder picks the band), resonant at the band's
    ///   default tone (160 Hz left, 320 Hz right), so sharpness becomes frequency.
    static func channelSpec(_ channel: RumbleChannel) -> ChannelSpec {
        let steps = UInt32(channel.amplitudeSteps)
        switch channel.kind {
        case .gripMotor:
            let nominal = channel.name == "weak" ? weakMotorFrequency : strongMotorFrequency
            return ChannelSpec(name: channel.name, actuator: HAPTICS_ACTUATOR_ERM, amplitudeSteps: steps, nominalFrequency: nominal)
        case .triggerMotor:
            return ChannelSpec(name: channel.name, actuator: HAPTICS_ACTUATOR_TRIGGER, amplitudeSteps: steps)
        case .linearResonantActuator:
            let tone = Float(channel.defaultFrequency ?? 0)
            return ChannelSpec(
                name: channel.name, actuator: HAPTICS_ACTUATOR_LRA, amplitudeSteps: steps,
                frequencyRange: channel.frequencyRange.map { Float($0.lowerBound)...Float($0.upperBound) },
                resonantFrequency: tone, nominalFrequency: tone)
        }
    }

    /// `hid:vvvv:pppp:TRANSPORT:KEY`, where KEY is the serial number, else `HID_PHYS`, else the node
    /// name; characters outside printable ASCII become `_`, and the id is cut to fit the contract's
    /// 127 bytes.
    static func makeID(vendorID: UInt16, productID: UInt16, transport: HIDTransport, serial: String, phys: String, node: String) -> String {
        let key = !serial.isEmpty ? serial : !phys.isEmpty ? phys : node
        let clean = String(String.UnicodeScalarView(key.unicodeScalars.map { (0x21...0x7E).contains($0.value) ? $0 : "_" }))
        let id = "hid:\(hex4(vendorID)):\(hex4(productID)):\(transport.rawValue):\(clean)"
        return String(decoding: id.utf8.prefix(Int(HAPTICS_ID_SIZE) - 1), as: UTF8.self)
    }

    /// Four lower-case hex digits.
    static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Finds the supported controllers among the hidraw nodes.
enum Discovery {
    /// What one scan found.
    struct Scan: Sendable {
        /// The supported controllers ready to use, by id.
        var gamepads: [DiscoveredGamepad]
        /// Whether a supported controller's node exists but its driver is still binding: scan again
        /// shortly, its id is not final yet.
        var pending: Bool
        /// Scans are numbered in the order they start, process-wide, so a backend instance never
        /// applies an older scan after a newer one (the hotplug monitor's scan and a host's
        /// `enumerate` may overlap).
        var generation: UInt64
    }

    private static let generations = Atomic<UInt64>(0)

    /// Lists the hidraw nodes in sysfs and keeps those of supported controllers whose driver has bound.
    ///
    /// Everything comes from `/sys/class/hidraw/hidrawN/device/uevent` (`HID_ID`: bus, vendor and
    /// product; `HID_UNIQ`: the serial; `HID_PHYS`), which is all `hid_enumerate` would give: on
    /// hidraw its serial number is `HID_UNIQ`, and its bus type says "unknown" for devices without a
    /// `usb_device` parent (uhid-based ones), so the kernel's bus decided anyway. Not calling
    /// `hid_enumerate` also avoids a crash in Debian 12's hidapi 0.13.1: a controller that vanishes
    /// while it enumerates gives it a NULL uevent, which it passes to `strlen` (fixed upstream in
    /// hidapi 0.14, PR #580). Here a node that vanishes between two reads is simply skipped.
    static func scan() throws(BackendFailure) -> Scan {
        let generation = generations.add(1, ordering: .relaxed).newValue
        var gamepads: [DiscoveredGamepad] = []
        var pending = false
        for name in directoryEntries(atPath: HidrawSysfs.classDirectory) where name.hasPrefix("hidraw") {
            let path = "/dev/" + name
            guard let uevent = HidrawSysfs.uevent(path: path),  // gone meanwhile, or not a HID device
                let vendor = uevent.vendorID.flatMap({ UInt16(exactly: $0) }), let product = uevent.productID.flatMap({ UInt16(exactly: $0) }),
                ControllerTable.family(vendor: vendor, product: product) != nil,
                let transport = uevent.transport,
                let match = ControllerTable.match(vendor: vendor, product: product, transport: transport)
            else { continue }
            guard HidrawSysfs.isBound(path: path) else {
                pending = true
                continue
            }
            let id = DiscoveredGamepad.makeID(
                vendorID: vendor, productID: product, transport: transport, serial: uevent.uniq, phys: uevent.phys, node: name)
            gamepads.append(
                DiscoveredGamepad(
                    id: id, path: path, vendorID: vendor, productID: product, transport: transport,
                    family: match.family, model: match.model, uniq: uevent.uniq, phys: uevent.phys,
                    node: NodeIdentity(path: path), physicalID: HidrawSysfs.deviceDirectory(path: path)))
        }
        // Two controllers with the same serial on the same transport (clones) would share an id:
        // the later ones (by node) get the node name appended, which keeps every id unique.
        gamepads.sort { $0.path.count != $1.path.count ? $0.path.count < $1.path.count : $0.path < $1.path }
        var seen = Set<String>()
        for index in gamepads.indices where !seen.insert(gamepads[index].id).inserted {
            gamepads[index].id += "#" + HidrawSysfs.nodeName(path: gamepads[index].path)
        }
        return Scan(gamepads: gamepads, pending: pending, generation: generation)
    }

    /// Whether the node at `gamepad.path` still belongs to that controller: the same file (device
    /// and inode numbers) as when it was found. hidraw numbers are reused, so after an unplug and a
    /// replug of another device the old path may name a different one; devtmpfs gives the new node
    /// a new inode. One `stat(2)`, cheap enough for every wake.
    static func stillPresent(_ gamepad: DiscoveredGamepad) -> Bool {
        guard let now = NodeIdentity(path: gamepad.path) else { return false }
        return now == gamepad.node
    }
}
