import CHapticsABI
import DRV260x
import CGpiodShim
import GPIOBoards
import GPIOLineKit
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport
import StopGuardKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `i2c` backend: haptic driver ICs on I²C (TI's DRV2604/DRV2605 family, the DRV2605L breakouts
/// makers wire to a Raspberry Pi), through i2c-dev and no other library. Devices come from the
/// board files' actuators of topology `i2c` (`Hardware/i2c/README.md`), one per chip:
/// `i2c:BOARD:ACTUATOR`.
///
/// Settings (through the host, or the environment as `HAPTICS_I2C_…`):
/// - `i2c.boards`: extra board files and directories, colon-separated (searched after
///   `/etc/haptics/boards.d` and `$XDG_CONFIG_HOME/haptics/boards.d`);
/// - `i2c.sysfs-root`: where sysfs is (default `/sys`), to see whether a kernel driver owns a chip;
/// - `i2c.chip-path`: the directory GPIO chip names (of EN lines) are looked up in (default `/dev`).
///
/// Listing reads each chip's STATUS (its device id) and writes nothing. A chip a kernel driver owns
/// (`drv260x-haptics` bound) is listed unavailable and left to the evdev backend. Opening writes
/// the setup (``DRV260xPlan/setup(calibration:)``) and leaves the chip in standby; the stop guard
/// (`haptics_stop_guard.h`) writes RTP zero and standby at every kind of process end.
@_cdecl("haptics_backend_fill_v1")
public func i2cBackendFill(
    _ host: UnsafePointer<haptics_host_v1>, _ table: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int
) -> Int32 {
    fillBackendTable(name: "i2c", host: host, table: table, size: size) { services throws(BackendFailure) in
        try I2CBackend(services: services)
    }
}

final class I2CBackend: BackendDriver {
    let services: HostServices
    let search: BoardSearch
    let sysfsRoot: String
    let paths: HardwarePaths
    let watchdog: Watchdog
    private let open = Mutex([String: WeakDevice]())

    private struct WeakDevice {
        weak var device: I2CDevice?
    }

    init(services: HostServices) throws(BackendFailure) {
        self.services = services
        search = BoardSearch.standard(
            setting: services.configuration(BoardSearch.i2cSettingKey), key: BoardSearch.i2cSettingKey, environment: services.searchEnvironment)
        sysfsRoot = services.configuration("i2c.sysfs-root") ?? "/sys"
        paths = HardwarePaths(sysfsRoot: sysfsRoot, chipDirectory: services.configuration("i2c.chip-path") ?? "/dev")
        do throws(ThreadStartError) {
            watchdog = try Watchdog(name: "haptics-i2c-wd") { haptics_stop_guard_prepare_thread() }
        } catch {
            throw BackendFailure(code: error.errno, "i2c: cannot start the safety watchdog: \(error)")
        }
    }

    /// Every I²C actuator of every valid board file, with its board. (Board files that cannot be
    /// used are listed by the `gpio` backend, which reads the same files.)
    func actuators() -> [(board: BoardFile, config: I2CActuatorConfig)] {
        search.load().boards.flatMap { board in board.i2cActuators.map { (board, $0) } }
    }

    func devices() -> [DeviceSpec] {
        let opened = open.withLock { $0.filter { $0.value.device != nil }.keys }
        return actuators().map { entry in
            let id = entry.board.deviceID(of: entry.config)
            // An open chip is not probed: its STATUS flags are the open device's to read.
            let reason = opened.contains(id) ? nil : unavailableReason(entry.config)
            return Self.spec(id: id, board: entry.board, config: entry.config, unavailableReason: reason)
        }
    }

    /// Why the chip cannot be used, or nil: a kernel driver owns it, the bus is missing, nothing
    /// answers, or another chip answers. Reads STATUS only; a chip whose EN is on a GPIO line is
    /// not probed (that would take the line): only its bus is checked.
    func unavailableReason(_ config: I2CActuatorConfig) -> String? {
        if let driver = kernelDriver(config) {
            return "the kernel's \(driver) driver owns this chip: play it through its evdev device (the evdev backend), or unbind the driver to use the i2c backend"
        }
        if config.enable != nil {
            return access(config.busPath, F_OK) == 0 ? nil : "no \(config.busPath): enable I2C (raspi-config, or dtparam=i2c_arm=on) and load i2c-dev"
        }
        do throws(BackendFailure) {
            let link = try I2CChipLink(path: config.busPath, address: config.address)
            let status = DRV260x.Status(try link.read(.status))
            return Self.mismatch(status, config: config)
        } catch {
            return error.message
        }
    }

    /// The name of the kernel driver bound to the chip's client (`/sys/bus/i2c/devices/N-00AA/driver`), if any.
    func kernelDriver(_ config: I2CActuatorConfig) -> String? {
        guard let client = config.clientName else { return nil }
        var buffer = [CChar](repeating: 0, count: 512)
        let length = readlink("\(sysfsRoot)/bus/i2c/devices/\(client)/driver", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let target = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.map(String.init)
    }

    /// Why STATUS does not show the board file's chip, or nil when it does.
    static func mismatch(_ status: DRV260x.Status, config: I2CActuatorConfig) -> String? {
        let expected = config.drive.chip
        guard status.deviceID != expected.deviceID else { return nil }
        let found = DRV260x.Chip(deviceID: status.deviceID).map { "a \($0.rawValue)" } ?? "no DRV260x"
        return "\(config.busPath) \(hex(config.address)) reads device id \(status.deviceID) (\(found)), but the board file says \(expected.rawValue) (id \(expected.deviceID)): fix \(config.key).i2c.chip"
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        let found = actuators()
        guard let entry = found.first(where: { $0.board.deviceID(of: $0.config) == deviceID }) else {
            let known = found.map { $0.board.deviceID(of: $0.config) }
            throw BackendFailure(
                code: ENODEV,
                "i2c: no device '\(deviceID)' in the board files (\(search.locations.map(\.path).joined(separator: ", ")))"
                    + (known.isEmpty ? "; none found: install one (Hardware/i2c/README.md) or set i2c.boards" : "; found: \(known.joined(separator: ", "))"))
        }
        let config = entry.config
        if let driver = kernelDriver(config) {
            throw BackendFailure(
                code: EBUSY, "\(deviceID): the kernel's \(driver) driver owns this chip: play it through its evdev device (the evdev backend)")
        }
        let plan: DRV260xPlan
        do throws(DRV260xVoltageError) {
            plan = try DRV260xPlan(drive: config.drive)
        } catch {
            throw BackendFailure(code: EINVAL, "\(deviceID): \(error)")
        }
        // EN first (requested low, then raised): the chip answers only while it is high.
        let enable = try config.enable.map { gpio throws(BackendFailure) in
            try GPIOLines.request(gpio, consumer: "haptics:\(deviceID)", paths: paths, place: entry.board.path)
        }
        var slot: Int32 = -1
        let link: I2CChipLink
        let gain: UInt8
        do throws(BackendFailure) {
            if let enable { try I2CDevice.setEnable(enable, high: true, deviceID: deviceID) }
            link = try I2CChipLink(path: config.busPath, address: config.address)
            let status = DRV260x.Status(try link.read(.status))
            if let mismatch = Self.mismatch(status, config: config) { throw BackendFailure(code: ENODEV, "\(deviceID): \(mismatch)") }
            // The chip's own back-EMF gain stays until a calibration is restored or measured.
            gain = try link.read(.feedbackControl) & 0x03
            try link.write(plan.setup(calibration: nil, backEMFGain: gain))
            slot = try registerStop(deviceID: deviceID, config: config, plan: plan, enable: enable)
            if let enable { try I2CDevice.setEnable(enable, high: false, deviceID: deviceID) }
        } catch {
            haptics_stop_guard_unregister(slot)
            enable?.release()  // EN low: the chip shuts down
            throw error
        }
        StopGuardWarning.log(to: services, backend: "i2c", waitMilliseconds: 2_000)
        let device = I2CDevice(
            id: deviceID, config: config, plan: plan, link: link, enable: enable, ownGain: gain, guardSlot: slot, services: services,
            watchdog: watchdog
        ) { [weak self] in
            _ = self?.open.withLock { $0.removeValue(forKey: deviceID) }
        }
        open.withLock { $0[deviceID] = WeakDevice(device: device) }
        services.log(HAPTICS_LOG_DEBUG, "\(deviceID): \(config.drive.chip.rawValue) on \(config.busPath) set up (RATED \(hex(plan.ratedCode)), OD_CLAMP \(hex(plan.clampCode))), in standby")
        return device
    }

    /// Registers GO cleared, RTP zero and standby with the stop guard, on a descriptor of its own,
    /// then EN low when it is wired.
    func registerStop(deviceID: String, config: I2CActuatorConfig, plan: DRV260xPlan, enable: GPIOLines?) throws(BackendFailure) -> Int32 {
        let slot = haptics_stop_guard_begin(deviceID)
        guard slot >= 0 else { throw BackendFailure(code: -slot, "\(deviceID): the stop guard has no room: \(String(cString: strerror(-slot)))") }
        let registers = plan.halt.map(\.register)
        let values = plan.halt.map(\.value)
        var result = haptics_stop_guard_add_i2c(slot, config.busPath, UInt32(config.address), registers.count, registers, values)
        if result == 0, let enable { result = enable.addToStopGuard(slot: slot) }
        if result == 0 { result = haptics_stop_guard_arm(slot, 0) }
        guard result == 0 else {
            haptics_stop_guard_unregister(slot)
            throw BackendFailure(code: -result, "\(deviceID): cannot register the stop with the stop guard: \(String(cString: strerror(-result)))")
        }
        return slot
    }

    func destroy() {
        let leftovers = open.withLock { $0.values.compactMap(\.device) }
        for device in leftovers { device.close() }
        watchdog.shutdown()
    }

    /// What one SMBus byte write takes on a 100 kHz bus (the Raspberry Pi's default): 29 bits and
    /// the start and stop, rounded up, in nanoseconds. Waking is one write (MODE).
    static let writeNanoseconds: UInt64 = 400_000

    /// What the engine is told about an actuator.
    static func spec(id: String, board: BoardFile, config: I2CActuatorConfig, unavailableReason: String?) -> DeviceSpec {
        let kind = config.drive.actuator == .lra ? HAPTICS_ACTUATOR_LRA : HAPTICS_ACTUATOR_ERM
        let limits = config.limits
        let channel = ChannelSpec(
            name: "main", actuator: kind, amplitudeSteps: config.drive.loop == .closed ? 256 : 128,
            resonantFrequency: Float(limits.resonantFrequency ?? 0), nominalFrequency: Float(limits.resonantFrequency ?? limits.nominalFrequency ?? 0))
        let envelope = EnvelopeSpec(
            amplitudeOffset: 0, ratedLevel: Float(limits.ratedLevel), kickLevel: Float(limits.overdriveLevel),
            kickNanoseconds: limits.overdriveLevel > limits.ratedLevel ? limits.overdriveMaxNanoseconds : 0,
            maxContinuousNanoseconds: limits.maxContinuousNanoseconds, restNanoseconds: limits.restNanoseconds, acceptsLevels: true)
        let name = config.description ?? "\(board.description ?? board.name): \(config.name) (\(config.drive.chip.rawValue))"
        var spec = DeviceSpec(
            id: id, name: name, actuator: kind, channels: [channel], minimumUpdateIntervalNanoseconds: config.updateIntervalNanoseconds,
            wakeLatencyNanoseconds: writeNanoseconds, unavailableReason: unavailableReason, envelope: envelope)
        spec.nativeEffects = config.drive.chip.hasROMLibrary
        spec.selfCalibration = true
        return spec
    }
}
