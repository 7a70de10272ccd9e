import CHapticsABI
import DRV260x
import GPIOBoards
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One open DRV260x: the power model on the chip's own states, the safety rules on top.
///
/// - idle (after open, ``sleep()``): RTP_INPUT at zero, STANDBY;
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

    private struct State {
        var link: I2CChipLink?
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
    }

    /// Takes over `link` (the chip set up and in standby) and its stop-guard slot.
    init(
        id: String, config: I2CActuatorConfig, plan: DRV260xPlan, link: sending I2CChipLink, guardSlot: Int32, services: HostServices, watchdog: Watchdog,
        onClose: @escaping @Sendable () -> Void
    ) {
        self.id = id
        self.config = config
        self.plan = plan
        self.services = services
        self.watchdog = watchdog
        self.onClose = onClose
        state = Mutex(State(link: link, guardSlot: guardSlot, limiter: DriveLimiter(limits: config.limits), written: plan.zeroCode))
    }

    func wake() throws(BackendFailure) {
        try update { state in state.awake = true }
    }

    func sleep() throws(BackendFailure) {
        try update { state in
            state.awake = false
            state.requested = 0
        }
        try checkFaults()
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
        try checkFaults()
    }

    func close() {
        watchdog.schedule(self, at: nil)
        state.withLock { state in
            guard let link = state.link else { return }
            do throws(BackendFailure) {
                try link.write(plan.sleep)
            } catch {
                services.log(HAPTICS_LOG_ERROR, "\(id): stopping at close failed: \(error.message)")
            }
            haptics_stop_guard_unregister(state.guardSlot)
            state.link = nil
        }
        onClose()
    }

    func playNative(_ text: String) throws(BackendFailure) {
        guard config.drive.chip.hasROMLibrary else {
            throw BackendFailure(code: EOPNOTSUPP, "\(id): a \(config.drive.chip.rawValue) has no ROM effect library")
        }
        let sequence: ROMSequence
        do throws(ROMSequenceError) {
            sequence = try ROMSequence(parsing: text)
        } catch {
            throw BackendFailure(code: EINVAL, "\(id): \(error)")
        }
        try exclusive { state, link throws(BackendFailure) in
            try guarded(state, link, plan.romSequence(sequence))
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
            let before = state.calibration
            state.awake = false
            state.requested = 0
            state.written = plan.zeroCode
            try guarded(state, link, plan.calibration)
            let finished = try waitForGo(link, timeout: DRV260xPlan.calibrationTimeoutNanoseconds)
            let status = DRV260x.Status(try link.read(.status))
            guard finished, !status.diagnosticFailed else {
                try guarded(state, link, (finished ? [] : [DRV260x.Write(.go, 0)]) + plan.setup(calibration: before))
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
            try guarded(state, link, plan.setup(calibration: calibration) + (state.awake ? plan.wake : []))
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
        guard haptics_stop_guard_enter(state.guardSlot) == 0 else { throw BackendFailure(code: ESHUTDOWN, "the process is stopping its actuators") }
        defer { haptics_stop_guard_leave(state.guardSlot) }
        try link.write(writes)
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

    /// Reads STATUS (which clears its latched flags) and fails naming each fault the chip reports:
    /// over-temperature and over-current stop the chip's drive by themselves.
    private func checkFaults() throws(BackendFailure) {
        let status = try withLink { link throws(BackendFailure) in DRV260x.Status(try link.read(.status)) }
        guard !status.faults.isEmpty else { return }
        let message = "\(id): the chip reports \(status.faults.joined(separator: "; "))"
        services.log(HAPTICS_LOG_ERROR, message)
        throw BackendFailure(code: EIO, message)
    }

    private func withLink<T>(_ body: (I2CChipLink) throws(BackendFailure) -> T) throws(BackendFailure) -> T {
        let result: Result<T, BackendFailure> = state.withLock { state in
            guard let link = state.link else { return .failure(BackendFailure(code: ENODEV, "the device is closed")) }
            do throws(BackendFailure) {
                return .success(try body(link))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Changes the request with `change`, recomputes the output now and writes what changed: the
    /// mode when the chip wakes or idles, RTP_INPUT when its value changes.
    private func update(_ change: (inout State) -> Void) throws(BackendFailure) {
        let now = Monotonic.now()
        let result: Result<(UInt64?, cutNow: Bool), BackendFailure> = state.withLock { state in
            guard let link = state.link else { return .failure(BackendFailure(code: ENODEV, "the device is closed")) }
            let wasAwake = state.awake
            change(&state)
            let decision = state.limiter.limit(state.awake ? state.requested : 0, at: now)
            let code = state.awake ? plan.rtpCode(level: decision.level) : plan.zeroCode
            var writes: [DRV260x.Write] = []
            if state.awake, !wasAwake { writes += plan.wake }
            if code != state.written { writes.append(DRV260x.Write(.rtpInput, code)) }
            if !state.awake, wasAwake { writes = plan.sleep }
            let cutNow = decision.isCut && !state.cut
            state.cut = decision.isCut
            guard !writes.isEmpty else { return .success((decision.recheckAt, cutNow)) }
            guard haptics_stop_guard_enter(state.guardSlot) == 0 else {
                return .failure(BackendFailure(code: ESHUTDOWN, "the process is stopping its actuators"))
            }
            defer { haptics_stop_guard_leave(state.guardSlot) }
            do throws(BackendFailure) {
                try link.write(writes)
            } catch {
                return .failure(error)
            }
            state.written = code
            return .success((decision.recheckAt, cutNow))
        }
        let (recheck, cutNow) = try result.get()
        watchdog.schedule(self, at: recheck)
        if cutNow {
            services.log(
                HAPTICS_LOG_WARNING,
                "\(id): continuous drive cut at \(Double(config.limits.maxContinuousNanoseconds) / 1e6) ms (limits.max_continuous_ms); output stays off until the drive stops for \(Double(config.limits.restNanoseconds) / 1e6) ms")
        }
    }
}
