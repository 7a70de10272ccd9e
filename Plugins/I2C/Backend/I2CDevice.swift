import CHapticsABI
import DRV260x
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

/// One open DRV260x: the power model on the chip's own states, the safety rules on top.
///
/// - idle (after open, ``sleep()``): RTP_INPUT at zero, STANDBY, and with an EN line, EN low (the
///   chip's shutdown; waking raises it, waits ``enableSettleMicroseconds`` and writes the set-up
///   again, since the chip may have lost its registers);
/// - awake (``wake()``, ``stop()``): real-time playback at zero;
/// - driving (``submit(_:)``): RTP_INPUT, through the ``DriveLimiter`` (rated level, a bounded kick in
///   open loop, the continuous-drive cut); a value is written only when it changes.
///
/// Every write runs inside the stop guard's write section; the guard's program (RTP zero, then
/// STANDBY) covers every kind of process end.
final class I2CDevice: DeviceDriver, DeadlineTarget {
    let id: String
    let config: I2CActuatorConfig
    let plan: DRV260xPlan
    private let services: HostServices
    private let watchdog: Watchdog
    private let onClose: @Sendable () -> Void
    private let state: Mutex<State>

    /// How long the chip needs after EN rises before it answers, in microseconds (250 µs in the
    /// DRV2604L's initialization procedure, with room for a slow GPIO write).
    static let enableSettleMicroseconds: UInt32 = 1_000

    private struct State {
        var link: I2CChipLink?
        /// The EN line, if wired.
        var enable: GPIOLines?
        /// Whether the chip answers: EN high, or no EN line (tied high).
        var powered: Bool { enable.map { $0.values[.enable] == true } ?? true }
        /// The chip's own BEMF_GAIN, read at open, written while no calibration is known.
        var ownGain: UInt8
        var guardSlot: Int32
        var limiter: DriveLimiter
        var awake = false
        /// The level asked by the last frame, 0…1 of RTP full scale.
        var requested = 0.0
        /// The RTP_INPUT value last written.
        var written: UInt8
        var cut = false
        /// The calibration the chip holds (restored or measured), written again at every set-up.
        var calibration: DRV260xCalibration?
        /// While a sequence started by ``startNative(_:)`` may play: the monotonic time, in
        /// nanoseconds, by which it has ended. The chip is in internal-trigger mode until a drive,
        /// a sleep or another sequence ends it.
        var sequenceDeadline: UInt64?
    }

    /// How often a sleep waiting for a started sequence to end reads GO, in nanoseconds.
    static let sequencePollNanoseconds: UInt64 = 10_000_000

    /// Takes over `link` (the chip set up and in standby, EN low when `enable` is given), its EN
    /// line and its stop-guard slot.
    init(
        id: String, config: I2CActuatorConfig, plan: DRV260xPlan, link: sending I2CChipLink, enable: sending GPIOLines?, ownGain: UInt8, guardSlot: Int32,
        services: HostServices, watchdog: Watchdog, onClose: @escaping @Sendable () -> Void
    ) {
        self.id = id
        self.config = config
        self.plan = plan
        self.services = services
        self.watchdog = watchdog
        self.onClose = onClose
        state = Mutex(
            State(
                link: link, enable: enable, ownGain: ownGain, guardSlot: guardSlot, limiter: DriveLimiter(limits: config.limits),
                written: plan.zeroCode))
    }

    func wake() throws(BackendFailure) {
        try update { state in state.awake = true }
    }

    func sleep() throws(BackendFailure) {
        // STATUS is read before EN may go low, and its faults reported once the chip sleeps.
        let status = try readStatus()
        try update { state in
            state.awake = false
            state.requested = 0
        }
        try report(status)
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        let amplitude = frame.channelCount > 0 ? Double(frame[0].amplitude) : 0
        try update { state in
            state.awake = true
            // No dead zone: the chip drives from zero, so levels and amplitudes are the same.
            state.requested = amplitude.isFinite ? max(0, min(1, amplitude)) : 0
        }
    }

    func stop() throws(BackendFailure) {
        try update { state in state.requested = 0 }
        try report(try readStatus())
    }

    func close() {
        watchdog.schedule(self, at: nil)
        state.withLock { state in
            guard let link = state.link else { return }
            do throws(BackendFailure) {
                if state.powered { try link.write(state.sequenceDeadline == nil ? plan.sleep : plan.halt) }
            } catch {
                services.log(HAPTICS_LOG_ERROR, "\(id): stopping at close failed: \(error.message)")
            }
            // The guard first: it must never stop a chip a new owner has taken.
            haptics_stop_guard_unregister(state.guardSlot)
            powerDown(&state)
            state.enable?.release()
            state.enable = nil
            state.link = nil
        }
        onClose()
    }

    /// Sets the chip's EN line; raising it also waits for the chip to answer.
    /// - Throws: a failure naming the device, the line's chip and why.
    static func setEnable(_ enable: GPIOLines, high: Bool, deviceID: String) throws(BackendFailure) {
        do throws(LineRequestFailure) {
            try enable.set([.enable: high])
        } catch {
            throw BackendFailure(code: error.errno, "\(deviceID): cannot \(high ? "raise" : "lower") EN on \(enable.chipPath): \(error.text)")
        }
        if high { usleep(enableSettleMicroseconds) }
    }

    /// Raises EN (if wired and low) and writes the set-up: EN low may have lost the registers.
    /// Leaves the chip in standby.
    private func powerUp(_ state: inout State, _ link: I2CChipLink) throws(BackendFailure) {
        guard !state.powered, let enable = state.enable else { return }
        try Self.setEnable(enable, high: true, deviceID: id)
        try link.write(plan.setup(calibration: state.calibration, backEMFGain: state.ownGain))
        state.written = plan.zeroCode
    }

    /// Lowers EN, if wired: the chip shuts down.
    private func powerDown(_ state: inout State) {
        guard state.powered, let enable = state.enable else { return }
        do throws(BackendFailure) {
            try Self.setEnable(enable, high: false, deviceID: id)
        } catch {
            services.log(HAPTICS_LOG_ERROR, "\(error.message); the chip stays in standby")
        }
    }

    /// `text` as a sequence of the chip's ROM effects.
    /// - Throws: EOPNOTSUPP for a chip without a ROM library, EINVAL naming a step it does not have.
    private func romSequence(_ text: String) throws(BackendFailure) -> ROMSequence {
        guard config.drive.chip.hasROMLibrary else {
            throw BackendFailure(code: EOPNOTSUPP, "\(id): a \(config.drive.chip.rawValue) has no ROM effect library")
        }
        do throws(ROMSequenceError) {
            return try ROMSequence(parsing: text)
        } catch {
            throw BackendFailure(code: EINVAL, "\(id): \(error)")
        }
    }

    /// The writes that start `sequence`: GO cleared first when a started one may still play.
    private func start(_ sequence: ROMSequence, _ state: inout State) -> [DRV260x.Write] {
        defer { state.sequenceDeadline = nil }
        return (state.sequenceDeadline == nil ? [] : [DRV260x.Write(.go, 0)]) + plan.romSequence(sequence)
    }

    func nativeFeedback(_ effect: String, scale: Double) -> String? {
        guard config.drive.chip.hasROMLibrary else { return nil }
        return FeedbackROM.sequence(for: effect, scale: scale)?.description
    }

    func startNative(_ text: String) throws(BackendFailure) {
        let sequence = try romSequence(text)
        let now = Monotonic.now()
        let recheck = try exclusive { state, link throws(BackendFailure) -> UInt64? in
            try powerUp(&state, link)
            try guarded(state, link, start(sequence, &state))
            state.requested = 0
            state.sequenceDeadline = now + DRV260xPlan.sequenceTimeoutNanoseconds(sequence)
            // Started on an idle chip: it idles again once the sequence has ended.
            return state.awake ? nil : now + Self.sequencePollNanoseconds
        }
        if let recheck { watchdog.schedule(self, at: recheck) }
    }

    func playNative(_ text: String) throws(BackendFailure) {
        let sequence = try romSequence(text)
        try exclusive { state, link throws(BackendFailure) in
            try powerUp(&state, link)
            try guarded(state, link, start(sequence, &state))
            let finished = try waitForGo(link, timeout: DRV260xPlan.sequenceTimeoutNanoseconds(sequence))
            // Back to real-time playback at zero (RTP_INPUT was never changed): awake and stopped.
            state.awake = true
            state.requested = 0
            try guarded(state, link, (finished ? [] : [DRV260x.Write(.go, 0)]) + plan.wake + [DRV260x.Write(.rtpInput, plan.zeroCode)])
            state.written = plan.zeroCode
            guard finished else { throw BackendFailure(code: ETIMEDOUT, "\(id): the chip did not finish \(sequence) in time; it was stopped") }
        }
    }

    func selfCalibrate() throws(BackendFailure) -> [String: Double] {
        try exclusive { state, link throws(BackendFailure) -> [String: Double] in
            try powerUp(&state, link)
            // Idle again afterwards (EN low too), whatever happens.
            defer { powerDown(&state) }
            let before = state.calibration
            state.awake = false
            state.requested = 0
            state.written = plan.zeroCode
            // A started sequence ends first: calibration needs the sequencer.
            try guarded(state, link, (state.sequenceDeadline == nil ? [] : [DRV260x.Write(.go, 0)]) + plan.calibration)
            state.sequenceDeadline = nil
            let finished = try waitForGo(link, timeout: DRV260xPlan.calibrationTimeoutNanoseconds)
            let status = DRV260x.Status(try link.read(.status))
            guard finished, !status.diagnosticFailed else {
                try guarded(state, link, (finished ? [] : [DRV260x.Write(.go, 0)]) + plan.setup(calibration: before, backEMFGain: state.ownGain))
                if !finished { throw BackendFailure(code: ETIMEDOUT, "\(id): auto-calibration did not finish within 2 s; the chip was put back in standby") }
                throw BackendFailure(
                    code: EIO,
                    "\(id): auto-calibration failed (STATUS DIAG_RESULT set): the actuator is missing, open or shorted, or drive.rated_voltage and drive.overdrive_voltage do not suit it; check its wires and the board file")
            }
            let result = DRV260xCalibration(
                compensation: try link.read(.calibrationCompensation), backEMF: try link.read(.calibrationBackEMF),
                backEMFGain: try link.read(.feedbackControl) & 0x03, lraPeriod: config.drive.actuator == .lra ? try link.read(.lraPeriod) : nil)
            state.calibration = result
            try guarded(state, link, plan.setup(calibration: result))
            return result.values
        }
    }

    func restoreCalibration(_ values: [String: Double]) throws(BackendFailure) {
        let calibration: DRV260xCalibration
        do throws(DRV260xCalibrationError) {
            calibration = try DRV260xCalibration(values: values)
        } catch {
            throw BackendFailure(code: EINVAL, "\(id): \(error)")
        }
        try exclusive { state, link throws(BackendFailure) in
            state.calibration = calibration
            // A chip with EN low gets them with the set-up at its next wake.
            guard state.powered else { return }
            // The set-up clears GO and leaves internal-trigger mode: a started sequence ends.
            try guarded(state, link, plan.setup(calibration: calibration) + (state.awake ? plan.wake : []))
            state.sequenceDeadline = nil
            state.written = plan.zeroCode
            state.requested = 0
        }
    }

    /// Runs `body` with the state and the link, the device's other calls waiting.
    private func exclusive<T>(_ body: (inout State, I2CChipLink) throws(BackendFailure) -> T) throws(BackendFailure) -> T {
        let result: Result<T, BackendFailure> = state.withLock { state in
            guard let link = state.link else { return .failure(BackendFailure(code: ENODEV, "the device is closed")) }
            do throws(BackendFailure) {
                return .success(try body(&state, link))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Writes inside the stop guard's write section.
    private func guarded(_ state: State, _ link: I2CChipLink, _ writes: [DRV260x.Write]) throws(BackendFailure) {
        guard !writes.isEmpty else { return }
        try withStopGuardSection(state.guardSlot) { () throws(BackendFailure) in try link.write(writes) }
    }

    /// Polls GO every 2 ms until the chip clears it (true) or `timeout` nanoseconds pass (false).
    private func waitForGo(_ link: I2CChipLink, timeout: UInt64) throws(BackendFailure) -> Bool {
        let deadline = Monotonic.now() + timeout
        while try link.read(.go) & 0x01 != 0 {
            guard Monotonic.now() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    func deadlineReached() {
        do {
            try update { _ in }
        } catch where error.code != ENODEV {
            services.log(HAPTICS_LOG_ERROR, "\(id): enforcing a safety limit failed: \(error.message)")
        } catch {}
    }

    /// Reads STATUS (which clears its latched flags), or nil while EN holds the chip shut down.
    private func readStatus() throws(BackendFailure) -> DRV260x.Status? {
        try exclusive { state, link throws(BackendFailure) in state.powered ? DRV260x.Status(try link.read(.status)) : nil }
    }

    /// Fails naming each fault `status` reports: over-temperature and over-current stop the chip's
    /// drive by themselves.
    private func report(_ status: DRV260x.Status?) throws(BackendFailure) {
        guard let status, !status.faults.isEmpty else { return }
        let message = "\(id): the chip reports \(status.faults.joined(separator: "; "))"
        services.log(HAPTICS_LOG_ERROR, message)
        throw BackendFailure(code: EIO, message)
    }

    /// Changes the request with `change`, recomputes the output now and writes what changed: the
    /// mode when the chip wakes or idles, RTP_INPUT when its value changes.
    private func update(_ change: (inout State) -> Void) throws(BackendFailure) {
        let now = Monotonic.now()
        let (recheck, cutNow) = try exclusive { state, link throws(BackendFailure) -> (UInt64?, Bool) in
            let wasAwake = state.awake
            change(&state)
            let decision = state.limiter.limit(state.awake ? state.requested : 0, at: now)
            let code = state.awake ? plan.rtpCode(level: decision.level) : plan.zeroCode
            let cutNow = decision.isCut && !state.cut
            state.cut = decision.isCut
            if let deadline = state.sequenceDeadline {
                return (try sequenceUpdate(&state, link, code: code, deadline: deadline, recheck: decision.recheckAt, now: now), cutNow)
            }
            let waking = state.awake && !wasAwake, sleeping = !state.awake && wasAwake
            guard waking || sleeping || code != state.written else { return (decision.recheckAt, cutNow) }
            try withStopGuardSection(state.guardSlot) { () throws(BackendFailure) in
                if waking { try powerUp(&state, link) }
                var writes: [DRV260x.Write] = waking ? plan.wake : []
                if code != state.written { writes.append(DRV260x.Write(.rtpInput, code)) }
                if sleeping { writes = plan.sleep }
                try link.write(writes)
                state.written = code
                if sleeping { powerDown(&state) }
            }
            return (decision.recheckAt, cutNow)
        }
        watchdog.schedule(self, at: recheck)
        if cutNow { services.log(HAPTICS_LOG_WARNING, config.limits.cutWarning(deviceID: id)) }
    }

    /// ``update(_:)`` while a started sequence may play (the chip in internal-trigger mode):
    /// awake at zero, it plays on; asleep, it plays to its end (GO read back as 0, or its deadline
    /// passed), then the chip idles; any drive ends it and returns to real-time playback.
    /// Returns when to look again.
    private func sequenceUpdate(
        _ state: inout State, _ link: I2CChipLink, code: UInt8, deadline: UInt64, recheck: UInt64?, now: UInt64
    ) throws(BackendFailure) -> UInt64? {
        if state.awake, code == plan.zeroCode { return recheck }
        if !state.awake {
            if now < deadline, try link.read(.go) & 0x01 != 0 {
                let poll = now + Self.sequencePollNanoseconds
                return min(recheck ?? poll, poll)
            }
            try guarded(state, link, plan.halt)
            state.sequenceDeadline = nil
            state.written = plan.zeroCode
            powerDown(&state)
            return recheck
        }
        try guarded(state, link, [DRV260x.Write(.go, 0)] + plan.wake + [DRV260x.Write(.rtpInput, code)])
        state.sequenceDeadline = nil
        state.written = code
        return recheck
    }
}
