import CHapticsABI
import HIDReports
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One opened controller: the contract's device calls on the host's threads, and the one writer
/// thread that owns the hidraw handle while the controller is awake.
///
/// ## Threads
///
/// `submit` and `stop` only store the newest ``RumbleState`` in the shared state (a pthread mutex)
/// and signal the condition variable: they never wait for a write, so a controller whose
/// `hid_write` blocks (usbhid gives an interrupt transfer 5 s before it times out) stalls neither
/// the engine nor other controllers. The writer thread wakes, applies ``WriteSchedule`` (coalescing
/// to the newest state, per-family spacing and refresh) and is the only thread that writes rumble
/// reports, advances the sequence counter (Switch packet number, DualSense Bluetooth tag) and closes
/// the handle. It is an ordinary thread: real-time priority measured no faster in the benchmark
/// (`haptics-bench hid-race`), and it would slow other programs' threads for nothing.
///
/// ## Power
///
/// - `wake` opens the node (`hid_open_path`) and, on the first wake of the open device, runs
///   ``ControllerSetup`` on the calling thread (later wakes reuse its result: the controller keeps
///   its set-up while connected), then hands the handle to the writer; the first frame after it is
///   one write, spaced from the previous session's last write too. Its duration is recorded as the
///   controller's measured wake latency.
/// - `sleep` asks for all-off and then closes the node: the writer sends the off report (unless the
///   last report already was off) and closes. Idle therefore holds no file descriptor: the
///   controller is silent, USB can autosuspend, and an idle process never owns a stale handle across
///   an unplug. The cost is a re-open (and, on a Switch Pro, its set-up) on the next wake, which
///   `prepare()` hides. A wake arriving before the writer closed simply keeps the node open.
/// - `close` does the same as `sleep`, then ends the writer thread and waits for it.
///
/// ## Abnormal ends
///
/// While the node is open, the session is registered with the stop guard (`haptics_stop_guard.h`)
/// with the family's motors-off report for the *next* counter value (the writer replaces it after
/// every report it writes, inside the guard's write section), so a fatal signal, an exit without
/// `close`, or (through the guard's supervisor) a SIGKILL still ends with motors off, a report the
/// controller takes as new. The session leaves the guard before its node is closed.
final class HIDGamepad: DeviceDriver {
    /// The controller as discovered.
    let gamepad: DiscoveredGamepad
    private let backend: HIDBackend
    private let shared: Guarded<WriterState>
    private let writer: PosixThread

    /// An open handle, what the set-up chose for it, and its stop-guard registration.
    final class Session: Sendable {
        let handle: HIDHandle
        let encoder: ReportEncoder
        /// The stop-guard slot holding the motors-off report.
        let guardSlot: Int32
        private let closed = Atomic<Bool>(false)

        init(handle: HIDHandle, encoder: ReportEncoder, guardSlot: Int32) {
            self.handle = handle
            self.encoder = encoder
            self.guardSlot = guardSlot
        }

        /// Leaves the stop guard, then closes the node. Once only.
        func close() {
            guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
            haptics_stop_guard_unregister(guardSlot)
            handle.close()
        }

        /// Registers `gamepad`'s motors-off report with counter `sequence` (the next report's).
        static func registerStop(_ gamepad: DiscoveredGamepad, encoder: ReportEncoder, sequence: UInt8) throws(BackendFailure) -> Int32 {
            let slot = haptics_stop_guard_begin(gamepad.id)
            guard slot >= 0 else {
                throw BackendFailure(code: -slot, "\(gamepad.id): cannot register the motors-off report with the stop guard: \(String(cString: strerror(-slot)))")
            }
            var result = encoder.report(.off, sequence: sequence).withUnsafeBufferPointer {
                haptics_stop_guard_add_report(slot, gamepad.path, $0.baseAddress!, $0.count)
            }
            if result == 0 { result = haptics_stop_guard_arm(slot, 0) }
            guard result == 0 else {
                haptics_stop_guard_unregister(slot)
                throw BackendFailure(
                    code: -result, "\(gamepad.id): cannot register the motors-off report for \(gamepad.path) with the stop guard: \(String(cString: strerror(-result)))")
            }
            return slot
        }
    }

    /// Everything the host's calls and the writer share, behind one lock.
    struct WriterState {
        /// The transport discipline.
        var schedule: WriteSchedule
        /// The open handle while awake; `nil` asleep.
        var session: Session?
        /// The writer is closing a session outside the lock.
        var closingInFlight = false
        /// The sequence counter (every report written advances it, set-up reports included).
        var sequence: UInt8 = 0
        /// Set once the controller is gone: every later call fails with it.
        var lost: BackendFailure?
        /// A write failure the host has not been told yet.
        var pendingFailure: BackendFailure?
        /// `close` was called: the writer ends once the session is closed.
        var terminate = false
        /// The encoder the first wake's set-up chose; later wakes reuse it and skip the set-up.
        var encoder: ReportEncoder?
    }

    /// What the writer does after deciding, outside the lock.
    private enum Step {
        case write(Session, RumbleState, UInt8)
        case close(Session)
        case exit
    }

    init(gamepad: DiscoveredGamepad, backend: HIDBackend) throws(BackendFailure) {
        self.gamepad = gamepad
        self.backend = backend
        let shared = Guarded(WriterState(schedule: Self.schedule(for: gamepad, lastWrite: nil)))
        self.shared = shared
        let id = gamepad.id, path = gamepad.path
        let snapshot = gamepad
        do throws(ThreadStartError) {
            writer = try PosixThread.start(name: "haptics-hid-wr") {
                Self.writerLoop(shared: shared, gamepad: snapshot, label: "\(id) at \(path)")
            }
        } catch {
            throw BackendFailure(error)
        }
    }

    static func schedule(for gamepad: DiscoveredGamepad, lastWrite: UInt64?) -> WriteSchedule {
        WriteSchedule(
            minimumInterval: gamepad.minimumInterval,
            refreshInterval: gamepad.family.refreshInterval(for: gamepad.transport).map(Monotonic.nanoseconds),
            lastWrite: lastWrite)
    }

    // MARK: The contract

    func wake() throws(BackendFailure) {
        let started = Monotonic.now()
        typealias Admission = (sequence: UInt8, encoder: ReportEncoder?, lastWrite: UInt64?)
        let admitted: Result<Admission?, BackendFailure> = shared.wait { state in
            if let lost = state.lost { return .done(.failure(lost)) }
            state.pendingFailure = nil
            if state.session != nil {
                state.schedule.cancelClosing()
                return .done(.success(nil))
            }
            guard state.closingInFlight else {
                return .done(.success((state.sequence, state.encoder, state.schedule.lastWrite)))
            }
            guard Monotonic.now() < started + 1_000_000_000 else {
                return .done(
                    .failure(
                        BackendFailure(
                            code: EBUSY,
                            "\(gamepad.id): the last write to \(gamepad.path) has been blocked for over 1 s; unplug and replug the controller")))
            }
            return .sleepUntil(started + 1_000_000_000)
        }
        guard let admission = try admitted.get() else { return }  // still open: nothing to do
        let sequence = admission.sequence
        guard Discovery.stillPresent(gamepad) else {
            throw markLost("\(gamepad.id): \(gamepad.path) no longer belongs to this controller (unplugged?)")
        }
        let handle: HIDHandle
        switch HIDHandle.open(path: gamepad.path) {
        case .success(let opened): handle = opened
        case .failure(let error):
            let failure = backend.openFailure(gamepad, errno: error.errno, detail: error.message)
            if failure.code == ENODEV { throw markLost(failure.message) }
            throw failure
        }
        let outcome: ControllerSetup.Outcome
        do {
            outcome = try ControllerSetup.run(
                handle: handle, gamepad: gamepad, sequence: sequence, previous: admission.encoder, lastWrite: admission.lastWrite
            ) { backend.services.log($0, $1) }
        } catch {
            handle.close()
            if error.code == ENODEV || !Discovery.stillPresent(gamepad) { throw markLost(error.message) }
            throw error
        }
        let next = sequence &+ UInt8(truncatingIfNeeded: outcome.reportsWritten)
        let guardSlot: Int32
        do {
            guardSlot = try Session.registerStop(gamepad, encoder: outcome.encoder, sequence: next)
        } catch {
            handle.close()
            throw error
        }
        backend.logStopGuardWarning()
        // No broadcast: a fresh session is at rest (nothing to write, nothing to refresh), and
        // waking the writer for nothing would only compete with the trigger that follows.
        // The spacing runs on across sessions: the first report keeps it from the last write of the
        // previous session (its off report) as well as from the set-up.
        shared.locked { state in
            state.session = Session(handle: handle, encoder: outcome.encoder, guardSlot: guardSlot)
            state.encoder = outcome.encoder
            state.schedule = Self.schedule(for: gamepad, lastWrite: outcome.lastPacedWrite ?? admission.lastWrite)
            state.sequence = next
        }
        backend.recordWake(of: gamepad, nanoseconds: Monotonic.now() - started)
    }

    func sleep() throws(BackendFailure) {
        try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            if state.session != nil { state.schedule.beginClosing() }
        }
        shared.broadcast()
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        let rumble = Self.rumbleState(frame, channelCount: gamepad.family.channels.count)
        try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            if let failure = state.pendingFailure {
                state.pendingFailure = nil
                throw failure
            }
            guard state.session != nil, !state.schedule.isClosing else {
                throw BackendFailure(code: EINVAL, "\(gamepad.id): submit while asleep; wake the device first")
            }
            state.schedule.request(rumble)
        }
        shared.broadcast()
    }

    func stop() throws(BackendFailure) {
        try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            if state.session != nil { state.schedule.request(.off) }
            if let failure = state.pendingFailure {
                state.pendingFailure = nil
                throw failure
            }
        }
        shared.broadcast()
    }

    func close() {
        shared.locked { state in
            if state.session != nil { state.schedule.beginClosing() }
            state.terminate = true
        }
        shared.broadcast()
        writer.join()
        backend.closed(self)
    }

    /// Marks the controller gone (the backend saw its node disappear, or a write failed with
    /// ENODEV): the writer closes the handle without writing, and every later call fails.
    @discardableResult
    func markLost(_ message: String) -> BackendFailure {
        let failure = BackendFailure(code: ENODEV, message)
        let first = shared.locked { state -> BackendFailure in
            if let lost = state.lost { return lost }
            state.lost = failure
            return failure
        }
        shared.broadcast()
        return first
    }

    /// The rumble state a frame asks for: channel 0 strong, 1 weak, 2 left trigger, 3 right trigger
    /// (where the family has them); a frequency of 0 means the channel's default.
    static func rumbleState(_ frame: FrameView, channelCount: Int) -> RumbleState {
        var state = RumbleState()
        let count = min(frame.channelCount, channelCount)
        func drive(_ index: Int) -> (amplitude: Double, frequency: Double?) {
            guard index < count else { return (0, nil) }
            let raw = frame[index]
            return (Double(raw.amplitude), raw.frequency > 0 ? Double(raw.frequency) : nil)
        }
        let strong = drive(0), weak = drive(1)
        state.strong = strong.amplitude
        state.weak = weak.amplitude
        if let frequency = strong.frequency { state.strongFrequency = frequency }
        if let frequency = weak.frequency { state.weakFrequency = frequency }
        if channelCount >= 4 {
            state.leftTrigger = drive(2).amplitude
            state.rightTrigger = drive(3).amplitude
        }
        return state
    }

    // MARK: The writer thread

    private static func writerLoop(shared: Guarded<WriterState>, gamepad: DiscoveredGamepad, label: String) {
        // The writer puts every frame on the wire: it must run the moment a frame is handed over, not
        // when the fair scheduler next lets it preempt the thread that submitted. It outranks the
        // engine's scheduler thread (priority 20). Without the privilege it stays a normal thread.
        PosixThread.requestRealtimeForCurrentThread(priority: 21)
        // It writes to the controller: the stop guard's handler must run here even on a stack overflow.
        haptics_stop_guard_prepare_thread()
        while true {
            let step = shared.wait { state -> Guarded<WriterState>.Decision<Step> in
                guard let session = state.session else { return state.terminate ? .done(.exit) : .sleep }
                if state.lost != nil {
                    state.session = nil
                    state.closingInFlight = true
                    return .done(.close(session))
                }
                switch state.schedule.next(now: Monotonic.now()) {
                case .write(let rumble):
                    let sequence = state.sequence
                    state.sequence &+= 1
                    return .done(.write(session, rumble, sequence))
                case .wait(let deadline):
                    return .sleepUntil(deadline)
                case .idle:
                    return .sleep
                case .close:
                    state.session = nil
                    state.closingInFlight = true
                    return .done(.close(session))
                }
            }
            switch step {
            case .exit:
                return
            case .close(let session):
                session.close()
                shared.locked { $0.closingInFlight = false }
                shared.broadcast()
            case .write(let session, let rumble, let sequence):
                let result = write(rumble, sequence: sequence, to: session)
                let finished = Monotonic.now()
                var failure: BackendFailure?
                var gone = false
                if case .failure(let error) = result {
                    gone = error.errno == ENODEV || error.errno == ENXIO || !Discovery.stillPresent(gamepad)
                    failure =
                        gone
                        ? BackendFailure(code: ENODEV, "\(label): the controller disappeared while writing (\(error.message))")
                        : BackendFailure(code: error.errno == 0 ? EIO : error.errno, "\(label): rumble write failed: \(error.message)")
                }
                shared.locked { state in
                    state.schedule.wrote(rumble, at: finished, succeeded: failure == nil)
                    if gone, state.lost == nil { state.lost = failure }
                    if !gone, let failure { state.pendingFailure = failure }
                }
                shared.broadcast()
            }
        }
    }

    /// Writes `rumble` with counter `sequence`, then registers the motors-off report with the next
    /// counter, both inside the stop guard's write section (its handler never interleaves with them,
    /// and once the process is stopping nothing is written).
    private static func write(_ rumble: RumbleState, sequence: UInt8, to session: Session) -> Result<Void, HIDIOError> {
        guard haptics_stop_guard_enter(session.guardSlot) == 0 else {
            return .failure(HIDIOError(errno: ESHUTDOWN, message: "the process is stopping (a fatal signal or exit); the motors were stopped"))
        }
        defer { haptics_stop_guard_leave(session.guardSlot) }
        let result = session.handle.write(session.encoder.report(rumble, sequence: sequence))
        _ = session.encoder.report(.off, sequence: sequence &+ 1).withUnsafeBufferPointer {
            haptics_stop_guard_set_report(session.guardSlot, $0.baseAddress!, $0.count)
        }
        return result
    }
}
