import CHapticsABI
import HapticsSupport
import GPIOBoards
import HapticsPluginKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One open actuator: the power model's states and the safety rules on top of its hardware.
///
/// - idle (after open, ``sleep()``): lines inactive, PWM disabled at duty 0;
/// - awake (``wake()``, ``stop()``): enable active, PWM running at zero output (an H-bridge's
///   stopped at duty 0, so a drive's pushes start with it: ``ActuatorConfig/awakeOutput(level:frequency:currentPeriod:)``);
/// - driving (``submit(_:)``): the frame's amplitude (lifted over the dead zone) through the
///   ``DriveLimiter`` (rated cap, bounded kick, continuous-drive cut), then the topology's duty.
///
/// The watchdog calls ``deadlineReached()`` when a kick must end or a drive must be cut, so the
/// limits hold without further frames. Safety times are `CLOCK_MONOTONIC`, whatever clock the host
/// stamps its frames with.
final class GPIODevice: DeviceDriver, DeadlineTarget {
    let id: String
    let config: ActuatorConfig
    private let services: HostServices
    private let watchdog: Watchdog
    private let onClose: @Sendable () -> Void
    private let state: Mutex<State>

    private struct State {
        var hardware: ActuatorHardware?
        var limiter: DriveLimiter
        var awake = false
        /// The level asked by the last frame (0…1 of full scale, over the dead zone) and its frequency in Hz.
        var requested = 0.0
        var frequency = 0.0
        var cut = false
    }

    /// Takes over `hardware` (idle and stopped); `onClose` runs after ``close()`` released it.
    init(hardware: sending ActuatorHardware, services: HostServices, watchdog: Watchdog, onClose: @escaping @Sendable () -> Void) {
        id = hardware.id
        config = hardware.config
        self.services = services
        self.watchdog = watchdog
        self.onClose = onClose
        let limiter = DriveLimiter(limits: hardware.config.limits)
        state = Mutex(State(hardware: hardware, limiter: limiter))
    }

    func wake() throws(BackendFailure) {
        try update { state in state.awake = true }
    }

    func sleep() throws(BackendFailure) {
        try update { state in
            state.awake = false
            state.requested = 0
        }
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        let drive = frame.channelCount > 0 ? frame[0] : (amplitude: Float(0), frequency: Float(0))
        try update { state in
            // A frame needs an awake device; the host wakes first, and a frame without it wakes too.
            state.awake = true
            // Levels as they are (a profile measured from zero), else lifted over the board's dead zone.
            state.requested = frame.isLevels ? config.level(forLevel: Double(drive.amplitude)) : config.level(forAmplitude: Double(drive.amplitude))
            state.frequency = Double(drive.frequency)
        }
    }

    func stop() throws(BackendFailure) {
        try update { state in state.requested = 0 }
    }

    func close() {
        watchdog.schedule(self, at: nil)
        let hardware = state.withLock { state -> ActuatorHardware? in
            defer { state.hardware = nil }
            return state.hardware
        }
        hardware?.release()
        onClose()
    }

    func deadlineReached() {
        do {
            try update { _ in }
        } catch where error.code != ENODEV {
            // (ENODEV: closed meanwhile, and closing stopped it.)
            services.log(HAPTICS_LOG_ERROR, "\(id): enforcing a safety limit failed: \(error.message)")
        } catch {}
    }

    /// Changes the request with `change`, then recomputes the output at the current time and applies it.
    private func update(_ change: (inout State) -> Void) throws(BackendFailure) {
        let now = Monotonic.now()
        let result: Result<(UInt64?, cutNow: Bool), BackendFailure> = state.withLock { state in
            guard let hardware = state.hardware else { return .failure(BackendFailure(code: ENODEV, "the device is closed")) }
            change(&state)
            let decision = state.limiter.limit(state.awake ? state.requested : 0, at: now)
            let period = hardware.output.pwm.periodNanoseconds
            let target =
                state.awake
                ? config.awakeOutput(level: decision.level, frequency: state.frequency, currentPeriod: period)
                : config.idleOutput(currentPeriod: period)
            let cutNow = decision.isCut && !state.cut
            state.cut = decision.isCut
            do throws(BackendFailure) {
                try hardware.apply(target)
            } catch {
                return .failure(error)
            }
            return .success((decision.recheckAt, cutNow))
        }
        let (recheck, cutNow) = try result.get()
        watchdog.schedule(self, at: recheck)
        if cutNow { services.log(HAPTICS_LOG_WARNING, config.limits.cutWarning(deviceID: id)) }
    }
}
