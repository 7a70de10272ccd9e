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
/// How a hidraw write behaves depends on the transport under it (`Docs/Architecture.md`, "The
/// plugin contract", gives the kernel's code paths):
/// - **USB**: usbhid sends an output report as a synchronous interrupt (or control) transfer, so
///   `hid_write` returns only once the controller took it, after up to one polling interval, and a
///   controller that stops answering holds it for the transfer's 5 s time-out.
/// - **Bluetooth** (hidp for Classic, uhid for HID over GATT through BlueZ): the report is appended
///   to a kernel queue and `hid_write` returns at once; the kernel's own thread sends it.
///
/// So `submit` and `stop` store the newest ``RumbleState`` in the shared state (a pthread mutex)
/// and then:
/// - over Bluetooth, when the spacing allows a write now and no write is in flight, write it on
///   the calling thread: a write that only queues costs less than waking a thread to make it;
/// - otherwise leave it to the writer thread. A submit therefore never waits for a USB transfer,
///   and a controller whose transfers block stalls neither the engine nor other controllers.
///
/// The writer thread applies ``WriteSchedule`` (coalescing to the newest state, per-family spacing
/// and refresh) and is the only thread that closes the handle. It sleeps on a ``DeadlineTimer``
/// armed for its next step; a thread that gives it an earlier one (a state to write now, the end
/// of the spacing, the refresh after a write made on the caller) re-arms the timer rather than
/// waking it, so the writer runs only when there is something to do. One write at a time is in
/// flight (``WriterState/writing``): whichever thread claims it under the lock takes the next
/// sequence number (Switch packet number, DualSense Bluetooth tag), so reports leave in counter
/// order.
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
final class HIDGamepad: DeviceDriver, LosableDevice {
    /// The controller as discovered.
    let gamepad: DiscoveredGamepad
    private let backend: HIDBackend
    private let writer: DeviceWorker<WriterState>
    private var shared: Guarded<WriterState> { writer.shared }

    /// An open handle, what the set-up chose for it, and its stop-guard registration.
    final class Session: Sendable {
        let handle: HIDHandle
        let encoder: RumbleEncoder
        /// The stop-guard slot holding the motors-off report.
        let guardSlot: Int32
        private let closed = Atomic<Bool>(false)
        /// The reports encoded last, by state and counter (the counter only where the report
        /// carries it): a trigger repeats its frame and the off report after it, which a family
        /// without a counter then writes from bytes it encoded before. Touched by the thread that
        /// holds the write in flight, so its lock is never contended.
        private let encoded = Mutex<[(state: RumbleState, sequence: UInt8, bytes: [UInt8])]>([])
        private static let encodedCapacity = 2
        /// The pad's transport where it has adaptive triggers (a DualSense), else nil.
        let triggerTransport: HIDTransport?
        /// Which triggers this session set to an effect other than off (right, left). Written by
        /// the thread that holds the write in flight.
        let triggersEngaged = Mutex(TriggerEngagement())

        init(handle: HIDHandle, encoder: RumbleEncoder, guardSlot: Int32, triggerTransport: HIDTransport?) {
            self.handle = handle
            self.encoder = encoder
            self.guardSlot = guardSlot
            self.triggerTransport = triggerTransport
        }

        /// Whether a trigger effect this session set is still engaged.
        var holdsTriggers: Bool { triggersEngaged.withLock { $0.any } }

        /// What the stop guard writes should the process die before the next report: motors off
        /// with counter `sequence`, and both triggers released while an effect of ours holds them.
        func stopReport(sequence: UInt8) -> [UInt8] {
            let off = report(.off, sequence: sequence)
            guard let triggerTransport, holdsTriggers else { return off }
            return DualSense.releasingTriggers(off, transport: triggerTransport)
        }

        /// The report for `state` with counter `sequence`, encoded once while they repeat.
        func report(_ state: RumbleState, sequence: UInt8) -> [UInt8] {
            let key = encoder.carriesSequence ? sequence : 0
            return encoded.withLock { cache in
                for entry in cache where entry.sequence == key && entry.state == state { return entry.bytes }
                let bytes = encoder.report(state, sequence: sequence)
                if cache.count == Self.encodedCapacity { cache.removeFirst() }
                cache.append((state, key, bytes))
                return bytes
            }
        }

        /// Leaves the stop guard, then closes the node. Once only.
        func close() {
            guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
            haptics_stop_guard_unregister(guardSlot)
            handle.close()
        }

        /// Registers `gamepad`'s motors-off report with counter `sequence` (the next report's).
        static func registerStop(_ gamepad: DiscoveredGamepad, encoder: RumbleEncoder, sequence: UInt8) throws(BackendFailure) -> Int32 {
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
    struct WriterState: WorkerState {
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
        var encoder: RumbleEncoder?
        /// A write is in flight (on the writer thread or a caller's): no other starts, and the
        /// handle stays open, until it is recorded.
        var writing = false
        /// The timer the writer thread sleeps on.
        let timer: DeadlineTimer
        /// What the writer's timer is armed for, in `CLOCK_MONOTONIC` nanoseconds: `.max` while it
        /// sleeps with nothing to do, 0 while it is awake (it looks at the state again before it
        /// sleeps).
        var writerWakesAt: UInt64 = 0

        /// What the writer thread has to do at `now` (nanoseconds).
        func pending(now: UInt64) -> Pending {
            if writing { return .nothing }
            guard let session else { return terminate ? .exit : .nothing }
            if lost != nil { return .close(session) }
            switch schedule.next(now: now) {
            case .write(let rumble): return .write(session, rumble)
            case .wait(let deadline): return .waitUntil(deadline)
            case .idle: return .nothing
            case .close: return .close(session)
            }
        }

        /// Brings the writer's timer forward to when its next step is due, if it would sleep past
        /// that: one `timerfd_settime`, and the writer stays asleep until then (a refresh seconds
        /// away wakes nobody now).
        mutating func wakeWriter(now: UInt64) {
            let due: UInt64
            switch pending(now: now) {
            case .nothing: return
            case .waitUntil(let deadline): due = deadline
            case .write, .close, .exit: due = now
            }
            guard due < writerWakesAt else { return }
            writerWakesAt = due
            timer.arm(at: due)
        }

        /// A lost controller: the writer, asleep on its timer, closes the handle now.
        mutating func workerMustLook(now: UInt64) { wakeWriter(now: now) }

        /// Marks a write in flight and takes its sequence number (the counter moves on).
        mutating func beginWrite() -> UInt8 {
            writing = true
            defer { sequence &+= 1 }
            return sequence
        }

        /// Records a claimed write of `rumble` that finished at `time` (nanoseconds). A controller
        /// found gone is marked lost; any other failure is returned for the caller to report.
        mutating func recordWrite(_ rumble: RumbleState, at time: UInt64, outcome: WriteOutcome) -> BackendFailure? {
            writing = false
            if case .written = outcome {
                schedule.wrote(rumble, at: time, succeeded: true)
            } else {
                schedule.wrote(rumble, at: time, succeeded: false)
            }
            switch outcome {
            case .written: return nil
            case .gone(let failure):
                if lost == nil { lost = failure }
                return nil
            case .failed(let failure): return failure
            }
        }
    }

    /// What the writer thread has to do, as the shared state stands.
    enum Pending {
        case write(Session, RumbleState)
        case waitUntil(UInt64)
        case close(Session)
        case exit
        case nothing
    }

    /// How a write ended.
    enum WriteOutcome {
        case written
        /// The controller is gone (unplugged): every later call fails with this.
        case gone(BackendFailure)
        /// The write failed; the next request writes again.
        case failed(BackendFailure)
    }

    /// What the writer does after deciding, outside the lock.
    private enum Step {
        case write(Session, RumbleState, UInt8)
        case close(Session)
        case exit
    }

    /// Whether writes may be made on the calling thread: over Bluetooth, where `hid_write` only
    /// queues the report in the kernel.
    private let writesOnCaller: Bool

    init(gamepad: DiscoveredGamepad, backend: HIDBackend) throws(BackendFailure) {
        self.gamepad = gamepad
        self.backend = backend
        writesOnCaller = gamepad.transport == .bluetooth
        let timer = DeadlineTimer()
        let snapshot = gamepad
        writer = try DeviceWorker(name: "haptics-hid-wr", initial: WriterState(schedule: Self.schedule(for: gamepad, lastWrite: nil), timer: timer)) { shared in
            Self.writerLoop(shared: shared, timer: timer, gamepad: snapshot)
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
        typealias Admission = (sequence: UInt8, encoder: RumbleEncoder?, lastWrite: UInt64?)
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
        // The writer is not woken: a fresh session is at rest (nothing to write, nothing to
        // refresh), and waking it for nothing would only compete with the trigger that follows.
        // The spacing runs on across sessions: the first report keeps it from the last write of the
        // previous session (its off report) as well as from the set-up.
        shared.locked { state in
            state.session = Session(
                handle: handle, encoder: outcome.encoder, guardSlot: guardSlot, triggerTransport: Self.hasAdaptiveTriggers(gamepad) ? gamepad.transport : nil)
            state.encoder = outcome.encoder
            state.schedule = Self.schedule(for: gamepad, lastWrite: outcome.lastPacedWrite ?? admission.lastWrite)
            state.sequence = next
        }
        backend.recordWake(of: gamepad, nanoseconds: Monotonic.now() - started)
    }

    func sleep() throws(BackendFailure) {
        releaseTriggers()
        try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            if state.session != nil { state.schedule.beginClosing() }
            state.wakeWriter(now: Monotonic.now())
        }
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        let rumble = Self.rumbleState(frame, channelCount: gamepad.family.channels.count)
        let claim = try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            if let failure = state.pendingFailure {
                state.pendingFailure = nil
                throw failure
            }
            guard state.session != nil, !state.schedule.isClosing else {
                throw BackendFailure(code: EINVAL, "\(gamepad.id): submit while asleep; wake the device first")
            }
            state.schedule.request(rumble)
            return handOver(&state)
        }
        try writeClaimed(claim)
    }

    func stop() throws(BackendFailure) {
        let claim = try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            if state.session != nil { state.schedule.request(.off) }
            let claim = handOver(&state)
            if let failure = state.pendingFailure {
                state.pendingFailure = nil
                throw failure
            }
            return claim
        }
        try writeClaimed(claim)
    }

    /// Under the lock, after a request: claims the write for the calling thread where it may make
    /// it, or else brings the writer's wake forward if it sleeps past the moment the request needs it.
    private func handOver(_ state: inout WriterState) -> (session: Session, rumble: RumbleState, sequence: UInt8)? {
        let now = Monotonic.now()
        if writesOnCaller, case .write(let session, let rumble) = state.pending(now: now) {
            return (session, rumble, state.beginWrite())
        }
        state.wakeWriter(now: now)
        return nil
    }

    /// Makes a write claimed on this thread, records it, and arms the writer for what follows (a
    /// refresh, the next state after the spacing, closing). A failed write throws here.
    private func writeClaimed(_ claim: (session: Session, rumble: RumbleState, sequence: UInt8)?) throws(BackendFailure) {
        guard let claim else { return }
        let outcome = Self.write(claim.rumble, sequence: claim.sequence, to: claim.session, gamepad: gamepad)
        let finished = Monotonic.now()
        let failure = shared.locked { state -> BackendFailure? in
            let failure = state.recordWrite(claim.rumble, at: finished, outcome: outcome)
            state.wakeWriter(now: finished)
            if case .gone = outcome { return state.lost }
            return failure
        }
        if let failure { throw failure }
    }

    func close() {
        releaseTriggers()
        writer.finish { state in
            if state.session != nil { state.schedule.beginClosing() }
            state.terminate = true
            state.wakeWriter(now: Monotonic.now())
        }
        backend.registry.closed(self)
    }

    // MARK: Adaptive triggers

    /// Whether the pad has adaptive triggers: the DualSense and the DualSense Edge.
    static func hasAdaptiveTriggers(_ gamepad: DiscoveredGamepad) -> Bool { gamepad.family is DualSense.Type }

    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(BackendFailure) {
        guard Self.hasAdaptiveTriggers(gamepad) else {
            throw BackendFailure(code: EOPNOTSUPP, "\(gamepad.id): a \(gamepad.model.name) has no adaptive triggers")
        }
        // Checked before anything is written: an effect the pad cannot play changes nothing.
        let blocks: DualSense.TriggerBlocks
        do throws(AdaptiveTriggerError) { blocks = try DualSense.TriggerBlocks(right: right, left: left) } catch {
            throw BackendFailure(code: EINVAL, "\(gamepad.id): \(error)")
        }
        try writeTriggers(blocks)
    }

    /// Sets both triggers free if this session holds either; a failure is logged (the device is
    /// going to sleep or closing, and the stop guard's report still releases them on exit).
    private func releaseTriggers() {
        guard shared.locked({ $0.session?.holdsTriggers ?? false }) else { return }
        do throws(BackendFailure) { try writeTriggers(.released) } catch {
            backend.services.log(HAPTICS_LOG_WARNING, "\(gamepad.id): cannot release the adaptive triggers: \(error.message)")
        }
    }

    /// Writes a trigger report on the calling thread, once no other write is in flight, and moves
    /// the stop guard's report to match (released triggers, or the engaged ones to release).
    private func writeTriggers(_ blocks: DualSense.TriggerBlocks) throws(BackendFailure) {
        let started = Monotonic.now()
        let claimed: Result<(Session, UInt8), BackendFailure> = shared.wait { state in
            if let lost = state.lost { return .done(.failure(lost)) }
            guard let session = state.session, !state.schedule.isClosing else {
                return .done(.failure(BackendFailure(code: EINVAL, "\(gamepad.id): trigger effect while asleep; wake the device first")))
            }
            guard state.writing else { return .done(.success((session, state.beginWrite()))) }
            let now = Monotonic.now()
            guard now < started + 1_000_000_000 else {
                return .done(
                    .failure(BackendFailure(code: EBUSY, "\(gamepad.id): a write to \(gamepad.path) has been blocked for over 1 s; unplug and replug the controller")))
            }
            return .sleepUntil(now + 1_000_000)  // the write in flight is a report's transfer at most
        }
        let (session, sequence) = try claimed.get()
        var result: Result<Void, HIDIOError>
        if haptics_stop_guard_enter(session.guardSlot) == 0 {
            result = session.handle.write(blocks.report(transport: gamepad.transport, sequence: sequence))
            if case .success = result { session.triggersEngaged.withLock { $0 = blocks.after($0) } }
            _ = session.stopReport(sequence: sequence &+ 1).withUnsafeBufferPointer {
                haptics_stop_guard_set_report(session.guardSlot, $0.baseAddress!, $0.count)
            }
            haptics_stop_guard_leave(session.guardSlot)
        } else {
            result = .failure(HIDIOError(errno: ESHUTDOWN, message: "the process is stopping (a fatal signal or exit)"))
        }
        let gone: Bool
        if case .failure(let error) = result {
            gone = error.errno == ENODEV || error.errno == ENXIO || !Discovery.stillPresent(gamepad)
        } else {
            gone = false
        }
        shared.locked { state in
            state.writing = false
            state.wakeWriter(now: Monotonic.now())
        }
        guard case .failure(let error) = result else { return }
        let message = "\(gamepad.id) at \(gamepad.path): trigger write failed: \(error.message)"
        if gone { throw markLost(message) }
        throw BackendFailure(code: error.errno == 0 ? EIO : error.errno, message)
    }

    /// Marks the controller gone (the backend saw its node disappear, or a write failed with
    /// ENODEV): the writer closes the handle without writing, and every later call fails.
    @discardableResult
    func markLost(_ message: String) -> BackendFailure { writer.markLost(message) }

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

    private static func writerLoop(shared: Guarded<WriterState>, timer: DeadlineTimer, gamepad: DiscoveredGamepad) {
        // The writer puts frames on the wire: it must run the moment a frame is handed over, not
        // when the fair scheduler next lets it preempt the thread that submitted. It outranks the
        // engine's scheduler thread (priority 20). Without the privilege it stays a normal thread.
        PosixThread.requestRealtimeForCurrentThread(priority: 21)
        // It writes to the controller: the stop guard's handler must run here even on a stack overflow.
        haptics_stop_guard_prepare_thread()
        while true {
            let step = shared.locked { state -> Step? in
                let now = Monotonic.now()
                switch state.pending(now: now) {
                case .nothing:
                    state.writerWakesAt = .max
                    state.timer.arm(at: .max)
                    return nil
                case .waitUntil(let deadline):
                    state.writerWakesAt = deadline
                    state.timer.arm(at: deadline)
                    return nil
                case .exit:
                    state.writerWakesAt = 0
                    return .exit
                case .close(let session):
                    state.writerWakesAt = 0
                    state.session = nil
                    state.closingInFlight = true
                    return .close(session)
                case .write(let session, let rumble):
                    state.writerWakesAt = 0
                    return .write(session, rumble, state.beginWrite())
                }
            }
            switch step {
            case nil:
                timer.wait()
            case .exit:
                return
            case .close(let session):
                session.close()
                shared.locked { $0.closingInFlight = false }
                shared.broadcast()  // a wake waiting for this close goes on
            case .write(let session, let rumble, let sequence):
                let outcome = write(rumble, sequence: sequence, to: session, gamepad: gamepad)
                let finished = Monotonic.now()
                shared.locked { state in
                    if let failure = state.recordWrite(rumble, at: finished, outcome: outcome) { state.pendingFailure = failure }
                }
            }
        }
    }

    /// Writes `rumble` with counter `sequence`, then registers the motors-off report with the next
    /// counter, both inside the stop guard's write section (its handler never interleaves with them,
    /// and once the process is stopping nothing is written).
    private static func write(_ rumble: RumbleState, sequence: UInt8, to session: Session, gamepad: DiscoveredGamepad) -> WriteOutcome {
        let result: Result<Void, HIDIOError>
        if haptics_stop_guard_enter(session.guardSlot) == 0 {
            result = session.handle.write(session.report(rumble, sequence: sequence))
            _ = session.stopReport(sequence: sequence &+ 1).withUnsafeBufferPointer {
                haptics_stop_guard_set_report(session.guardSlot, $0.baseAddress!, $0.count)
            }
            haptics_stop_guard_leave(session.guardSlot)
        } else {
            result = .failure(HIDIOError(errno: ESHUTDOWN, message: "the process is stopping (a fatal signal or exit); the motors were stopped"))
        }
        guard case .failure(let error) = result else { return .written }
        let label = "\(gamepad.id) at \(gamepad.path)"
        if error.errno == ENODEV || error.errno == ENXIO || !Discovery.stillPresent(gamepad) {
            return .gone(BackendFailure(code: ENODEV, "\(label): the controller disappeared while writing (\(error.message))"))
        }
        return .failed(BackendFailure(code: error.errno == 0 ? EIO : error.errno, "\(label): rumble write failed: \(error.message)"))
    }
}
