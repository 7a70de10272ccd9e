import CGpiodShim
import CHapticsABI
import GPIOBoards
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `gpio` backend: LRA and ERM motors on single-board computers, through libgpiod (lines) and
/// sysfs PWM, described by board files (`Hardware/gpio/README.md`). One device per actuator,
/// `gpio:BOARD:ACTUATOR`.
///
/// Settings (through the host, or the environment as `HAPTICS_GPIO_…`):
/// - `gpio.boards`: extra board files and directories, colon-separated (searched after
///   `/etc/haptics/boards.d` and `$XDG_CONFIG_HOME/haptics/boards.d`);
/// - `gpio.sysfs-root`: where sysfs is (default `/sys`); tests point it at a directory tree;
/// - `gpio.chip-path`: the directory GPIO chip names are looked up in (default `/dev`).
///
/// Safety: opening an actuator forces it stopped first (whatever a killed process left); the stop
/// guard (`haptics_stop_guard.h`) stops every open actuator on every fatal signal, at exit and,
/// through its supervisor process, after SIGKILL or the OOM killer; `close` and `destroy` stop too;
/// the ``DriveLimiter`` keeps every drive within the board file's limits.
@_cdecl("haptics_backend_fill_v1")
public func gpioBackendFill(
    _ host: UnsafePointer<haptics_host_v1>, _ table: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int
) -> Int32 {
    fillBackendTable(name: "gpio", host: host, table: table, size: size) { services throws(BackendFailure) in
        try GPIOBackend(services: services)
    }
}

final class GPIOBackend: BackendDriver {
    let services: HostServices
    let search: BoardSearch
    let paths: HardwarePaths
    let watchdog: Watchdog
    private let shared = Mutex(Shared())

    private struct Shared {
        /// Wake latencies measured in this instance, by device id, in nanoseconds.
        var measured: [String: UInt64] = [:]
        /// Devices open in this instance.
        var open: [String: WeakDevice] = [:]
    }

    private struct WeakDevice {
        weak var device: GPIODevice?
    }

    init(services: HostServices) throws(BackendFailure) {
        self.services = services
        var environment: [String: String] = [:]
        for name in ["XDG_CONFIG_HOME", "HOME"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        search = BoardSearch.standard(setting: services.configuration(BoardSearch.settingKey), environment: environment)
        paths = HardwarePaths(
            sysfsRoot: services.configuration("gpio.sysfs-root") ?? "/sys", chipDirectory: services.configuration("gpio.chip-path") ?? "/dev")
        do throws(ThreadStartError) {
            watchdog = try Watchdog()
        } catch {
            throw BackendFailure(code: error.errno, "gpio: cannot start the safety watchdog: \(error)")
        }
        services.log(HAPTICS_LOG_DEBUG, "gpio: libgpiod v\(gpiod_shim_api_version()) API; sysfs root \(paths.sysfsRoot); chips in \(paths.chipDirectory)")
    }

    /// Every actuator of every board file found, with its board.
    func actuators() throws(BackendFailure) -> [(board: BoardFile, config: ActuatorConfig)] {
        let boards: [BoardFile]
        do {
            boards = try search.load()
        } catch {
            throw BackendFailure(code: EINVAL, "gpio: \(error)")
        }
        return boards.flatMap { board in board.actuators.map { (board, $0) } }
    }

    func devices() throws(BackendFailure) -> [DeviceSpec] {
        try actuators().map { entry in
            let id = entry.board.deviceID(of: entry.config)
            return Self.spec(board: entry.board, config: entry.config, wakeLatency: wakeLatency(id: id, board: entry.board, config: entry.config))
        }
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        let all = try actuators()
        guard let entry = all.first(where: { $0.board.deviceID(of: $0.config) == deviceID }) else {
            let known = all.map { $0.board.deviceID(of: $0.config) }
            throw BackendFailure(
                code: ENODEV,
                "gpio: no device '\(deviceID)' in the board files (\(search.locations.map(\.path).joined(separator: ", ")))"
                    + (known.isEmpty ? "; none found: install one (Hardware/gpio/README.md) or set gpio.boards" : "; found: \(known.joined(separator: ", "))"))
        }
        let hardware = try ActuatorHardware(board: entry.board, config: entry.config, paths: paths)
        logStopGuardWarning()
        let latency: UInt64
        do {
            latency = try measureWake(hardware)
        } catch {
            hardware.release()
            throw error
        }
        services.log(HAPTICS_LOG_DEBUG, "\(deviceID): opened; wake latency \(Double(latency) / 1e3) µs")
        let device = GPIODevice(hardware: hardware, services: services, watchdog: watchdog) { [weak self] in
            _ = self?.shared.withLock { $0.open.removeValue(forKey: deviceID) }
        }
        shared.withLock { shared in
            shared.measured[deviceID] = latency
            shared.open[deviceID] = WeakDevice(device: device)
        }
        return device
    }

    /// Logs what the stop guard could not set up (its supervisor missing, refusing, or replaced), once
    /// each. An actuator registers once, at its open (not a latency path), so this waits up to 2 s
    /// for a supervisor just started to answer, or a refusal would go unreported.
    func logStopGuardWarning() {
        var text = [CChar](repeating: 0, count: 1024)
        guard haptics_stop_guard_take_warning(&text, text.count, 2_000) == 1 else { return }
        services.log(HAPTICS_LOG_WARNING, "gpio: " + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Stops the watchdog; a device the host left open (the contract says none is) is closed, so
    /// the actuator is left stopped either way.
    func destroy() {
        let leftovers = shared.withLock { shared in shared.open.values.compactMap(\.device) }
        for device in leftovers { device.close() }
        watchdog.shutdown()
    }

    /// The wake latency to report: measured in this instance if it was, else measured now by
    /// opening the actuator briefly (only when no device of this instance holds it); if the
    /// actuator cannot be opened now, the board's documented hardware time alone.
    func wakeLatency(id: String, board: BoardFile, config: ActuatorConfig) -> UInt64 {
        let (known, busy) = shared.withLock { ($0.measured[id], $0.open[id] != nil) }
        if let known { return known }
        guard !busy else { return config.documentedWakeNanoseconds }
        do {
            let hardware = try ActuatorHardware(board: board, config: config, paths: paths)
            defer { hardware.release() }
            let latency = try measureWake(hardware)
            shared.withLock { $0.measured[id] = latency }
            return latency
        } catch {
            services.log(HAPTICS_LOG_DEBUG, "\(id): wake latency not measured (\(error.message)); reporting the documented \(config.documentedWakeNanoseconds) ns")
            return config.documentedWakeNanoseconds
        }
    }

    /// Times a real wake sequence (enable active, PWM configured at zero output) plus one duty-cycle
    /// write (the path of a frame), three times, and returns the median plus the driver IC's
    /// documented enable-to-ready time, in nanoseconds. Leaves the actuator idle.
    func measureWake(_ hardware: ActuatorHardware) throws(BackendFailure) -> UInt64 {
        let config = hardware.config
        var samples: [UInt64] = []
        for _ in 0..<3 {
            let start = Monotonic.now()
            try hardware.apply(config.awakeOutput(level: 0, currentPeriod: hardware.output.pwm.periodNanoseconds))
            try hardware.rewriteDuty()
            samples.append(Monotonic.now() - start)
            try hardware.apply(config.idleOutput(currentPeriod: hardware.output.pwm.periodNanoseconds))
        }
        return samples.sorted()[samples.count / 2] + config.documentedWakeNanoseconds
    }

    /// What the engine is told about an actuator.
    static func spec(board: BoardFile, config: ActuatorConfig, wakeLatency: UInt64) -> DeviceSpec {
        let kind = config.actuator == .lra ? HAPTICS_ACTUATOR_LRA : HAPTICS_ACTUATOR_ERM
        let channel = ChannelSpec(
            name: "main", actuator: kind, amplitudeSteps: UInt32(config.amplitudeSteps),
            frequencyRange: config.frequencyRange.map { Float($0.lowerBound)...Float($0.upperBound) },
            resonantFrequency: Float(config.limits.resonantFrequency ?? 0), nominalFrequency: Float(config.defaultFrequency))
        let name = config.description ?? "\(board.description ?? board.name): \(config.name)"
        return DeviceSpec(
            id: board.deviceID(of: config), name: name, actuator: kind, channels: [channel],
            minimumUpdateIntervalNanoseconds: config.updateIntervalNanoseconds, wakeLatencyNanoseconds: wakeLatency)
    }
}
