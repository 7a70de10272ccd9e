import Logging
import Synchronization

/// An opened device under the power model: the one owner of its ``Actuator``.
///
/// Generators and engines *hold* a device (``hold()``), ask for low latency (``prepare()``), and
/// play on it between ``beginActivity()`` and ``endActivity()``, submitting frames in between. The
/// device applies the ``PowerModel``'s rules on its ``clock`` and makes the real wake and sleep
/// calls to the backend. All calls are thread-safe; calls to the backend are serialised.
///
/// The actuator is always left stopped: ``endActivity()`` stops output, the last release idles it,
/// and ``close()`` (or the last reference going away) stops, sleeps and closes it.
public final class HapticDevice: Sendable {
    /// What the device is and can do.
    public let description: DeviceDescription
    /// The actuator driven.
    public let actuator: any Actuator
    /// The clock the power model's timeouts run on.
    public let clock: any HapticClock
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var model: PowerModel
        var timer: ScheduledActionID?
        var closed = false
        var lost = false
        var lastError: DeviceError?
        var lostHandlers: [UInt64: @Sendable (DeviceError) -> Void] = [:]
        var nextHandlerID: UInt64 = 1
    }

    /// Puts `actuator` under the power model.
    /// - Parameters:
    ///   - actuator: the device's driver (a plugin's, or hapticsd's); the device owns it from now on.
    ///   - clock: where timeouts run; a ``ManualClock`` in tests.
    ///   - policy: the prepare timeout and cap.
    ///   - logger: where the device's errors are reported (a failed write, a lost device).
    public init(
        actuator: any Actuator, clock: any HapticClock = SystemClock.shared, policy: PowerPolicy = PowerPolicy(),
        logger: Logger = Logger(label: "haptics.device")
    ) {
        self.description = actuator.description
        self.actuator = actuator
        self.clock = clock
        self.logger = logger
        self.state = Mutex(State(model: PowerModel(policy: policy)))
        // A failure met between calls (a stream thread's write): lost is lost; anything else is
        // logged and thrown by the next call.
        actuator.onFailure { [weak self] error in
            guard let self else { return }
            if error.isDeviceLost {
                self.logger.warning("\(error)")
                self.markLost(error)
            } else {
                self.logger.error("\(error)")
                self.state.withLock { $0.lastError = error }
            }
        }
    }

    deinit { close() }

    /// The current power state.
    public var powerState: PowerState { state.withLock { $0.model.state } }

    /// The power model as it stands (state, deadline, holders), for inspection.
    public var powerModel: PowerModel { state.withLock { $0.model } }

    /// The last failure seen by a call that cannot throw (``prepare()``, ``endActivity()``, a timeout).
    public var lastError: DeviceError? { state.withLock { $0.lastError } }

    /// Whether the backend reported the device gone (unplugged).
    public var isLost: Bool { state.withLock { $0.lost } }

    /// Starts holding the device; the returned hold lets go when released or deinitialised.
    public func hold() -> DeviceHold {
        state.withLock { $0.model.hold() }
        return DeviceHold(device: self)
    }

    /// Asks for minimum latency for the next while (see ``PowerModel/prepare(at:)``). Never throws:
    /// a device that cannot wake is simply not prepared, and ``lastError`` says why.
    public func prepare() {
        transition { model, now in model.prepare(at: now) }
    }

    /// Starts a playback (a trigger): wakes the device if it is idle.
    /// - Throws: the backend's failure to wake; the playback then did not start.
    public func beginActivity() throws(DeviceError) {
        let error: DeviceError? = state.withLock { state in
            guard !state.closed else { return .closed(deviceID: description.id) }
            return beginActivity(&state)
        }
        if let error { throw error }
    }

    /// Sends a frame to the actuator. Call between ``beginActivity()`` and ``endActivity()``.
    public func submit(_ frame: DriveFrame) throws(DeviceError) {
        let error: DeviceError? = state.withLock { state in
            guard !state.closed else { return .closed(deviceID: description.id) }
            return submit(frame, &state)
        }
        if let error { throw error }
    }

    /// ``beginActivity()`` and ``submit(_:)`` under one lock (a start on a silent device). When
    /// the frame fails, the activity is ended again before the error is thrown: on failure no
    /// activity was begun.
    func beginActivityAndSubmit(_ frame: DriveFrame) throws(DeviceError) {
        let error: DeviceError? = state.withLock { state in
            guard !state.closed else { return .closed(deviceID: description.id) }
            if let error = beginActivity(&state) { return error }
            guard let error = submit(frame, &state) else { return nil }
            if error.isDeviceLost {
                // Nothing more goes to a device that is gone: the model forgets the activity.
                _ = state.model.endActivity(at: clock.now())
            } else {
                endActivity(&state)
            }
            return error
        }
        if let error { throw error }
    }

    private func beginActivity(_ state: inout State) -> DeviceError? {
        let before = state.model
        switch state.model.beginActivityEffect() {
        case .none, .some(.setDeadline(.none)):
            // Already active, or prepared (the fast path): the armed prepared timeout stays,
            // see `apply(_:to:keepingTimer:)`.
            return nil
        case let effect?:
            if let error = apply([effect], to: &state, keepingTimer: true) {
                state.model = before
                return error
            }
            return nil
        }
    }

    private func submit(_ frame: DriveFrame, _ state: inout State) -> DeviceError? {
        do throws(DeviceError) {
            try actuator.submit(frame)
            return nil
        } catch {
            return record(error, in: &state)
        }
    }

    /// Sets the adaptive triggers through the actuator, serialised with the device's other calls.
    /// Call while an activity holds the device awake (``AdaptiveTriggers`` does both).
    public func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(DeviceError) {
        try serialised { () throws(DeviceError) in try actuator.setTriggers(right: right, left: left) }
    }

    /// Plays `sequence`, effects stored in the device (``DeviceDescription/hasNativeEffects``: a
    /// DRV2605L's ROM library, `strong-click-100,wait:100ms,sharp-click-60`), and returns when it
    /// has played. Wakes the device for the time it plays, as a playback does.
    public func playNative(_ sequence: String) throws(DeviceError) {
        try beginActivity()
        defer { endActivity() }
        try serialised { () throws(DeviceError) in try actuator.playNative(sequence) }
    }

    /// Which of its stored effects the device plays for the feedback vocabulary's effect `effect`
    /// at `scale` (0…1] of its strength (a DRV2605L: `impact.heavy` is `strong-click-100`), or nil
    /// when none fits and the effect renders with frames (ABI 1.8). Touches no hardware.
    public func nativeFeedback(_ effect: String, scale: Double) -> String? {
        actuator.nativeFeedback(effect, scale: scale)
    }

    /// Starts `sequence` (as ``playNative(_:)`` takes it) without waiting for its end (ABI 1.8).
    /// Call while an activity holds the device awake (the engine does): it plays on through the
    /// activity's end, and the device idles once it has finished. A frame with any amplitude ends it.
    public func startNative(_ sequence: String) throws(DeviceError) {
        try serialised { () throws(DeviceError) in try actuator.startNative(sequence) }
    }

    /// Runs the device's own calibration (``DeviceDescription/selfCalibrates``: a driver IC's
    /// auto-calibration) and returns its results by name, to store in the device's profile
    /// (``CalibrationProfile/deviceCalibration``). The device is left idle.
    public func selfCalibrate() throws(DeviceError) -> [String: Double] {
        try serialised { () throws(DeviceError) in try actuator.selfCalibrate() }
    }

    /// Gives the device stored results of ``selfCalibrate()``; ``HapticSystem/openDevice(_:)`` does
    /// it with the device's profile.
    public func restoreCalibration(_ values: [String: Double]) throws(DeviceError) {
        try serialised { () throws(DeviceError) in try actuator.restoreCalibration(values) }
    }

    /// Runs `body` with the device's calls serialised, failing on a closed device.
    private func serialised<T>(_ body: () throws(DeviceError) -> T) throws(DeviceError) -> T {
        let result: Result<T, DeviceError> = state.withLock { state in
            guard !state.closed else { return .failure(.closed(deviceID: description.id)) }
            do throws(DeviceError) {
                return .success(try body())
            } catch {
                return .failure(record(error, in: &state))
            }
        }
        return try result.get()
    }

    /// Ends a playback: output stops; after the last playback the device idles or stays prepared.
    public func endActivity() {
        state.withLock { state -> Void in
            guard !state.closed else { return }
            endActivity(&state)
        }
    }

    private func endActivity(_ state: inout State) {
        do throws(DeviceError) { try actuator.stop() } catch { _ = record(error, in: &state) }
        _ = apply(state.model.endActivity(at: clock.now()), to: &state)
    }

    /// Calls `handler` once if the backend reports the device lost; returns a token for removal.
    @discardableResult
    public func onLost(_ handler: @escaping @Sendable (DeviceError) -> Void) -> UInt64 {
        state.withLock { state in
            let id = state.nextHandlerID
            state.nextHandlerID += 1
            state.lostHandlers[id] = handler
            return id
        }
    }

    /// Removes a handler added with ``onLost(_:)``.
    public func removeLostHandler(_ id: UInt64) {
        _ = state.withLock { $0.lostHandlers.removeValue(forKey: id) }
    }

    /// Marks the device lost (unplugged) and tells the ``onLost(_:)`` handlers.
    public func markLost(_ error: DeviceError) {
        let handlers = state.withLock { Self.takeLostHandlers(error, in: &$0) }
        for handler in handlers { handler(error) }
    }

    /// Marks the device lost (once) and hands back the ``onLost(_:)`` handlers to call.
    private static func takeLostHandlers(_ error: DeviceError, in state: inout State) -> [@Sendable (DeviceError) -> Void] {
        guard !state.lost else { return [] }
        state.lost = true
        state.lastError = error
        defer { state.lostHandlers.removeAll() }
        return Array(state.lostHandlers.values)
    }

    /// Stops the device, puts it to sleep and closes it. Idempotent.
    public func close() {
        let wasClosed = state.withLock { state in
            defer { state.closed = true }
            guard !state.closed else { return true }
            if let timer = state.timer { clock.cancel(timer) }
            state.timer = nil
            if state.model.state != .idle, !state.lost {
                try? actuator.stop()
                try? actuator.sleep()
            }
            return false
        }
        if !wasClosed { actuator.close() }
    }

    func release() {
        transition { model, now in model.release(at: now) }
    }

    private func deadlineReached() {
        transition { model, now in model.deadlineReached(at: now) }
    }

    private func transition(_ step: (inout PowerModel, HapticInstant) -> [PowerModel.Effect]) {
        state.withLock { state in
            guard !state.closed else { return }
            let before = state.model
            if apply(step(&state.model, clock.now()), to: &state) != nil {
                // The device could not wake: it stays as it was.
                state.model = before
            }
        }
    }

    /// Carries out the model's effects; returns the first backend failure.
    ///
    /// With `keepingTimer` (a trigger), a disarm leaves the armed prepared timeout in the clock's
    /// queue instead of cancelling it: a trigger on a prepared device is the fast path, and a
    /// cancellation there is most of the device's cost. The timer stays recorded, so the next
    /// deadline or idling cancels it off the trigger's path, and if it fires first it finds the
    /// model active (or prepared until later) and does nothing.
    private func apply(_ effects: [PowerModel.Effect], to state: inout State, keepingTimer: Bool = false) -> DeviceError? {
        for effect in effects {
            switch effect {
            case .wake:
                do throws(DeviceError) { try actuator.wake() } catch { return record(error, in: &state) }
            case .sleep:
                do throws(DeviceError) { try actuator.sleep() } catch { _ = record(error, in: &state) }
            case .setDeadline(nil) where keepingTimer:
                continue
            case .setDeadline(let deadline):
                if let timer = state.timer { clock.cancel(timer) }
                state.timer = deadline.map { deadline in
                    clock.schedule(at: deadline) { [weak self] in self?.deadlineReached() }
                }
            }
        }
        return nil
    }

    private func record(_ error: DeviceError, in state: inout State) -> DeviceError {
        state.lastError = error
        logger.warning("\(error)")
        if error.isDeviceLost {
            let handlers = Self.takeLostHandlers(error, in: &state)
            // Handlers run off this lock, on the clock, so they may call back into the device.
            if !handlers.isEmpty { clock.schedule(at: clock.now()) { for handler in handlers { handler(error) } } }
        }
        return error
    }
}

/// A holder's claim on a ``HapticDevice`` (a generator's, an engine's). The device idles when the
/// last hold is released, explicitly or by deinitialisation.
public final class DeviceHold: Sendable {
    /// The device held.
    public let device: HapticDevice
    private let released = Atomic<Bool>(false)

    init(device: HapticDevice) {
        self.device = device
    }

    deinit { release() }

    /// Asks the device for minimum latency for the next while.
    public func prepare() {
        guard !released.load(ordering: .relaxed) else { return }
        device.prepare()
    }

    /// Lets go of the device. Idempotent.
    public func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        device.release()
    }
}
