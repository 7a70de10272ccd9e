import CGpiodShim
import GPIOLineKit
import CHapticsABI
import GPIOBoards
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport
import StopGuardKit
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

    /// Wake latencies measured at this instance's opens (each open measures one).
    private let wakeLatencies = WakeLatencyBook()

    private struct Shared {
        /// Devices open in this instance.
        var open: [String: WeakDevice] = [:]
    }

    private struct WeakDevice {
        weak var device: GPIODevice?
    }

    init(services: HostServices) throws(BackendFailure) {
        self.services = services
        search = BoardSearch.standard(setting: services.configuration(BoardSearch.settingKey), environment: services.searchEnvironment)
        paths = HardwarePaths(
            sysfsRoot: services.configuration("gpio.sysfs-root") ?? "/sys", chipDirectory: services.configuration("gpio.chip-path") ?? "/dev")
        do throws(ThreadStartError) {
            watchdog = try Watchdog(name: "haptics-gpio-wd") { haptics_stop_guard_prepare_thread() }
        } catch {
            throw BackendFailure(code: error.errno, "gpio: cannot start the safety watchdog: \(error)")
        }
        services.log(HAPTICS_LOG_DEBUG, "gpio: libgpiod v\(gpiod_shim_api_version()) API; sysfs root \(paths.sysfsRoot); chips in \(paths.chipDirectory)")
    }

    /// Every actuator of every valid board file found, with its board, and each board file that
    /// could not be used.
    func actuators() -> (actuators: [(board: BoardFile, config: ActuatorConfig)], failures: [BoardFileError]) {
        let loaded = search.load()
        return (loaded.boards.flatMap { board in board.actuators.map { (board, $0) } }, loaded.failures)
    }

    /// One device per actuator, and one unavailable listing per board file that could not be used
    /// (its error is the reason), so one bad file neither hides the other boards nor goes unseen.
    /// Touches no hardware: the wake latency is the worst measured at this instance's last four
    /// opens, else the documented estimate (``documentedWakeLatency(_:)``).
    func devices() -> [DeviceSpec] {
        let found = actuators()
        let good = found.actuators.map { entry in
            let id = entry.board.deviceID(of: entry.config)
            let latency = wakeLatencies.latency(for: id, estimate: Self.documentedWakeLatency(entry.config))
            return Self.spec(board: entry.board, config: entry.config, wakeLatency: latency)
        }
        return good + found.failures.map(Self.unusableBoard)
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        let found = actuators()
        guard let entry = found.actuators.first(where: { $0.board.deviceID(of: $0.config) == deviceID }) else {
            if let failure = found.failures.first(where: { Self.unusableBoardID($0) == deviceID }) {
                throw BackendFailure(code: EINVAL, "gpio: \(failure)")
            }
            let known = found.actuators.map { $0.board.deviceID(of: $0.config) }
            throw BackendFailure(
                code: ENODEV,
                "gpio: no device '\(deviceID)' in the board files (\(search.locations.map(\.path).joined(separator: ", ")))"
                    + (known.isEmpty ? "; none found: install one (Hardware/gpio/README.md) or set gpio.boards" : "; found: \(known.joined(separator: ", "))"))
        }
        let hardware = try ActuatorHardware(board: entry.board, config: entry.config, paths: paths)
        // An actuator registers once, at its open (not a latency path): wait for a supervisor just started.
        StopGuardWarning.log(to: services, backend: "gpio", waitMilliseconds: 2_000)
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
        wakeLatencies.record(deviceID, nanoseconds: latency)
        shared.withLock { $0.open[deviceID] = WeakDevice(device: device) }
        return device
    }

    /// Stops the watchdog; a device the host left open (the contract says none is) is closed, so
    /// the actuator is left stopped either way.
    func destroy() {
        let leftovers = shared.withLock { shared in shared.open.values.compactMap(\.device) }
        for device in leftovers { device.close() }
        watchdog.shutdown()
    }

    /// What the wake sequence's sysfs and GPIO writes take before the driver IC's own time, in
    /// nanoseconds: the slowest measured in the VM rig (0.38–0.44 ms under qemu TCG; a Raspberry Pi
    /// takes well under that), so the figure errs on the slow side until a real open measures it.
    static let wakeWritesNanoseconds: UInt64 = 500_000

    /// The wake latency reported before the actuator was opened: the writes plus the driver IC's
    /// documented enable-to-ready time, in nanoseconds.
    static func documentedWakeLatency(_ config: ActuatorConfig) -> UInt64 {
        wakeWritesNanoseconds + config.documentedWakeNanoseconds
    }

    /// Times a real wake sequence (enable active, PWM configured at zero output) plus one duty-cycle
    /// write (the path of a frame), three times, and returns the median plus the driver IC's
    /// documented enable-to-ready time, in nanoseconds. Leaves the actuator idle. Runs only when
    /// the host opens the actuator, never to list it.
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

    /// The id under which a board file that could not be used is listed: `gpio:FILE` (its file
    /// name without `.json`), or `gpio:boards` for a problem with a place rather than a file.
    static func unusableBoardID(_ failure: BoardFileError) -> String {
        DeviceSpec.unusableFileID(backend: "gpio", category: "boards", failure)
    }

    /// The unavailable listing of a board file that could not be used.
    static func unusableBoard(_ failure: BoardFileError) -> DeviceSpec {
        DeviceSpec.unusableFile(backend: "gpio", category: "boards", noun: "board file", failure)
    }

    /// What the engine is told about an actuator.
    static func spec(board: BoardFile, config: ActuatorConfig, wakeLatency: UInt64) -> DeviceSpec {
        let kind = config.actuator == .lra ? HAPTICS_ACTUATOR_LRA : HAPTICS_ACTUATOR_ERM
        let channel = ChannelSpec(
            name: "main", actuator: kind, amplitudeSteps: UInt32(config.amplitudeSteps),
            frequencyRange: config.frequencyRange.map { Float($0.lowerBound)...Float($0.upperBound) },
            resonantFrequency: Float(config.limits.resonantFrequency ?? 0), nominalFrequency: Float(config.defaultFrequency))
        let name = config.description ?? "\(board.description ?? board.name): \(config.name)"
        let limits = config.limits
        let envelope = EnvelopeSpec(
            amplitudeOffset: Float(limits.deadZone), ratedLevel: Float(limits.ratedLevel), kickLevel: Float(limits.overdriveLevel),
            kickNanoseconds: limits.overdriveLevel > limits.ratedLevel ? limits.overdriveMaxNanoseconds : 0,
            maxContinuousNanoseconds: limits.maxContinuousNanoseconds, restNanoseconds: limits.restNanoseconds, acceptsLevels: true)
        return DeviceSpec(
            id: board.deviceID(of: config), name: name, actuator: kind, channels: [channel],
            minimumUpdateIntervalNanoseconds: config.updateIntervalNanoseconds, wakeLatencyNanoseconds: wakeLatency, envelope: envelope)
    }
}
