import Haptics
import HapticsBus
import Logging

/// One device as hapticsd holds it: what the backend says, and, when it could be opened, the open
/// device and the engine that renders on it with its calibration profile.
final class OwnedDevice {
    var description: DeviceDescription
    let device: HapticDevice?
    let engine: HapticEngine?
    /// Why the device cannot be used (the backend's reason, or the failure to open it).
    let unavailableReason: String?

    init(description: DeviceDescription, device: HapticDevice?, engine: HapticEngine?, unavailableReason: String?) {
        self.description = description
        self.device = device
        self.engine = engine
        self.unavailableReason = unavailableReason
    }

    var id: String { description.id }
    var isUsable: Bool { engine != nil && !(device?.isLost ?? true) }
}

/// The one owner of every device: opens each device the backends list (and every one that is
/// plugged in later), gives each its own ``HapticEngine`` on one shared scheduler clock, and closes
/// them, stopped, when they go or the service stops.
///
/// Confined to the service's main thread: backend events arrive on other threads and are handed
/// over through the ``WakeupQueue``.
final class DeviceOwner {
    let system: HapticSystem
    /// The engines' clock: one scheduler thread for every device.
    let clock: SystemClock
    private(set) var devices: [OwnedDevice] = []
    /// The device `DefaultDevice` names; empty: the first usable device.
    var configuredDefault: String
    private let logger: Logger
    private var policy: HapticPolicy
    /// Called on the main thread when a device was added or removed.
    var onChange: ((_ added: [OwnedDevice], _ removed: [OwnedDevice]) -> Void)?
    /// Called on the main thread when a device's engine stopped by itself (device lost, error).
    var onEngineStopped: ((_ deviceID: String, _ reason: HapticEngine.StoppedReason) -> Void)?
    private let queue: WakeupQueue

    init(system: HapticSystem, defaultDevice: String, policy: HapticPolicy, queue: WakeupQueue, logger: Logger) {
        self.system = system
        self.clock = SystemClock(name: "hapticsd-engine")
        self.configuredDefault = defaultDevice
        self.policy = policy
        self.queue = queue
        self.logger = logger
        let owner = UncheckedMain(self)
        system.onDeviceEvent { event in
            queue.post {
                owner.value.logger.info("backend event: \(event)")
                owner.value.refresh()
            }
        }
    }

    /// Opens every device listed now.
    func start() {
        refresh()
    }

    /// Brings the set of devices in line with what the backends list: opens new ones, drops the
    /// ones that went or were lost, and reports both.
    func refresh() {
        let listing = system.devices()
        let listedIDs = Set(listing.map(\.id))
        var removed: [OwnedDevice] = []
        devices.removeAll { owned in
            let gone = !listedIDs.contains(owned.id) || (owned.device?.isLost ?? false)
            if gone { removed.append(owned) }
            return gone
        }
        for owned in removed { close(owned) }
        var added: [OwnedDevice] = []
        for description in listing where !devices.contains(where: { $0.id == description.id }) {
            let owned = open(description)
            devices.append(owned)
            added.append(owned)
        }
        if !added.isEmpty || !removed.isEmpty { onChange?(added, removed) }
    }

    private func open(_ description: DeviceDescription) -> OwnedDevice {
        if let reason = description.unavailableReason {
            return OwnedDevice(description: description, device: nil, engine: nil, unavailableReason: reason)
        }
        do {
            let device = try system.openDevice(description.id)
            let engine = try HapticEngine(devices: [device], clock: clock, profileStore: .standard, policy: policy, logger: logger)
            engine.isAutoShutdownEnabled = false
            let id = description.id
            let owner = UncheckedMain(self)
            let queue = self.queue
            engine.stoppedHandler = { reason in
                queue.post { owner.value.onEngineStopped?(id, reason) }
            }
            logger.info("owns \(id) (\(description.name))")
            return OwnedDevice(description: device.description, device: device, engine: engine, unavailableReason: nil)
        } catch {
            logger.warning("cannot open \(description.id): \(error)")
            return OwnedDevice(description: description, device: nil, engine: nil, unavailableReason: "\(error)")
        }
    }

    private func close(_ owned: OwnedDevice) {
        owned.engine?.stop()
        owned.device?.close()
        logger.info("released \(owned.id)")
    }

    /// The device `query` names: its exact id, or the default device for an empty string.
    func resolve(_ query: String) throws(BusError) -> OwnedDevice {
        let found = query.isEmpty ? defaultDevice : devices.first { $0.id == query }
        guard let owned = found else {
            throw DaemonError.unknownDevice(query.isEmpty ? "(the default device)" : query, available: devices.map(\.id))
        }
        guard owned.isUsable else {
            throw DaemonError.deviceUnavailable(owned.id, reason: owned.unavailableReason ?? "it was unplugged")
        }
        return owned
    }

    /// The device an empty device argument means: the configured one when it is usable, else the
    /// first usable device that outputs something (the `null` backend's device only when there is
    /// nothing else).
    var defaultDevice: OwnedDevice? {
        if !configuredDefault.isEmpty, let chosen = devices.first(where: { $0.id == configuredDefault && $0.isUsable }) { return chosen }
        return devices.first { $0.isUsable && $0.description.backend != "null" } ?? devices.first { $0.isUsable }
    }

    /// Applies the global policy (on/off, intensity scale) to every engine from its next frame.
    func apply(_ policy: HapticPolicy) {
        self.policy = policy
        for owned in devices { owned.engine?.policy = policy }
    }

    /// Stops every engine and closes every device, leaving each actuator stopped.
    func shutDown() {
        for owned in devices { close(owned) }
        devices.removeAll()
    }
}

/// Carries an object confined to the service's main thread into a job for the ``WakeupQueue``,
/// which runs it on that thread.
struct UncheckedMain<Value: AnyObject>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
