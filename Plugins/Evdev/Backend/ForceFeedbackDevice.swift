import CEvdevShim
import CHapticsABI
import EvdevEffects
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// One opened force-feedback device: one effect, kept uploaded while the device is awake, and one
/// worker thread that refreshes held drives and performs what may not run on the host's thread.
///
/// ## Power
///
/// - `wake` opens the event node (`O_RDWR | O_CLOEXEC | O_NONBLOCK`), checks the node still belongs
///   to the device that was listed and offers the effect type chosen at listing (`EVIOCGBIT`), asks
///   the kernel to queue it no input events (`EVIOCSMASK`: the backend never reads them), and
///   uploads the effect, which claims an effect slot: with the parameters it last played (an
///   uploaded effect is silent until played), or every magnitude zero the first time. **Prepared**
///   therefore means: descriptor open and effect uploaded; a trigger costs one `EV_FF` write, plus
///   one `EVIOCSFF` update in place when its magnitudes differ from the uploaded ones (repeating the
///   last feedback, the common case, needs none).
/// - `sleep` stops the effect, erases it and closes the descriptor: an idle process holds no node, so
///   a USB pad may autosuspend and the slot is free for other programs.
/// - `close` does the same and ends the worker.
///
/// ## Rendering
///
/// A frame becomes ``EvdevEffects/EffectParameters`` (``EvdevEffects/EffectRenderer``). A silent
/// frame writes a stop (`EV_FF` value 0), keeping the effect uploaded. Otherwise, if the parameters
/// differ from what the kernel holds, the effect is updated in place (`EVIOCSFF` with its id, never
/// erased and created again), then played (`EV_FF` value 1): the play makes ff-memless apply the new
/// magnitudes at once instead of at its next timer tick, and restarts `replay.length`.
///
/// - An update refused with `EINVAL` or `EACCES` means the kernel no longer holds the effect for
///   this descriptor (dropped); it is erased (if anything is left) and created again (`id = -1`), as
///   SDL does.
/// - An update refused with `EBUSY` (da7280 takes no upload while playing) is retried once after a stop.
/// - `FF_GAIN` is never written: it is device-wide state that outlives every client, the user's (or
///   their desktop's) setting.
///
/// ## Threads
///
/// The host's calls perform the system calls themselves, under the device's lock, when the device is
/// idle and the call cannot wait on a user-space program: every in-kernel driver takes an upload or a
/// play under a spin lock and queues its own work, so they return in microseconds and a trigger goes
/// out without a thread hand-over. A device driven by a user-space program (uinput) answers uploads
/// through that program, which the kernel waits for up to 30 s, and holds the input core's lock on
/// the node meanwhile: frames that need an upload there, and every frame while the worker is busy,
/// are handed to the worker through a *delay line* (below). The worker also plays a held effect again every
/// ``EvdevEffects/ReplayPolicy/refreshMilliseconds`` (see ``EvdevEffects/ReplayPolicy``), and closes
/// the node of a device that was lost. While the device is awake it looks every refresh interval
/// whether a drive is held, so a trigger made on the host's thread does not wake it (its wake-up
/// would compete with the driver for the CPU): only the first play after a wake tells it, after
/// the play went out; asleep, it sleeps until then.
///
/// ## The delay line
///
/// A program answers uploads when it gets the CPU, which may be later than a tap lasts (a 20 ms tap,
/// a busy one-core board). Keeping only the newest state would then lose the tap: asked for and
/// taken back before the worker could play it. So the worker plays the frames handed to it in the
/// order they came, each held as long as the host held it, starting when the driver has taken the
/// one before: late by the driver's answer time, but whole. The line runs until it plays silence
/// (then the host's frames go out directly again); a `sleep` or `stop` that comes while it runs
/// joins it, so the device stops and closes once the line has played out. (An in-kernel driver
/// answers at once: its frames go out directly, or, while the worker is busy, newest state wins.)
/// A backlog older than ``maximumLag`` collapses to its newest state, so a driver that stalls is
/// not replayed from the past. `close` discards the line: it stops at once.
final class ForceFeedbackDevice: DeviceDriver, LosableDevice {
    /// How far behind the host the delay line may fall before it keeps only its newest state, ns.
    static let maximumLag: UInt64 = 250_000_000

    /// The device as discovered.
    let input: DiscoveredInput
    private let backend: EvdevBackend
    private let renderer: EffectRenderer
    private let worker: DeviceWorker<State>
    private var shared: Guarded<State> { worker.shared }

    /// Everything the host's calls and the worker share, behind one lock.
    struct State: WorkerState {
        /// The open descriptor while awake, -1 asleep.
        var fd: Int32 = -1
        /// The kernel's id of the effect, -1 when none is uploaded.
        var effectID: Int32 = -1
        /// What the kernel holds for `effectID`.
        var uploaded: EffectParameters?
        /// What the host last asked for; nil: stopped.
        var desired: EffectParameters?
        /// A play was written and no stop since.
        var playing = false
        /// When the effect was last played (monotonic nanoseconds).
        var lastPlay: UInt64 = 0
        /// The worker is doing I/O outside the lock: nobody else touches the descriptor.
        var busy = false
        /// `sleep` or `close` came while the worker was busy: the worker stops, erases and closes.
        var closeRequested = false
        /// `close` was called: the worker ends once the descriptor is closed.
        var terminate = false
        /// Set once the device is gone: every later call fails with it.
        var lost: BackendFailure?
        /// A failure of the worker the host has not been told yet.
        var pendingFailure: BackendFailure?
        /// The worker looks at the device at least every refresh interval (it does while the device is
        /// awake, once it has been told so).
        var workerPolling = false
        /// Effect slots the device has (`EVIOCGEFFECTS`), for messages.
        var slots: Int32 = 0
        /// What the effect last played, kept across sleeps: the next wake uploads it (silent until
        /// played), so repeating the last trigger needs only a play.
        var lastPlayed: EffectParameters?
        /// Frames handed to the worker, in the host's order, with when the host asked (monotonic ns);
        /// nil parameters: stop. See "The delay line".
        var line: [(parameters: EffectParameters?, at: UInt64)] = []
        /// While the delay line runs: when the worker began playing its current state, and when the
        /// host had asked for it (ns). The next state is due the same time later. Nil: not running.
        var lineClock: (playedAt: UInt64, askedAt: UInt64)?

        /// Whether a frame from the host must join the delay line instead of going out directly.
        var lineRuns: Bool { busy || !line.isEmpty || lineClock != nil }

        /// Hands `parameters` (nil: stop) to the worker's delay line.
        mutating func enqueue(_ parameters: EffectParameters?, at now: UInt64) {
            // Silence twice in a row says nothing new.
            if parameters == nil, (line.last.map { $0.parameters == nil } ?? (desired == nil)) { return }
            line.append((parameters, now))
        }

        /// Whether the kernel's state differs from what the host asked for.
        var needsWork: Bool {
            guard fd >= 0 else { return false }
            if let desired { return uploaded != desired || !playing }
            return playing
        }
    }

    /// What the worker does outside the lock.
    enum Step {
        /// `askedAt`: when the host asked for `desired`, if it came through the delay line.
        case reconcile(fd: Int32, id: Int32, uploaded: EffectParameters?, desired: EffectParameters?, playing: Bool, askedAt: UInt64?)
        case refresh(fd: Int32, id: Int32)
        case shutdown(fd: Int32, id: Int32, playing: Bool, erase: Bool)
        case exit
    }

    init(input: DiscoveredInput, backend: EvdevBackend) throws(BackendFailure) {
        self.input = input
        self.backend = backend
        self.renderer = input.renderer
        let snapshot = input
        worker = try DeviceWorker(name: "haptics-evdev", initial: State()) { shared in
            Self.workerLoop(shared: shared, input: snapshot)
        }
    }

    // MARK: The contract

    func wake() throws(BackendFailure) {
        let started = Monotonic.now()
        let deadline = started + 1_000_000_000
        // Wait for the worker to finish what it is doing (a close it was asked for), at most 1 s.
        let admitted: Result<Bool, BackendFailure> = shared.wait { state in
            if let lost = state.lost { return .done(.failure(lost)) }
            state.pendingFailure = nil
            if state.fd >= 0 {
                // Awake, or still open with a close the worker has not begun: cancel the close.
                state.closeRequested = false
                return .done(.success(false))
            }
            if state.busy {
                // The worker is closing the node: wait for it.
                guard Monotonic.now() < deadline else {
                    return .done(
                        .failure(
                            BackendFailure(
                                code: EBUSY,
                                "\(input.id): \(input.facts.eventNode) has not answered for over 1 s (its driver is stuck); unplug the device or restart its driver")))
                }
                return .sleepUntil(deadline)
            }
            return .done(.success(true))
        }
        guard try admitted.get() else { return }
        try shared.locked { (state) throws(BackendFailure) in
            guard state.fd < 0 else { return }
            try open(&state)
        }
        // The worker is told about the awake device by the first play (see `submit`), not here: a
        // wake-up now would compete for the CPU with the trigger that usually follows at once.
        EvdevBackend.wakeLatencies.record(input.id, nanoseconds: Monotonic.now() - started)
    }

    func sleep() throws(BackendFailure) {
        try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            guard state.fd >= 0 else { return }
            if input.driverIsUserSpace, state.lineRuns {
                // The worker stops and closes once the line has played out.
                state.enqueue(nil, at: Monotonic.now())
                state.closeRequested = true
            } else if state.busy {
                state.desired = nil
                state.closeRequested = true
            } else {
                state.desired = nil
                try shutdown(&state)
            }
        }
        shared.broadcast()
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        let wanted = renderer.parameters(
            channelCount: frame.channelCount, amplitude: { frame[$0].amplitude }, frequency: { frame[$0].frequency })
        let notify = try shared.locked { (state) throws(BackendFailure) -> Bool in
            if let lost = state.lost { throw lost }
            if let failure = state.pendingFailure {
                state.pendingFailure = nil
                throw failure
            }
            guard state.fd >= 0, !state.closeRequested else {
                throw BackendFailure(code: EINVAL, "\(input.id): submit while asleep; wake the device first")
            }
            let needsUpload = wanted != nil && wanted != state.uploaded
            if input.driverIsUserSpace, state.lineRuns || needsUpload {
                state.enqueue(wanted, at: Monotonic.now())
                return true  // the worker does it, through the delay line
            }
            state.desired = wanted
            // An in-kernel driver takes an update in microseconds: while the worker is busy (a
            // refresh), it applies the newest state right after.
            guard !state.busy else { return true }
            try reconcile(&state)
            // Once told, the worker checks an awake device's refresh by itself (see `workerLoop`):
            // waking it on every trigger would only compete with the driver for the CPU. The first
            // play after a wake tells it, after the play went out.
            return state.playing && !state.workerPolling
        }
        if notify { shared.broadcast() }
    }

    func stop() throws(BackendFailure) {
        let handedOver = try shared.locked { (state) throws(BackendFailure) -> Bool in
            if let lost = state.lost { throw lost }
            let lined = input.driverIsUserSpace && state.fd >= 0 && state.lineRuns
            let inline = state.fd >= 0 && !state.busy && !lined
            if lined {
                state.enqueue(nil, at: Monotonic.now())
            } else {
                state.desired = nil
                if inline { try reconcile(&state) }
            }
            if let failure = state.pendingFailure {
                state.pendingFailure = nil
                throw failure
            }
            return !inline
        }
        if handedOver { shared.broadcast() }
    }

    func close() {
        worker.finish { state in
            state.desired = nil
            state.line.removeAll()
            state.lineClock = nil
            state.terminate = true
            guard state.fd >= 0 else { return }
            if state.busy {
                state.closeRequested = true
            } else {
                try? shutdown(&state)
            }
        }
        backend.registry.closed(self)
    }

    /// Marks the device gone (its input device disappeared, or a call failed with ENODEV): the worker
    /// closes the descriptor without writing, and every later call fails.
    @discardableResult
    func markLost(_ message: String) -> BackendFailure { worker.markLost(message) }

    // MARK: Under the lock

    /// Opens the node and uploads the resting effect.
    private func open(_ state: inout State) throws(BackendFailure) {
        guard Discovery.stillPresent(input.facts) else {
            throw markLostLocked(&state, "\(input.id): \(input.facts.eventNode) no longer belongs to this device (unplugged?)")
        }
        let fd = haptics_evdev_open(input.facts.eventNode)
        guard fd >= 0 else {
            let failure = backend.openFailure(input, errno: -fd)
            if failure.code == ENODEV { throw markLostLocked(&state, failure.message) }
            throw failure
        }
        var succeeded = false
        defer { if !succeeded { Glibc.close(fd) } }
        var bits = [UInt8](repeating: 0, count: 16)
        let read = bits.withUnsafeMutableBufferPointer { haptics_evdev_ff_bits(fd, $0.baseAddress, $0.count) }
        guard read >= 0 else { throw failure("read the force-feedback capabilities (EVIOCGBIT) of", -read) }
        let offered = InputBitmap(bytes: bits)
        if let type = input.strategy.effectType, !offered.contains(type) {
            throw BackendFailure(
                code: EOPNOTSUPP,
                "\(input.id): \(input.facts.eventNode) no longer offers \(FF.name(type)) (it offers \(offered.codes.map(FF.name).joined(separator: ", "))); list the devices again")
        }
        state.slots = max(0, haptics_evdev_effect_slots(fd))
        // Best effort: kernels before 4.4 lack EVIOCSMASK, and then unread events are merely dropped.
        _ = haptics_evdev_mask_input(fd)
        guard let resting = state.lastPlayed ?? renderer.restingParameters else {
            throw BackendFailure(code: EOPNOTSUPP, "\(input.id): \(input.strategy.summary)")
        }
        let id = try upload(fd: fd, id: -1, resting, playing: false, state: &state)
        state.fd = fd
        state.effectID = id
        state.uploaded = resting
        state.desired = nil
        state.playing = false
        state.closeRequested = false
        succeeded = true
    }

    /// Brings the kernel's state to what the host asked for, on the calling thread.
    private func reconcile(_ state: inout State) throws(BackendFailure) {
        guard state.fd >= 0 else { return }
        do throws(BackendFailure) {
            if let desired = state.desired {
                if desired != state.uploaded {
                    state.effectID = try upload(fd: state.fd, id: state.effectID, desired, playing: state.playing, state: &state)
                    state.uploaded = desired
                }
                try play(fd: state.fd, id: state.effectID, count: 1, state: &state)
                state.playing = true
                state.lastPlay = Monotonic.now()
                state.lastPlayed = desired
            } else if state.playing {
                try play(fd: state.fd, id: state.effectID, count: 0, state: &state)
                state.playing = false
            }
        } catch {
            leaveStopped(&state)
            throw error
        }
    }

    /// Stops, erases and closes.
    private func shutdown(_ state: inout State) throws(BackendFailure) {
        guard state.fd >= 0 else { return }
        let fd = state.fd, id = state.effectID, playing = state.playing
        state.fd = -1
        state.effectID = -1
        state.uploaded = nil
        state.playing = false
        state.closeRequested = false
        let error = Self.shutdown(fd: fd, id: id, playing: playing, erase: state.lost == nil)
        if let error, state.lost == nil { throw failure("stop the effect on", error) }
    }

    /// After a failed call: ask for nothing, and stop the effect if the descriptor still works.
    private func leaveStopped(_ state: inout State) {
        state.desired = nil
        if state.fd >= 0, state.effectID >= 0, state.lost == nil {
            _ = haptics_evdev_play(state.fd, state.effectID, 0)
        }
        state.playing = false
    }

    private func markLostLocked(_ state: inout State, _ message: String) -> BackendFailure {
        if let lost = state.lost { return lost }
        let failure = BackendFailure(code: ENODEV, message)
        state.lost = failure
        return failure
    }

    /// Uploads `parameters` as effect `id` (-1: a new one) and returns the effect's id (see
    /// ``performUpload(fd:id:_:playing:)`` for what a refused update leads to).
    private func upload(fd: Int32, id: Int32, _ parameters: EffectParameters, playing: Bool, state: inout State) throws(BackendFailure) -> Int32 {
        let outcome = Self.performUpload(fd: fd, id: id, parameters, playing: playing)
        if !outcome.playing { state.playing = false }
        if outcome.recreated {
            backend.services.log(HAPTICS_LOG_DEBUG, "\(input.id): effect \(id) on \(input.facts.eventNode) was dropped by the kernel; created it again")
        }
        guard outcome.result >= 0 else {
            if outcome.result == -ENODEV { throw markLostLocked(&state, "\(input.id): \(input.facts.eventNode) disappeared while uploading an effect") }
            throw uploadFailure(parameters, errno: -outcome.result, slots: state.slots)
        }
        return outcome.result
    }

    /// The failure for an upload refused with `code`.
    private func uploadFailure(_ parameters: EffectParameters, errno code: Int32, slots: Int32) -> BackendFailure {
        if code == ENOSPC {
            return BackendFailure(
                code: EBUSY, "\(input.id): all \(slots) effect slots of \(input.facts.eventNode) are taken by other programs; close one of them")
        }
        return failure("upload \(parameters) to", code)
    }

    /// `EVIOCSFF` with the recoveries the type's discussion describes: an update refused with `EBUSY`
    /// while playing is retried after a stop; one refused with `EINVAL` or `EACCES` (the kernel no
    /// longer holds the effect for this descriptor) is erased and created anew. Returns the id or
    /// -errno, whether the effect may still be playing, and whether it was created again.
    static func performUpload(fd: Int32, id: Int32, _ parameters: EffectParameters, playing: Bool) -> (result: Int32, playing: Bool, recreated: Bool) {
        var raw = effect(parameters, id: id)
        var result = haptics_evdev_upload(fd, &raw)
        var playing = playing
        if result == -EBUSY, id >= 0, playing {
            _ = haptics_evdev_play(fd, id, 0)
            playing = false
            result = haptics_evdev_upload(fd, &raw)
        }
        var recreated = false
        if result == -EINVAL || result == -EACCES, id >= 0 {
            _ = haptics_evdev_erase(fd, id)
            playing = false
            raw.id = -1
            result = haptics_evdev_upload(fd, &raw)
            recreated = result >= 0
        }
        return (result, playing, recreated)
    }

    private func play(fd: Int32, id: Int32, count: Int32, state: inout State) throws(BackendFailure) {
        let result = haptics_evdev_play(fd, id, count)
        guard result == 0 else {
            if result == -ENODEV { throw markLostLocked(&state, "\(input.id): \(input.facts.eventNode) disappeared while playing") }
            throw failure(count > 0 ? "play the effect on" : "stop the effect on", -result)
        }
    }

    private func failure(_ what: String, _ code: Int32) -> BackendFailure {
        BackendFailure(code: code, "\(input.id): cannot \(what) \(input.facts.eventNode): \(String(cString: strerror(code)))")
    }
}
