import CHapticsABI
import HIDReports
import HapticsPluginKit
import HapticsStopGuard
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth DualSense's two voice coils as a waveform device: the host's samples (3,000 frames a
/// second, left and right) go out in output report 0x32, 32 frames a report, one report every
/// 10.67 ms (``DualSense/audioHapticsBluetoothReport(frames:counter:)``).
///
/// Listed beside the pad's rumble (``HIDGamepad``) with the same physical device and the coils'
/// preference (300, as the `alsa` backend lists a USB pad's coils), so the coils serve the pad and
/// its rumble, the firmware's emulation on the same coils, is shown behind them. `hid.dualsense-coils
/// = off` lists the rumble alone.
///
/// ## The report clock
///
/// While awake, the worker thread sends a report at every tick of its own clock (`CLOCK_MONOTONIC`,
/// ticks 32 / 3000 s apart, counted from the wake, so the cadence does not drift with the thread's
/// lateness), whatever is queued: the next 32 frames, and silence for what is missing (an underrun,
/// counted and reported to the host: a buffer is never repeated). The host writes into a queue of
/// ``bufferFrames`` and waits for room (`wait_samples`): the ticks pace it, as a sound card's clock
/// paces an ALSA stream. A thread more than one tick late starts the count again from now.
///
/// ## Power and safety
///
/// `wake` opens the node and switches the pad's rumble emulation off (a report 0x31 with every valid
/// flag clear, as over USB), then starts the ticks; `sleep` and `close` stop them and give the pad its
/// emulation back, motors off (and its triggers free, if an effect holds them). While awake, the
/// stop guard holds that report, so a death of the process does the same; the ticks end with the
/// process, so the coils fall silent.
final class DualSenseCoils: DeviceDriver, LosableDevice {
    /// The pad as discovered (its rumble listing's).
    let gamepad: DiscoveredGamepad
    private let backend: HIDBackend
    private let worker: DeviceWorker<State>
    private var shared: Guarded<State> { worker.shared }

    /// Frames the queue holds at most: three reports (32 ms).
    static let bufferFrames = 3 * DualSense.audioHapticsBluetoothFrames
    /// Nanoseconds between two reports, as a fraction: 32 frames × 10⁹ / 3000.
    static let tickNumerator: UInt64 = UInt64(DualSense.audioHapticsBluetoothFrames) * 1_000_000_000
    static let tickDenominator = UInt64(DualSense.audioHapticsBluetoothRate)

    /// The id of the coils of the pad whose rumble listing is `rumbleID`.
    static func id(for rumbleID: String) -> String { rumbleID + ":coils" }

    /// An open node and its stop-guard registration.
    final class Session: Sendable {
        let handle: HIDHandle
        let guardSlot: Int32
        init(handle: HIDHandle, guardSlot: Int32) {
            self.handle = handle
            self.guardSlot = guardSlot
        }
    }

    struct State: WorkerState {
        var lost: BackendFailure?
        var session: Session?
        /// Interleaved samples waiting for their report.
        var queue: [Float] = []
        /// The first tick's time and how many ticks have passed since.
        var start: UInt64 = 0
        var ticks: UInt64 = 0
        /// Packet 0x11's running counter, and report 0x31's sequence.
        var counter: UInt8 = 0
        var sequence: UInt8 = 0
        /// A write is in flight (the worker's report, or a call's 0x31).
        var writing = false
        /// Underruns since the host last asked, and whether samples have come since the wake.
        var underruns = 0
        var fed = false
        /// Which triggers hold an effect other than off (right, left).
        var triggers = TriggerEngagement()
        /// The ticks run (from the wake until the device starts to sleep).
        var ticking = false
        var terminate = false
        var failure: BackendFailure?

        /// When the next report is due.
        var due: UInt64 { start + ticks * DualSenseCoils.tickNumerator / DualSenseCoils.tickDenominator }
    }

    private let rumbleMode: DualSense.VibrationMode

    init(gamepad: DiscoveredGamepad, backend: HIDBackend) throws(BackendFailure) {
        self.gamepad = gamepad
        self.backend = backend
        rumbleMode = DualSense.vibrationMode(productID: gamepad.productID, updateVersion: nil)
        let snapshot = gamepad
        worker = try DeviceWorker(name: "haptics-hid-ds", initial: State()) { shared in Self.tick(shared: shared, gamepad: snapshot) }
    }

    /// The coils' description: two voice coils (the USB listing's band), the stream in the reports.
    static func spec(_ gamepad: DiscoveredGamepad) -> DeviceSpec {
        let coil = { (name: String) in
            ChannelSpec(name: name, actuator: HAPTICS_ACTUATOR_VOICE_COIL, amplitudeSteps: 256, frequencyRange: 20...400)
        }
        let tick = tickNumerator / tickDenominator
        var spec = DeviceSpec(
            id: id(for: gamepad.id), name: "\(gamepad.productID == DualSense.dualSenseEdgeProductID ? "DualSense Edge" : "DualSense") voice coils (Bluetooth)",
            actuator: HAPTICS_ACTUATOR_VOICE_COIL, channels: [coil("left"), coil("right")], minimumUpdateIntervalNanoseconds: 1_000_000,
            wakeLatencyNanoseconds: tick, physicalID: gamepad.physicalID, preference: 300,
            unavailableReason: HIDBackend.udevRule.deniedReason(id: id(for: gamepad.id), node: gamepad.path, name: gamepad.name))
        spec.sampleStream = SampleStreamSpec(
            rate: UInt32(DualSense.audioHapticsBluetoothRate), periodFrames: UInt32(DualSense.audioHapticsBluetoothFrames),
            bufferFrames: UInt32(bufferFrames), latencyNanoseconds: tick)
        spec.adaptiveTriggers = true
        return spec
    }

    // MARK: The contract

    func wake() throws(BackendFailure) {
        let running = try shared.locked { (state) throws(BackendFailure) -> Bool in
            if let lost = state.lost { throw lost }
            return state.session != nil
        }
        guard !running else { return }
        let handle: HIDHandle
        switch HIDHandle.open(path: gamepad.path) {
        case .success(let opened): handle = opened
        case .failure(let error): throw backend.openFailure(gamepad, errno: error.errno, detail: error.message)
        }
        let slot = haptics_stop_guard_begin(Self.id(for: gamepad.id))
        var result = slot < 0 ? slot : stopReport(releasingTriggers: false, sequence: 1).withUnsafeBufferPointer {
            haptics_stop_guard_add_report(slot, gamepad.path, $0.baseAddress!, $0.count)
        }
        if result == 0 { result = haptics_stop_guard_arm(slot, 0) }
        guard result == 0 else {
            haptics_stop_guard_unregister(slot)
            handle.close()
            throw BackendFailure(code: -result, "\(Self.id(for: gamepad.id)): cannot register the coils' stop with the stop guard: \(String(cString: strerror(-result)))")
        }
        backend.logStopGuardWarning()
        let session = Session(handle: handle, guardSlot: slot)
        // Rumble emulation off: the coils follow the reports only without it.
        if case .failure(let error) = handle.write(DualSense.audioHapticsReport(transport: .bluetooth, sequence: 0)) {
            haptics_stop_guard_unregister(slot)
            handle.close()
            throw BackendFailure(code: error.errno == 0 ? EIO : error.errno, "\(Self.id(for: gamepad.id)): cannot switch the pad to its coils at \(gamepad.path): \(error.message)")
        }
        shared.locked { state in
            state.session = session
            state.sequence = 1
            state.counter = 0
            state.queue.removeAll(keepingCapacity: true)
            state.queue.reserveCapacity(2 * Self.bufferFrames)
            state.start = Monotonic.now()
            state.ticks = 0
            state.fed = false
            state.underruns = 0
            state.ticking = true
        }
        shared.broadcast()
    }

    func sleep() throws(BackendFailure) {
        try end()
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        throw BackendFailure(code: EOPNOTSUPP, "\(Self.id(for: gamepad.id)): the coils take samples (ABI 1.4), not frames; the host is older than the backend")
    }

    func stop() throws(BackendFailure) {
        try shared.locked { (state) throws(BackendFailure) in
            if let lost = state.lost { throw lost }
            state.queue.removeAll(keepingCapacity: true)
        }
    }

    func writeSamples(_ block: SampleBlock) throws(BackendFailure) -> SamplesWritten {
        guard block.channelCount == 2, block.frameCount <= Self.bufferFrames else {
            throw BackendFailure(code: EINVAL, "\(Self.id(for: gamepad.id)): a block of \(block.frameCount) frames × \(block.channelCount) channels; the coils take 2 channels, at most \(Self.bufferFrames) frames")
        }
        let outcome: Result<SamplesWritten, BackendFailure> = shared.wait { state in
            if let lost = state.lost { return .done(.failure(lost)) }
            guard state.session != nil, state.ticking else {
                return .done(.failure(BackendFailure(code: EINVAL, "\(Self.id(for: gamepad.id)): samples while asleep; wake the device first")))
            }
            guard state.queue.count / 2 + block.frameCount <= Self.bufferFrames else { return .sleepUntil(state.due) }
            state.queue.append(contentsOf: block.samples)
            state.fed = true
            defer { state.underruns = 0 }
            return .done(.success(SamplesWritten(underruns: state.underruns, delayFrames: state.queue.count / 2)))
        }
        return try outcome.get()
    }

    func waitForSamples(frames: Int, timeoutNanoseconds: UInt64) throws(BackendFailure) -> Int {
        let deadline = Monotonic.now() + timeoutNanoseconds
        let outcome: Result<Int, BackendFailure> = shared.wait { state in
            if let lost = state.lost { return .done(.failure(lost)) }
            let room = Self.bufferFrames - state.queue.count / 2
            if room >= frames || !state.ticking || Monotonic.now() >= deadline { return .done(.success(room)) }
            return .sleepUntil(min(state.due, deadline))
        }
        return try outcome.get()
    }

    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(BackendFailure) {
        let blocks: DualSense.TriggerBlocks
        do throws(AdaptiveTriggerError) { blocks = try DualSense.TriggerBlocks(right: right, left: left) } catch {
            throw BackendFailure(code: EINVAL, "\(Self.id(for: gamepad.id)): \(error)")
        }
        try writeControl { blocks.report(transport: .bluetooth, sequence: $0) } after: { $0.triggers = blocks.after($0.triggers) }
    }

    func close() {
        try? end()
        worker.finish { $0.terminate = true }
        backend.coilRegistry.closed(self)
    }

    @discardableResult
    func markLost(_ message: String) -> BackendFailure { worker.markLost(message) }

    // MARK: Inside

    /// Report 0x31 with every motor off and rumble emulation on (and both triggers free when
    /// `releasingTriggers`), with counter `sequence`.
    private func stopReport(releasingTriggers: Bool, sequence: UInt8) -> [UInt8] {
        let stop = DualSense.stopReport(transport: .bluetooth, sequence: sequence, mode: rumbleMode)
        return releasingTriggers ? DualSense.releasingTriggers(stop, transport: .bluetooth) : stop
    }

    /// Writes a 0x31 report made by `report` for the next sequence once no write is in flight, then
    /// moves the stop guard's report to the next sequence (and the triggers `after` sets).
    private func writeControl(_ report: (UInt8) -> [UInt8], after: (inout State) -> Void) throws(BackendFailure) {
        let claimed: Result<(Session, UInt8), BackendFailure> = shared.wait { state in
            if let lost = state.lost { return .done(.failure(lost)) }
            guard let session = state.session else {
                return .done(.failure(BackendFailure(code: EINVAL, "\(Self.id(for: gamepad.id)): asleep; wake the device first")))
            }
            if state.writing { return .sleepUntil(Monotonic.now() + 1_000_000) }
            state.writing = true
            defer { state.sequence &+= 1 }
            return .done(.success((session, state.sequence)))
        }
        let (session, sequence) = try claimed.get()
        var outcome: Result<Void, HIDIOError> = .failure(HIDIOError(errno: ESHUTDOWN, message: "the process is stopping"))
        if haptics_stop_guard_enter(session.guardSlot) == 0 {
            outcome = session.handle.write(report(sequence))
            let triggers = shared.locked { state -> Bool in
                if case .success = outcome { after(&state) }
                return state.triggers.any
            }
            _ = stopReport(releasingTriggers: triggers, sequence: sequence &+ 1).withUnsafeBufferPointer {
                haptics_stop_guard_set_report(session.guardSlot, $0.baseAddress!, $0.count)
            }
            haptics_stop_guard_leave(session.guardSlot)
        }
        shared.locked { $0.writing = false }
        shared.broadcast()
        if case .failure(let error) = outcome {
            throw BackendFailure(code: error.errno == 0 ? EIO : error.errno, "\(Self.id(for: gamepad.id)) at \(gamepad.path): \(error.message)")
        }
    }

    /// Stops the ticks, gives the pad its rumble emulation back (motors off, triggers free), and
    /// closes the node.
    private func end() throws(BackendFailure) {
        // The ticks stop first: no coil report follows the one that gives the pad its emulation back.
        shared.locked { $0.ticking = false }
        guard shared.locked({ $0.session != nil && $0.lost == nil }) else {
            closeSession()
            return
        }
        let release = shared.locked { $0.triggers.any }
        let failure: BackendFailure?
        do throws(BackendFailure) {
            try writeControl { self.stopReport(releasingTriggers: release, sequence: $0) } after: { $0.triggers = TriggerEngagement() }
            failure = nil
        } catch {
            failure = error
        }
        closeSession()
        if let failure { throw failure }
    }

    /// Takes the session (the ticks stop), waits out a report in flight, leaves the guard, closes.
    private func closeSession() {
        let session: Session? = shared.wait { state in
            if state.writing { return .sleepUntil(Monotonic.now() + 1_000_000) }
            defer {
                state.session = nil
                state.queue.removeAll(keepingCapacity: true)
            }
            return .done(state.session)
        }
        shared.broadcast()
        guard let session else { return }
        haptics_stop_guard_unregister(session.guardSlot)
        session.handle.close()
    }

    /// The worker: a report at every tick while awake.
    private static func tick(shared: Guarded<State>, gamepad: DiscoveredGamepad) {
        PosixThread.requestRealtimeForCurrentThread(priority: 21)
        haptics_stop_guard_prepare_thread()
        var frames = [Float](repeating: 0, count: 2 * DualSense.audioHapticsBluetoothFrames)
        while true {
            let next: (Session, UInt8)? = shared.wait { state in
                if state.terminate { return .done(nil) }
                guard let session = state.session, state.ticking, state.lost == nil else { return .sleep }
                let now = Monotonic.now()
                if now < state.due { return .sleepUntil(state.due) }
                if state.writing { return .sleepUntil(now + 200_000) }
                let count = min(state.queue.count, frames.count)
                for index in 0..<frames.count { frames[index] = index < count ? state.queue[index] : 0 }
                state.queue.removeFirst(count)
                if count < frames.count, state.fed { state.underruns += 1 }
                state.ticks += 1
                // More than a tick late (the thread starved): count again from now, sending no backlog.
                if now > state.due + tickNumerator / tickDenominator {
                    state.start = now
                    state.ticks = 0
                }
                state.writing = true
                defer { state.counter &+= 1 }
                return .done((session, state.counter))
            }
            guard let (session, counter) = next else { return }
            let report = frames.withUnsafeBufferPointer { DualSense.audioHapticsBluetoothReport(frames: $0, counter: counter) }
            var result: Result<Void, HIDIOError> = .success(())
            if haptics_stop_guard_enter(session.guardSlot) == 0 {
                result = session.handle.write(report)
                haptics_stop_guard_leave(session.guardSlot)
            }
            shared.locked { state in
                state.writing = false
                if case .failure(let error) = result, error.errno == ENODEV || error.errno == ENXIO {
                    if state.lost == nil { state.lost = BackendFailure(code: ENODEV, "\(gamepad.id): the controller disappeared while its coils played (\(error.message))") }
                }
            }
            shared.broadcast()
        }
    }
}

/// A Bluetooth DualSense's coils, as the coils' registry sees them.
struct CoilListing: FoundDevice {
    let gamepad: DiscoveredGamepad
    var id: String { DualSenseCoils.id(for: gamepad.id) }
    var nodePath: String { gamepad.path }
    var connection: String { gamepad.path }
    var arrival: String { "(\(gamepad.path), \(gamepad.name) voice coils)" }
}
