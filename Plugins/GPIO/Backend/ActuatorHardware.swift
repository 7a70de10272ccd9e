import CGpiodShim
import GPIOLineKit
import GPIOBoards
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport
import StopGuardKit

#if canImport(Glibc)
import Glibc
#endif

/// The hardware of one open actuator: its PWM channel(s), its GPIO lines and its stop-guard
/// registration. The one owner of all three; ``release()`` stops the actuator and frees them, once.
///
/// Every hardware write goes through the stop guard's write section, so its signal handler never
/// races a write of another thread, and no write starts once the process is stopping.
/// Not thread-safe: the owning device serialises calls.
final class ActuatorHardware {
    let board: BoardFile
    let config: ActuatorConfig
    let id: String
    private let pwm: SysfsPWMChannel
    private let directionPWM: SysfsPWMChannel?
    private let lines: GPIOLines?
    private var guardSlot: Int32 = -1
    private var released = false
    /// What the hardware does now (as last applied).
    private(set) var output: ActuatorOutput

    /// Takes the actuator and forces it stopped, whatever a previous (possibly killed) process left.
    ///
    /// The order keeps a live owner safe and a dead one's leftovers harmless: the PWM channel(s) are
    /// exported if needed and locked first, with no write (a channel another process drives makes
    /// the open fail here, untouched); then the lines are requested inactive, so a driver IC is off
    /// before its input changes; then the PWM goes to duty 0, disabled, at the actuator's resting
    /// period. On any failure everything taken is stopped and released, and the error names the
    /// board file, the key, and the chip, line or sysfs path.
    init(board: BoardFile, config: ActuatorConfig, paths: HardwarePaths) throws(BackendFailure) {
        self.board = board
        self.config = config
        id = board.deviceID(of: config)
        let place = board.path
        let directionKey = "\(config.key).pwm.direction_channel"

        let pwm: SysfsPWMChannel
        do {
            pwm = try SysfsPWMChannel(root: paths.sysfsRoot, chip: config.pwm.chip, channel: config.pwm.channel)
        } catch {
            throw Self.failure(error, place: place, key: config.pwm.channelKey)
        }
        var directionPWM: SysfsPWMChannel?
        var lines: GPIOLines?
        // Idle at the actuator's own resting period (the carrier, or resonance for an H-bridge),
        // whatever period the channel was left with.
        let idle = config.idleOutput()
        do throws(BackendFailure) {
            if let channel = config.pwm.directionChannel {
                do {
                    directionPWM = try SysfsPWMChannel(root: paths.sysfsRoot, chip: config.pwm.chip, channel: channel)
                } catch {
                    throw Self.failure(error, place: place, key: directionKey)
                }
            }
            if let gpio = config.gpio {
                lines = try GPIOLines.request(gpio, consumer: "haptics:\(config.name)", paths: paths, place: place)
            }
            do {
                try pwm.stop()
                try pwm.apply(idle.pwm)
            } catch {
                throw Self.failure(error, place: place, key: config.pwm.channelKey)
            }
            if let directionPWM, let idleDirection = idle.directionPWM {
                do {
                    try directionPWM.stop()
                    try directionPWM.apply(idleDirection)
                } catch {
                    throw Self.failure(error, place: place, key: directionKey)
                }
            }
        } catch {
            // The channels are ours: closing stops them (duty 0, disabled) and unexports them.
            lines?.release()
            directionPWM?.close()
            pwm.close()
            throw error
        }
        self.pwm = pwm
        self.directionPWM = directionPWM
        self.lines = lines
        output = ActuatorOutput(lines: lines?.values ?? [:], pwm: pwm.state, directionPWM: directionPWM?.state)
        do {
            try registerStopSequence()
        } catch {
            release()
            throw error
        }
    }

    deinit { release() }

    /// Takes the hardware to `target` in the order ``ActuatorOutput/steps(from:to:)`` gives.
    /// - Throws: a failure naming the sysfs path or the chip; ESHUTDOWN once the process is stopping.
    func apply(_ target: ActuatorOutput) throws(BackendFailure) {
        guard !released else { throw BackendFailure(code: ENODEV, "the actuator is closed") }
        try withWriteSection { () throws(BackendFailure) in
            for step in ActuatorOutput.steps(from: output, to: target) {
                switch step {
                case .lines(let values):
                    guard let lines else { continue }
                    do throws(LineRequestFailure) {
                        try lines.set(values)
                    } catch {
                        throw BackendFailure(code: error.errno, "\(board.path): \(config.gpio?.chipKey ?? config.key): cannot set the lines of \(lines.chipPath): \(error.text)")
                    }
                    output.lines = lines.values
                case .pwm(let state):
                    defer { output.pwm = pwm.state }
                    do throws(SysfsPWMError) { try pwm.apply(state) } catch { throw Self.failure(error, place: board.path, key: config.pwm.channelKey) }
                case .directionPWM(let state):
                    guard let directionPWM else { continue }
                    defer { output.directionPWM = directionPWM.state }
                    do throws(SysfsPWMError) { try directionPWM.apply(state) } catch {
                        throw Self.failure(error, place: board.path, key: "\(config.key).pwm.direction_channel")
                    }
                }
            }
        }
    }

    /// Writes the duty cycle again (the path every frame takes), for timing the wake sequence.
    func rewriteDuty() throws(BackendFailure) {
        try withWriteSection { () throws(BackendFailure) in
            do throws(SysfsPWMError) { try pwm.rewriteDuty() } catch { throw Self.failure(error, place: board.path, key: config.pwm.channelKey) }
        }
    }

    /// Stops the actuator (lines inactive, PWM duty 0 and disabled), unregisters the stop sequence,
    /// releases the lines and unexports the PWM. Idempotent; never throws: every step is tried.
    func release() {
        guard !released else { return }
        try? apply(config.idleOutput(currentPeriod: output.pwm.periodNanoseconds))
        released = true
        if guardSlot >= 0 {
            haptics_stop_guard_unregister(guardSlot)
            guardSlot = -1
        }
        if let lines {
            try? lines.set(Dictionary(uniqueKeysWithValues: lines.roles.map { ($0, false) }))
            lines.release()
        }
        directionPWM?.close()
        pwm.close()
    }

    private func withWriteSection(_ body: () throws(BackendFailure) -> Void) throws(BackendFailure) {
        try withStopGuardSection(guardSlot, body)
    }

    /// Registers the precomputed stop program with the stop guard (`haptics_stop_guard.h`), which
    /// applies it on every fatal signal, at exit and, from its supervisor, after any other death:
    /// the lines inactive; `duty_cycle` ← 0 then `enable` ← 0 on every channel, the channel
    /// directories locked while the supervisor writes. Lines go first when there is an enable line:
    /// the driver stops at once, and a DRV2603 whose input fell to 0 % duty while still enabled
    /// would drive full reverse.
    private func registerStopSequence() throws(BackendFailure) {
        let slot = haptics_stop_guard_begin(id)
        guard slot >= 0 else {
            throw BackendFailure(code: -slot, "\(id): cannot register the actuator's stop program: \(String(cString: strerror(-slot)))")
        }
        var result: Int32 = 0
        if let lines { result = lines.addToStopGuard(slot: slot) }
        for channel in [pwm, directionPWM].compactMap({ $0 }) where result == 0 {
            result = haptics_stop_guard_add_write(slot, channel.path(of: "duty_cycle"), "0")
            if result == 0 { result = haptics_stop_guard_add_write(slot, channel.path(of: "enable"), "0") }
            if result == 0 { result = haptics_stop_guard_add_lock(slot, channel.directory) }
        }
        if result == 0 { result = haptics_stop_guard_arm(slot, config.gpio?.enable != nil ? 1 : 0) }
        guard result == 0 else {
            haptics_stop_guard_unregister(slot)
            throw BackendFailure(code: -result, "\(id): cannot register the actuator's stop program: \(String(cString: strerror(-result)))")
        }
        guardSlot = slot
    }

    /// A backend failure from a sysfs PWM error, naming the board file and key.
    static func failure(_ error: SysfsPWMError, place: String, key: String) -> BackendFailure {
        let code = error.errno == EWOULDBLOCK ? EBUSY : (error.errno == 0 ? EINVAL : error.errno)
        return BackendFailure(code: code, "\(place): \(key): \(error)")
    }
}
