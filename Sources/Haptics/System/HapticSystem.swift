#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization

/// The entry point of swift-haptics: loads the backend plugins, lists their devices and opens them.
///
/// ```swift
/// let system = HapticSystem()
/// for device in system.devices() { print(device.id, device.name) }
/// let lra = try system.openDevice("recording:lra")
/// ```
///
/// Opening a device already open returns the same ``HapticDevice``, so several generators and
/// engines share one power model per device. Device events from backends (unplug, plug) are
/// routed to the open devices (``HapticDevice/markLost(_:)``) and to ``onDeviceEvent(_:)`` observers,
/// on the configured clock's thread.
///
/// When hapticsd runs (``mode`` is ``Mode/daemon(_:)``), the service owns the devices: the system
/// lists the service's devices, and engines over them play through the service, so every app shares
/// the devices and the user's settings. Without it, the system loads the backends itself.
public final class HapticSystem: Sendable {
    /// How a system is set up.
    public struct Configuration: Sendable {
        /// Where to look for plugins.
        public var searchPath: PluginSearchPath
        /// Configuration for the backends (`recording.output`, `recording.devices`, `gpio.boards`, …);
        /// environment variables `HAPTICS_KEY_NAME` fill in keys not set here.
        public var settings: [String: String]
        /// The clock for the power model's timeouts.
        public var clock: any HapticClock
        /// The power model's timing rules for devices opened here.
        public var powerPolicy: PowerPolicy
        /// Where diagnostics go.
        public var logger: Logger
        /// Whether to play through hapticsd; `settings` may name its bus (`daemon.bus`: session,
        /// system or an address) and this app's id (`daemon.app-id`).
        public var daemon: DaemonUse
        /// Where the profiles of devices that calibrate themselves (``DeviceDescription/selfCalibrates``)
        /// are found: their ``CalibrationProfile/deviceCalibration`` is given back at each open. Nil
        /// uses none (the device runs uncalibrated until calibrated).
        public var profileStore: ProfileStore?

        /// A configuration; by default the standard search path, the system clock, default timings,
        /// hapticsd when it runs, and the standard profile store.
        public init(
            searchPath: PluginSearchPath = .standard(), settings: [String: String] = [:],
            clock: any HapticClock = SystemClock.shared, powerPolicy: PowerPolicy = PowerPolicy(),
            logger: Logger = Logger(label: "haptics"), daemon: DaemonUse = .automatic, profileStore: ProfileStore? = .standard
        ) {
            self.profileStore = profileStore
            self.searchPath = searchPath
            self.settings = settings
            self.clock = clock
            self.powerPolicy = powerPolicy
            self.logger = logger
            self.daemon = daemon
        }
    }

    /// The configuration the system was created with.
    public let configuration: Configuration
    /// What loading the plugins gave: the backends and each failure with its reason (none are
    /// loaded in daemon mode: the service owns the devices).
    public let plugins: PluginLoadReport
    /// Whether this process owns its devices or plays through hapticsd.
    public let mode: Mode
    private let daemon: ServiceLink?
    /// Why hapticsd, required, could not be used (no devices then).
    private let daemonMissing: String?
    private let open = Mutex<[String: WeakDevice]>([:])
    private let observers = Mutex<[@Sendable (BackendEvent) -> Void]>([])

    private struct WeakDevice: Sendable {
        weak var device: HapticDevice?
    }

    /// Connects to hapticsd when it runs and ``Configuration/daemon`` allows; else loads every plugin
    /// on the configured search path.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var use = configuration.daemon
        if use == .automatic, let chosen = DaemonUse.fromEnvironment() { use = chosen }
        var reason = "HAPTICS_DAEMON or the configuration asks for it"
        if use != .never {
            switch ServiceLink.connect(searchPath: configuration.searchPath, settings: configuration.settings, logger: configuration.logger) {
            case .success(let client):
                daemon = client
                daemonMissing = nil
                mode = .daemon(client.info)
                plugins = PluginLoadReport(backends: [], failures: [], searchedDirectories: configuration.searchPath.directories)
                let clock = configuration.clock
                client.onEvent { [weak self] event in
                    clock.schedule(at: clock.now()) { [weak self] in self?.handle(event) }
                }
                return
            case .failure(let unavailable):
                reason = unavailable.reason
            }
        }
        daemon = nil
        mode = .inProcess(reason: reason)
        daemonMissing = use == .required ? reason : nil
        if use == .required {
            configuration.logger.error("hapticsd is required (HAPTICS_DAEMON) but not available: \(reason)")
            plugins = PluginLoadReport(backends: [], failures: [], searchedDirectories: configuration.searchPath.directories)
            return
        }
        let loader = PluginLoader(searchPath: configuration.searchPath, settings: configuration.settings, logger: configuration.logger)
        self.plugins = loader.loadAll()
        // A backend may notify from inside a call the host made with locks held (an unplug found
        // by `submit`): handle events later, on the clock's thread, never on the caller's.
        let clock = configuration.clock
        for backend in plugins.backends {
            backend.onEvent { [weak self] event in
                clock.schedule(at: clock.now()) { [weak self] in self?.handle(event) }
            }
        }
    }

    /// The loaded backends.
    public var backends: [Backend] { plugins.backends }

    /// Every device, once per physical device. A backend that fails to enumerate is logged and
    /// skipped; ``deviceListing()`` gives its error.
    public func devices() -> [DeviceDescription] {
        deviceListing().devices
    }

    /// Every device once per physical device (see ``merged(_:)``), and the error of each backend
    /// that could not list its devices.
    public func deviceListing() -> (devices: [DeviceDescription], failures: [DeviceError]) {
        let listing = everyListing()
        return (Self.merged(listing.devices), listing.failures)
    }

    /// Every listing of every backend, before ``merged(_:)``: a physical device two backends reach
    /// is here twice (a DualSense on USB: its coils through `alsa`, its rumble through `hid`), and
    /// the error of each backend that could not list its devices. What ``devices()`` hides behind
    /// a device's ``DeviceDescription/alternatives`` is here in full (channels, why unavailable).
    public func everyListing() -> (devices: [DeviceDescription], failures: [DeviceError]) {
        if let daemon {
            do { return (try daemon.devices(), []) } catch { return ([], [error]) }
        }
        if let daemonMissing {
            return ([], [.backendFailure(deviceID: nil, backend: "hapticsd", operation: .enumerate, errno: ENOENT, message: "hapticsd is required: \(daemonMissing)")])
        }
        var devices: [DeviceDescription] = []
        var failures: [DeviceError] = []
        for backend in plugins.backends {
            do {
                devices += try backend.devices()
            } catch {
                configuration.logger.warning("\(error)")
                failures.append(error)
            }
        }
        return (devices, failures)
    }

    /// One entry per physical device: listings that share a ``DeviceDescription/physicalID`` (a pad
    /// both the `hid` backend, through hidraw, and the `evdev` backend, through its input node, can
    /// reach) become the one that serves it: an available listing before an unavailable one, then
    /// the higher ``DeviceDescription/preference``, then the backend found first. The others' ids
    /// go into the winner's ``DeviceDescription/alternatives``; it keeps the place of the first.
    public static func merged(_ listings: [DeviceDescription]) -> [DeviceDescription] {
        var result: [DeviceDescription] = []
        var place: [String: Int] = [:]
        for listing in listings {
            guard let physical = listing.physicalID else {
                result.append(listing)
                continue
            }
            guard let index = place[physical] else {
                place[physical] = result.count
                result.append(listing)
                continue
            }
            let kept = result[index]
            let better =
                listing.isAvailable != kept.isAvailable ? listing.isAvailable : listing.preference > kept.preference
            if better {
                var winner = listing
                winner.alternatives = kept.alternatives + [kept.id] + listing.alternatives
                result[index] = winner
            } else {
                result[index].alternatives.append(listing.id)
            }
        }
        return result
    }

    /// The description of the one device `query` names: an exact id (a listing hidden behind
    /// another backend's for the same physical device included), else a unique id prefix or a
    /// unique case-insensitive name substring among ``devices()``.
    public func resolve(_ query: String) throws(DeviceError) -> DeviceDescription {
        let every = everyListing().devices
        let all = Self.merged(every)
        if let exact = all.first(where: { $0.id == query }) ?? every.first(where: { $0.id == query }) { return exact }
        let lowered = query.lowercased()
        let matches = all.filter { $0.id.hasPrefix(query) || $0.name.lowercased().contains(lowered) }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw .notFound(query: query, available: all.map(\.id))
        default: throw .ambiguous(query: query, matches: matches.map(\.id))
        }
    }

    /// Opens the device `query` names (see ``resolve(_:)``), or returns it if it is already open.
    ///
    /// A device that was lost (unplugged) is never handed out again: it is closed, and the device
    /// is opened anew (a replugged pad comes back under the same id), or the open fails.
    public func openDevice(_ query: String) throws(DeviceError) -> HapticDevice {
        let description = try resolve(query)
        if let existing = open.withLock({ $0[description.id]?.device }) {
            guard existing.isLost else { return existing }
            existing.close()
        }
        let actuator: any Actuator
        if let daemon {
            actuator = RemoteActuator(description: description, client: daemon)
        } else {
            guard let backend = plugins.backends.first(where: { $0.name == description.backend }) else {
                throw .notFound(query: query, available: devices().map(\.id))
            }
            actuator = try backend.open(description)
        }
        let device = HapticDevice(
            actuator: actuator, clock: configuration.clock, policy: configuration.powerPolicy,
            logger: configuration.logger)
        if daemon == nil, description.selfCalibrates { restoreCalibration(device) }
        return open.withLock { table in
            if let raced = table[description.id]?.device, !raced.isLost { return raced }
            table[description.id] = WeakDevice(device: device)
            return device
        }
    }

    /// Gives a device that calibrates itself the results its profile stores. A device without them
    /// runs uncalibrated (said once, with the fix); stored results the device refuses are logged,
    /// and the device stays open.
    private func restoreCalibration(_ device: HapticDevice) {
        let id = device.description.id
        guard let store = configuration.profileStore else { return }
        let (entry, problems) = store.lookup(for: device.description)
        for problem in problems { configuration.logger.warning("\(problem)") }
        guard let entry, !entry.profile.deviceCalibration.isEmpty else {
            configuration.logger.notice("\(id): no stored calibration of its own; run `haptic-cal calibrate \(id)` once")
            return
        }
        do throws(DeviceError) {
            try device.restoreCalibration(entry.profile.deviceCalibration)
        } catch {
            configuration.logger.error("\(id): the calibration stored in \(entry.path) was refused: \(error); run `haptic-cal calibrate \(id)` again")
        }
    }

    /// Calls `observer` for every device event from every backend (from any thread; it must not block).
    public func onDeviceEvent(_ observer: @escaping @Sendable (BackendEvent) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    private func handle(_ event: DaemonEvent) {
        switch event {
        case .deviceAdded(let id): handle(BackendEvent.deviceAdded(id: id))
        case .deviceRemoved(let id): handle(BackendEvent.deviceRemoved(id: id))
        case .disconnected:
            // Every device was the service's: each open one is lost, as if unplugged.
            for id in open.withLock({ Array($0.keys) }) { handle(BackendEvent.deviceRemoved(id: id)) }
        }
    }

    private func handle(_ event: BackendEvent) {
        if case .deviceRemoved(let id) = event, let device = open.withLock({ $0[id]?.device }) {
            device.markLost(
                .backendFailure(
                    deviceID: id, backend: device.description.backend, operation: .submit, errno: ENODEV,
                    message: daemon == nil ? "device removed" : "hapticsd lost the device, or left the bus"))
        }
        for observer in observers.withLock({ $0 }) { observer(event) }
    }
}
