import CHapticsABI
import CUdev
import EvdevEffects
import HapticsPluginKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One force-feedback input device found by a scan, with how the backend drives it.
struct DiscoveredInput: Sendable {
    /// What sysfs says.
    var facts: InputDeviceFacts
    /// The device id (``InputDeviceFacts/id``, with `#eventN` appended when two devices share it).
    var id: String
    /// How frames are rendered.
    var strategy: EffectStrategy
    /// What the driver is known to do.
    var traits: DriverTraits

    init(facts: InputDeviceFacts) {
        self.facts = facts
        self.id = facts.id
        self.strategy = EffectStrategy.choose(ff: facts.ff, keys: facts.keys)
        self.traits = DriverTraits.of(driver: facts.parentSyspath == nil ? nil : facts.driver)
    }

    /// The renderer for its frames.
    var renderer: EffectRenderer { EffectRenderer(strategy: strategy, encoding: traits.encoding) }

    /// Whether a user-space program drives it (a uinput device: no parent device): its answer to an
    /// upload is a round trip to that program, which the kernel waits up to 30 s for, so uploads
    /// never run on the host's thread.
    var driverIsUserSpace: Bool { facts.parentSyspath == nil }

    /// The device's name: the kernel's, which names the product (`Sony Interactive Entertainment
    /// Wireless Controller`, `pwm-vibrator`).
    var name: String { facts.name.isEmpty ? facts.eventName : facts.name }

    /// What `evdev` is worth when another backend reaches the same device: the `hid` backend (200)
    /// does more over hidraw (HD rumble frequencies, DualSense modes), so it serves a pad both can open.
    static let preference: Int32 = 100

    /// The description the host sees. Nothing is opened: capabilities come from sysfs, permission
    /// from `faccessat(AT_EACCESS)`.
    func spec(wakeLatencyNanoseconds: UInt64) -> DeviceSpec {
        var unavailable: String?
        if case .unusable(let reason) = strategy {
            unavailable = "\(id): \(facts.eventNode) (\(name)) has \(reason)"
        } else {
            unavailable = EvdevBackend.udevRule.deniedReason(id: id, node: facts.eventNode, name: name)
        }
        var spec = DeviceSpec(
            id: id, name: name, actuator: strategy == .dualRumble ? HAPTICS_ACTUATOR_DUAL_RUMBLE : Self.kind(traits.actuator),
            channels: channels(), minimumUpdateIntervalNanoseconds: UInt64(traits.minimumIntervalMilliseconds) * 1_000_000,
            wakeLatencyNanoseconds: wakeLatencyNanoseconds, physicalID: facts.physicalID, preference: Self.preference,
            unavailableReason: unavailable)
        // `ff_periodic_effect.period` is whole milliseconds: 166.7 Hz and 200 Hz, nothing between.
        if strategy == .periodic { spec.periodStepNanoseconds = 1_000_000 }
        return spec
    }

    /// Typical frequencies of a pad's motors at full speed (as the `hid` backend states them): the
    /// large mass near 55 Hz, the small one near 160 Hz, so sharpness moves energy between them.
    static let strongMotorFrequency: Float = 55
    static let weakMotorFrequency: Float = 160

    /// The channels the strategy drives.
    func channels() -> [ChannelSpec] {
        let steps = traits.amplitudeSteps
        switch strategy {
        case .dualRumble:
            return [
                ChannelSpec(name: "strong", actuator: HAPTICS_ACTUATOR_ERM, amplitudeSteps: steps, nominalFrequency: Self.strongMotorFrequency),
                ChannelSpec(name: "weak", actuator: HAPTICS_ACTUATOR_ERM, amplitudeSteps: steps, nominalFrequency: Self.weakMotorFrequency),
            ]
        case .singleRumble:
            return [ChannelSpec(name: "main", actuator: Self.kind(traits.actuator), amplitudeSteps: steps)]
        case .periodic:
            // The magnitude is 15 bits; the frequency is whatever whole-millisecond period is nearest.
            return [
                ChannelSpec(
                    name: "main", actuator: Self.kind(traits.actuator), amplitudeSteps: min(steps, 32768),
                    frequencyRange: EffectRenderer.periodicRange)
            ]
        case .constant:
            return [ChannelSpec(name: "main", actuator: Self.kind(traits.actuator), amplitudeSteps: min(steps, 32768))]
        case .unusable:
            // Listed (unavailable) so the user sees why; the contract wants one valid channel.
            return [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_UNKNOWN, amplitudeSteps: 2)]
        }
    }

    static func kind(_ actuator: DriverTraits.Actuator) -> haptics_actuator_kind {
        switch actuator {
        case .erm: HAPTICS_ACTUATOR_ERM
        case .lra: HAPTICS_ACTUATOR_LRA
        case .piezo: HAPTICS_ACTUATOR_VOICE_COIL
        case .unknown: HAPTICS_ACTUATOR_UNKNOWN
        }
    }
}

/// Lists input devices with force feedback through libudev.
///
/// libudev reads sysfs, with or without a udev daemon; nothing here depends on the properties udev
/// rules add (`ID_PATH`, `ID_SERIAL`, `ID_INPUT_JOYSTICK`), which a system without udevd (a container,
/// the VM rig) lacks. A scan never opens an event node: the capabilities come from the input device's
/// `capabilities/ff` and `capabilities/key` files.
enum Discovery {
    /// What one scan found.
    struct Scan: Sendable {
        /// The devices, by id.
        var inputs: [DiscoveredInput]
        /// Whether a HID device's driver is still probing: its input device exists but may still
        /// change (hid-sony sets the pad's MAC address, which becomes `uniq`, later in the probe).
        var pending: Bool
        /// Scans are numbered in the order they start, process-wide (see the `hid` backend).
        var generation: UInt64
        /// ``EvdevBackend/monitor`` (its event count) when the scan started.
        var eventsBefore: UInt64
    }

    private static let generations = Atomic<UInt64>(0)

    /// The newest scan made in this process (by any backend instance or the monitor).
    static let latest = Mutex<Scan?>(nil)

    /// The newest scan, if it still holds: no input or HID uevent arrived since it started (the
    /// monitor watches, see ``EvdevBackend/monitor`` (its event count)). A device pending then is still pending: the
    /// end of its driver's probe is the HID device's "bind" uevent, which counts.
    static func current() -> Scan? {
        let monitor = EvdevBackend.monitor
        guard monitor.isWatching.load(ordering: .acquiring), let scan = latest.withLock({ $0 }),
            scan.eventsBefore == monitor.eventCount.load(ordering: .acquiring)
        else { return nil }
        return scan
    }

    /// Scans every `input` device named `event*` whose input device has force feedback.
    static func scan() throws(BackendFailure) -> Scan {
        let generation = generations.add(1, ordering: .relaxed).newValue
        let eventsBefore = EvdevBackend.monitor.eventCount.load(ordering: .acquiring)
        guard let udev = udev_new() else {
            throw BackendFailure(code: ENOMEM, "evdev: udev_new failed (out of memory)")
        }
        defer { udev_unref(udev) }
        guard let enumerate = udev_enumerate_new(udev) else {
            throw BackendFailure(code: ENOMEM, "evdev: udev_enumerate_new failed (out of memory)")
        }
        defer { udev_enumerate_unref(enumerate) }
        udev_enumerate_add_match_subsystem(enumerate, "input")
        udev_enumerate_add_match_sysname(enumerate, "event*")
        let status = udev_enumerate_scan_devices(enumerate)
        guard status >= 0 else {
            throw BackendFailure(code: -status, "evdev: cannot enumerate input devices in /sys: \(String(cString: strerror(-status)))")
        }
        var inputs: [DiscoveredInput] = []
        var pending = false
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            defer { entry = udev_list_entry_get_next(current) }
            guard let syspath = udev_list_entry_get_name(current), let device = udev_device_new_from_syspath(udev, syspath) else { continue }
            defer { udev_device_unref(device) }
            switch read(eventDevice: device) {
            case .found(let facts): inputs.append(DiscoveredInput(facts: facts))
            case .pending: pending = true
            case .skip: continue
            }
        }
        // Two devices with the same key (clones without serial numbers) would share an id: the later
        // ones, by event node, get the node's name appended, which keeps every id unique.
        inputs.sort { $0.facts.eventNode.count != $1.facts.eventNode.count ? $0.facts.eventNode.count < $1.facts.eventNode.count : $0.facts.eventNode < $1.facts.eventNode }
        var seen = Set<String>()
        for index in inputs.indices where !seen.insert(inputs[index].id).inserted {
            inputs[index].id += "#" + inputs[index].facts.eventName
        }
        let scan = Scan(inputs: inputs, pending: pending, generation: generation, eventsBefore: eventsBefore)
        latest.withLock { latest in
            if (latest?.generation ?? 0) < generation { latest = scan }
        }
        return scan
    }

    private enum Reading {
        case found(InputDeviceFacts)
        case pending
        case skip
    }

    /// The facts of one `eventN` device, if its input device has force feedback.
    private static func read(eventDevice device: OpaquePointer) -> Reading {
        guard let input = udev_device_get_parent_with_subsystem_devtype(device, "input", nil),
            let ffText = attribute(input, "capabilities/ff"), let ff = InputBitmap(sysfs: ffText), !ff.isEmpty
        else { return .skip }
        guard let node = udev_device_get_devnode(device).map({ String(cString: $0) }) else { return .skip }
        let parent = udev_device_get_parent(input)
        let hid = udev_device_get_parent_with_subsystem_devtype(input, "hid", nil)
        // The input device appears during the HID driver's probe, which is still filling in what it
        // describes (hid-sony's MAC address) until the HID device's `driver` link appears.
        if let hid, udev_device_get_driver(hid) == nil { return .pending }
        let usb = udev_device_get_parent_with_subsystem_devtype(input, "usb", "usb_device")
        let facts = InputDeviceFacts(
            eventNode: node, inputSyspath: realPath(udev_device_get_syspath(input)) ?? "", name: attribute(input, "name") ?? "",
            phys: attribute(input, "phys") ?? "", uniq: attribute(input, "uniq") ?? "", bus: hex16(attribute(input, "id/bustype")),
            vendor: hex16(attribute(input, "id/vendor")), product: hex16(attribute(input, "id/product")), ff: ff,
            keys: attribute(input, "capabilities/key").flatMap { InputBitmap(sysfs: $0) } ?? InputBitmap(codes: []),
            driver: parent.flatMap { string(udev_device_get_driver($0)) }, parentSyspath: parent.flatMap { realPath(udev_device_get_syspath($0)) },
            hidSyspath: hid.flatMap { realPath(udev_device_get_syspath($0)) },
            usbSerial: usb.flatMap { attribute($0, "serial") } ?? "")
        return .found(facts)
    }

    private static func attribute(_ device: OpaquePointer, _ name: String) -> String? {
        guard let value = udev_device_get_sysattr_value(device, name) else { return nil }
        let text = String(cString: value)
        return text.trimmingSpaces
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// The canonical path (sysfs paths under `/sys/devices` are already canonical; this also
    /// removes any symbolic link libudev kept), the form the `hid` backend states.
    private static func realPath(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer, let resolved = realpath(pointer, nil) else { return pointer.map { String(cString: $0) } }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func hex16(_ text: String?) -> UInt16 {
        text.flatMap { UInt16($0, radix: 16) } ?? 0
    }

    /// Whether the event node at `facts.eventNode` still belongs to the input device that was found:
    /// event numbers are reused, input device numbers are not, so the node's sysfs entry must still
    /// lead to the same input device.
    static func stillPresent(_ facts: InputDeviceFacts) -> Bool {
        guard let resolved = realpath("/sys/class/input/\(facts.eventName)/device", nil) else { return false }
        defer { free(resolved) }
        return String(cString: resolved) == facts.inputSyspath
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and newlines.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !" \t\n\r".unicodeScalars.contains($0) }),
            let last = scalars.lastIndex(where: { !" \t\n\r".unicodeScalars.contains($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}
