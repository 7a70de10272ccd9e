import Logging
import Synchronization

/// Plays haptic patterns on one or more devices (Core Haptics' `CHHapticEngine`).
///
/// ```swift
/// let engine = try HapticEngine(devices: [try system.openDevice("recording:lra")])
/// let player = try engine.makePlayer(with: pattern)
/// try player.start(atTime: engine.currentTime + 0.05)
/// ```
///
/// Each engine has one scheduler thread (its ``SystemClock``) that sleeps to absolute deadlines on
/// the monotonic clock and is blocked, with zero wake-ups, while nothing plays. ``currentTime`` reads
/// that clock, so an app can schedule haptics against audio timestamps. A start for "now" (time 0 or
/// in the past) renders its first frame on the calling thread, without a thread hop.
///
/// Every device's frames go through its ``DriveMapper`` (its calibration profile), are rounded to
/// the amplitude steps the device renders, and are never sent closer together than the device's
/// minimum update interval: changes inside that interval are coalesced into the newest state.
/// While a player plays, the engine holds a trigger (``HapticDevice/beginActivity()``) on every
/// device, waking an idle device ahead of a scheduled start by its wake latency.
public final class HapticEngine: Sendable {
    /// Why an engine stopped by itself (not called for an explicit ``stop()``).
    public enum StoppedReason: Sendable, Hashable, CustomStringConvertible {
        /// A device was unplugged. Players keep playing on the engine's other devices; the engine
        /// stops when none is left.
        case deviceLost(deviceID: String)
        /// Nothing played for ``HapticEngine/autoShutdownTimeout``; the next start restarts the engine.
        case idleTimeout
        /// The engine was released while running.
        case engineDestroyed
        /// A device failed in another way; its output stopped.
        case systemError(DeviceError)

        public var description: String {
            switch self {
            case .deviceLost(let id): "device lost: \(id)"
            case .idleTimeout: "idle timeout"
            case .engineDestroyed: "engine destroyed"
            case .systemError(let error): "system error: \(error)"
            }
        }
    }

    /// The devices the engine plays on.
    public let devices: [HapticDevice]
    /// The engine's clock; its thread is the engine's scheduler.
    public let clock: any HapticClock
    let logger: Logger
    /// Keeps each kind of feedback played through this engine from flooding its devices.
    public let overuseGuard = OveruseGuard()
    /// Set when hapticsd owns the devices: players and feedback then play in the service.
    let remote: RemoteEngine?
    private let core: Mutex<Core>
    private let ticker = Ticker()
    /// The engine's scheduled pass, built once, so arming the scheduler (on every start for now)
    /// allocates no closure; a constant, so arming reads it without a reference count.
    private let tickAction: @Sendable () -> Void

    /// What the scheduled pass reaches the engine through: the clock's queue holds the pass, and
    /// must not hold the engine that owns the clock.
    private final class Ticker: @unchecked Sendable {
        // Written once, in the engine's initialiser, before the engine is shared; read only after.
        weak var engine: HapticEngine?
    }

    struct Core {
        var running = false
        var players = PlayerTable()
        var nextPlayerID: UInt64 = 1
        var outputs: [DeviceOutput]
        var wake: (id: ScheduledActionID, at: HapticInstant)?
        var lastActivity: HapticInstant
        /// The slowest live device's tap length plus update interval, in seconds (see ``minimumTapInterval()``).
        var tapInterval = 0.0 {
            didSet { feedbackIntervals.removeAll() }
        }
        /// The longest tap of a live device, in seconds: a pattern has ended once its last tap has on every device.
        var longestTap = 0.0
        /// When the last pass ran (see ``HapticEngine/minimumPassInterval``).
        var lastPass = HapticInstant(nanoseconds: 0)
        var autoShutdownEnabled = true
        var autoShutdownTimeout = 120.0
        var policy: HapticPolicy {
            didSet { feedbackIntervals.removeAll() }
        }
        /// ``HapticEngine/feedbackInterval(for:_:)`` per kind, worked out once; emptied when the
        /// policy or the tap interval changes. A few kinds: a linear search of short strings costs
        /// less than hashing one.
        var feedbackIntervals: [(kind: String, interval: Double)] = []
        var stoppedHandler: (@Sendable (StoppedReason) -> Void)?
    }

    /// Something to tell the app once the engine's lock is released.
    enum Notice {
        case stopped(StoppedReason)
        case completion(@Sendable ((any Error)?) -> Void, (any Error)?)
    }

    /// An engine over `devices`.
    /// - Parameters:
    ///   - devices: the devices it plays on; an empty list is ``HapticEngineError/noDevices``.
    ///   - clock: the engine's clock; by default a new ``SystemClock`` (one scheduler thread per engine).
    ///   - profiles: calibration profiles by device id; a device without one uses its profile from
    ///     `profileStore` (the user's, else a shipped default), else its uncalibrated default.
    ///   - profileStore: where stored profiles come from; nil uses none.
    ///   - policy: the user's settings; by default ``HapticPolicy/load()`` (a broken settings file is logged and ignored).
    ///   - logger: where the engine reports an ignored settings file and playback errors.
    public init(
        devices: [HapticDevice], clock: (any HapticClock)? = nil, profiles: [String: CalibrationProfile] = [:],
        profileStore: ProfileStore? = .standard, policy: HapticPolicy? = nil, logger: Logger = Logger(label: "haptics.engine")
    ) throws(HapticEngineError) {
        guard !devices.isEmpty else { throw .noDevices }
        self.devices = devices
        self.remote = try RemoteEngine.make(for: devices)
        self.clock = clock ?? SystemClock(name: "haptic-engine")
        self.logger = logger
        tickAction = { [ticker] in ticker.engine?.scheduledTick() }
        var effectivePolicy = HapticPolicy()
        if let policy {
            effectivePolicy = policy
        } else {
            do { effectivePolicy = try HapticPolicy.load() } catch { logger.warning("ignoring haptics settings: \(error)") }
        }
        let outputs = devices.map { device in
            DeviceOutput(device: device, profile: profiles[device.description.id] ?? profileStore?.profile(for: device.description))
        }
        var initial = Core(outputs: outputs, lastActivity: self.clock.now(), policy: effectivePolicy)
        Self.refreshTapInterval(&initial)
        core = Mutex(initial)
        ticker.engine = self
        for (index, device) in devices.enumerated() {
            device.onLost { [weak self] error in self?.deviceLost(index, error) }
        }
    }

    deinit {
        var notices: [Notice] = []
        core.withLock { core in
            guard core.running else { return }
            shutDown(&core, reason: .engineDestroyed, notices: &notices)
        }
        deliver(notices)
    }

    /// The engine's time in seconds: the monotonic clock (`CLOCK_MONOTONIC`), as audio timestamps are.
    public var currentTime: Double { clock.now().seconds }

    /// Called when the engine stops by itself (a device lost, the idle timeout, release, an error); not for ``stop()``.
    public var stoppedHandler: (@Sendable (StoppedReason) -> Void)? {
        get { core.withLock { $0.stoppedHandler } }
        set { core.withLock { $0.stoppedHandler = newValue } }
    }

    /// Whether the engine shuts down after ``autoShutdownTimeout`` without playing (default true).
    /// The next start restarts it.
    public var isAutoShutdownEnabled: Bool {
        get { core.withLock { $0.autoShutdownEnabled } }
        set { update { $0.autoShutdownEnabled = newValue } }
    }

    /// Seconds without playing before an automatic shutdown (default 120 s, as Core Haptics).
    public var autoShutdownTimeout: Double {
        get { core.withLock { $0.autoShutdownTimeout } }
        set { update { $0.autoShutdownTimeout = max(newValue, 0) } }
    }

    /// The user policy applied to every frame (off, intensity scale).
    public var policy: HapticPolicy {
        get { core.withLock { $0.policy } }
        set { update { $0.policy = newValue } }
    }

    /// The shortest time between two taps every device of the engine can render: its tap length
    /// plus one update interval, for the slowest device, in seconds.
    public func minimumTapInterval() -> Double {
        core.withLock { $0.tapInterval }
    }

    /// The interval the overuse guard keeps between feedback of `kind`: the policy's minimum for
    /// the kind or ``minimumTapInterval()``, whichever is longer; no copy of the policy.
    private static func feedbackInterval(for kind: String, _ core: inout Core) -> Double {
        // An index loop: no generic algorithm, which allocates in an unoptimised build.
        for index in core.feedbackIntervals.indices where core.feedbackIntervals[index].kind == kind {
            return core.feedbackIntervals[index].interval
        }
        let interval = max(core.policy.minimumInterval(for: kind), core.tapInterval)
        core.feedbackIntervals.append((kind, interval))
        return interval
    }

    private static func refreshTapInterval(_ core: inout Core) {
        let live = core.outputs.filter { !$0.lost }
        core.tapInterval = live.map { $0.mapper.profile.transient.duration + $0.device.description.minimumUpdateInterval }.max() ?? 0
        core.longestTap = live.map(\.mapper.profile.transient.duration).max() ?? 0
    }

    /// Whether the engine is running.
    public var isRunning: Bool { core.withLock { $0.running } }

    /// Uses `profile` for the device `deviceID` from the next frame on (nil: the uncalibrated default).
    public func setProfile(_ profile: CalibrationProfile?, forDevice deviceID: String) {
        update { core in
            for index in core.outputs.indices where core.outputs[index].device.description.id == deviceID {
                core.outputs[index].mapper = DriveMapper(device: core.outputs[index].device.description, profile: profile)
            }
            Self.refreshTapInterval(&core)
        }
    }

    /// The profile in use for a device.
    public func profile(forDevice deviceID: String) -> CalibrationProfile? {
        core.withLock { core in core.outputs.first { $0.device.description.id == deviceID }?.mapper.profile }
    }

    /// Starts the engine (its scheduler and idle timeout). Starting a player starts a stopped engine
    /// too. The engine is not a holder of its devices' power model: generators are, through their
    /// `prepare()`; the engine triggers (``HapticDevice/beginActivity()``) while it plays.
    public func start() throws(HapticEngineError) {
        let result: Result<Void, HapticEngineError> = core.withLock { core in
            guard core.outputs.contains(where: { !$0.lost }) else { return .failure(.allDevicesLost) }
            startLocked(&core)
            return .success(())
        }
        try result.get()
        tick()
    }

    /// Stops every player and silences the devices. The stopped handler is not called.
    public func stop() {
        remote?.stopAll()
        var notices: [Notice] = []
        core.withLock { core in
            guard core.running else { return }
            shutDown(&core, reason: nil, notices: &notices)
        }
        deliver(notices)
    }

    /// A player for `pattern`.
    public func makePlayer(with pattern: HapticPattern) throws(HapticEngineError) -> any HapticPatternPlayer {
        try makeAdvancedPlayer(with: pattern)
    }

    /// A player for `pattern` with looping, seeking, rate, pause and a completion handler.
    public func makeAdvancedPlayer(with pattern: HapticPattern) throws(HapticEngineError) -> any HapticAdvancedPatternPlayer {
        if let remote {
            // The engine runs for its stopped handler (device lost, idle timeout); the pattern plays in hapticsd.
            try start()
            return try remote.makePlayer(with: pattern)
        }
        return PatternPlayer(engine: self, id: register(pattern))
    }

    /// Plays an AHAP file now.
    public func playPattern(fromFile path: String) throws {
        let player = try makePlayer(with: HapticPattern(contentsOfFile: path))
        try player.start(atTime: 0)
    }

    // MARK: - Players

    private func register(_ pattern: HapticPattern) -> UInt64 {
        // Built before the lock: a pattern of tens of thousands of events takes a while, and the
        // scheduler thread and every other player wait for the lock.
        let timeline = PatternTimeline(pattern: pattern)
        return core.withLock { core in
            let id = core.nextPlayerID
            core.nextPlayerID += 1
            core.players.append(id, PlayerState(timeline: timeline))
            return id
        }
    }

    /// Plays `timeline` now, fire-and-forget, with every intensity multiplied by `intensityScale`:
    /// a deferred feedback's path, one lock and no player object. `now` is the engine clock's
    /// current time, as the caller has just read it.
    func play(_ timeline: PatternTimeline, intensityScale: Double, at now: HapticInstant) throws(HapticEngineError) {
        var notices: [Notice] = []
        let failure = core.withLock { core in playLocked(timeline, intensityScale: intensityScale, at: now, &core, notices: &notices) }
        deliver(notices)
        if let failure { throw failure }
    }

    /// A feedback generator's trigger at `now` (the engine clock's time, as the caller has just
    /// read it), under one lock on the engine: the interval the overuse guard keeps for the
    /// effect's kind, the guard's decision, and, when it admits the effect at once, the start.
    /// A deferred effect plays later through `deferredPlay` (see ``OveruseGuard``).
    ///
    /// - Returns: the guard's decision, and why an effect it admitted did not start.
    func playFeedback(
        _ effect: FeedbackEffect, scale: Double, at now: HapticInstant, deferredPlay: @escaping @Sendable (FeedbackEffect, Double) -> Void
    ) -> (decision: OveruseGuard.Decision, failure: HapticEngineError?) {
        var notices: [Notice] = []
        let result = core.withLock { core -> (OveruseGuard.Decision, HapticEngineError?) in
            let interval = Self.feedbackInterval(for: effect.kind, &core)
            let decision = overuseGuard.admit(effect, scale: scale, interval: interval, at: now, clock: clock, play: deferredPlay)
            guard case .played = decision else { return (decision, nil) }
            return (decision, playLocked(effect.timeline, intensityScale: scale, at: now, &core, notices: &notices))
        }
        deliver(notices)
        return result
    }

    /// Starts `timeline` as a player of its own that leaves the table when it ends, under the lock.
    private func playLocked(
        _ timeline: PatternTimeline, intensityScale: Double, at now: HapticInstant, _ core: inout Core, notices: inout [Notice]
    ) -> HapticEngineError? {
        if !core.running {
            guard core.outputs.contains(where: { !$0.lost }) else { return .allDevicesLost }
            startLocked(&core)
        }
        let id = core.nextPlayerID
        core.nextPlayerID += 1
        var player = PlayerState(timeline: timeline)
        player.intensityScale = intensityScale
        player.isOrphan = true
        // Started before it is stored: one insertion, no copy of the state out of the table.
        var failures: [(index: Int, error: DeviceError)] = []
        let next = startNow(&player, on: &core.outputs, policy: core.policy, longestTap: core.longestTap, now: now, failures: &failures, notices: &notices)
        started(&core, at: now, next: next, failures: failures, notices: &notices)
        core.players.append(id, consume player)
        return nil
    }

    /// Queues `command` for player `id` at engine time `time` (0 or past: now), then runs the
    /// engine at once so a start for now renders on this thread.
    func send(_ command: PlayerCommand, to id: UInt64, at time: Double) throws(HapticEngineError) {
        guard time.isFinite else { throw .invalidTime(time) }
        var notices: [Notice] = []
        let result: Result<Bool, HapticEngineError> = core.withLock { core in
            guard let slot = core.players.index(of: id) else { return .failure(.playerReleased) }
            if !core.running {
                guard core.outputs.contains(where: { !$0.lost }) else { return .failure(.allDevicesLost) }
                startLocked(&core)
            }
            let now = clock.now()
            let instant = time <= 0 ? now : max(HapticInstant(seconds: time), now)
            if case .start = command, instant == now {
                // Started in its slot: no copy, nothing moved in the table.
                var failures: [(index: Int, error: DeviceError)] = []
                let next = startNow(
                    &core.players.slots[slot].state, on: &core.outputs, policy: core.policy, longestTap: core.longestTap, now: now,
                    failures: &failures, notices: &notices)
                started(&core, at: now, next: next, failures: failures, notices: &notices)
                return .success(true)
            }
            core.players.slots[slot].state.enqueue(command, at: instant)
            core.lastActivity = now
            return .success(false)
        }
        let startedNow = try result.get()
        deliver(notices)
        if !startedNow { tick() }
    }

    /// Starts `player` at once and sends its first frame on the calling thread. Voices mix by a
    /// per-channel maximum, so that frame is the new player's drive over what each device outputs
    /// already. A start also retries a device that failed earlier.
    ///
    /// The usual trigger (every device silent, the player's controls untouched, a timeline started
    /// before) plays each device's remembered first frame and arms the engine's next pass for the
    /// start's first change (a kick's end, the tap's end), which the frame remembers too: nothing
    /// else is due sooner, since every other player's next change is armed already. Any other
    /// start hands a full pass to the engine's scheduler thread at once, which recomputes every
    /// device from every player; the caller returns without waiting for it.
    ///
    /// It takes the parts of the engine's state it uses rather than all of it, so a player is
    /// started where it lies in the table. Devices that failed are left in `failures` for
    /// ``started(_:at:next:failures:notices:)``, which the caller runs next.
    ///
    /// - Returns: when the engine's next pass is due: `now` for a full pass, else the first change.
    private func startNow(
        _ player: inout PlayerState, on outputs: inout [DeviceOutput], policy: HapticPolicy, longestTap: Double, now: HapticInstant,
        failures: inout [(index: Int, error: DeviceError)], notices: inout [Notice]
    ) -> HapticInstant {
        apply(.start, at: now, to: &player, notices: &notices)
        // Untouched controls change nothing: no array of their values to build.
        let untouched = player.controls.tracks.isUntouched
        let external = untouched ? nil : player.controls.tracks.values(at: now.seconds)
        let scale = player.intensityScale * policy.intensityScale
        let end = player.timeline.end(transientDuration: longestTap)
        var fullPass = false
        var firstChange: HapticInstant?
        for index in outputs.indices where !outputs[index].lost {
            if outputs[index].faulted { outputs[index].faulted = false }
            guard policy.isEnabled, !player.isMuted else {
                fullPass = true
                continue
            }
            let desired: [ChannelDrive]
            if untouched, outputs[index].isSilent {
                // The usual trigger: a silent device, rendered as the last start of this timeline was.
                let (frame, next) = outputs[index].firstFrame(of: player.timeline, at: player.startOffset, scale: scale)
                guard let frame else {
                    fullPass = true
                    continue
                }
                desired = frame
                let change = player.instant(ofChange: next, end: end, from: now, position: player.startOffset)
                firstChange = min(firstChange ?? change, change)
            } else {
                fullPass = true
                let (voices, _, _) = player.timeline.evaluate(
                    at: player.startOffset, shape: outputs[index].mapper.profile.transient, external: external, step: outputs[index].step,
                    startWindow: outputs[index].mapper.startWindow)
                guard !voices.isEmpty else { continue }
                var mixed = outputs[index].lastDrives
                for voice in voices {
                    outputs[index].mapper.mix(intensity: voice.intensity * scale, sharpness: voice.sharpness, gain: voice.gain, starting: voice.starting, into: &mixed)
                }
                desired = outputs[index].quantized(mixed)
            }
            let device = outputs[index].device
            let earliest = outputs[index].nextUpdate(orNow: now)
            guard desired != outputs[index].lastDrives, earliest <= now else {
                fullPass = true
                continue
            }
            let frame = DriveFrame(time: now, channels: consume desired, levels: outputs[index].mapper.sendsLevels)
            do {
                if outputs[index].active {
                    try device.submit(frame)
                } else {
                    // One lock on the device for both; on failure no activity was begun.
                    try device.beginActivityAndSubmit(frame)
                    outputs[index].active = true
                }
                outputs[index].record(frame.channels)
                outputs[index].lastSubmit = now
            } catch {
                failures.append((index, error))
                fullPass = true
            }
        }
        return fullPass ? now : (firstChange ?? now)
    }

    /// After ``startNow(_:on:policy:longestTap:now:failures:notices:)``: notes the activity, fails
    /// the devices that failed, and arms the engine's next pass for `next`.
    private func started(
        _ core: inout Core, at now: HapticInstant, next: HapticInstant, failures: [(index: Int, error: DeviceError)], notices: inout [Notice]
    ) {
        core.lastActivity = now
        for failure in failures { fail(&core, index: failure.index, error: failure.error, notices: &notices) }
        reschedule(&core, at: next)
    }

    /// Changes player `id`'s state under the lock (at the current time), then runs the engine (not
    /// when `render` is false: a change to a player that is not playing needs no pass).
    func updatePlayer<T: Sendable>(_ id: UInt64, render: Bool = true, _ body: (inout PlayerState, HapticInstant) -> T) -> T? {
        let result: T? = core.withLock { core in
            guard let slot = core.players.index(of: id) else { return nil }
            return body(&core.players.slots[slot].state, clock.now())
        }
        if render { tick() }
        return result
    }

    /// Reads player `id`'s state.
    func readPlayer<T: Sendable>(_ id: UInt64, _ body: (PlayerState, HapticInstant) -> T) -> T? {
        core.withLock { core -> T? in
            guard let slot = core.players.index(of: id) else { return nil }
            return body(core.players.slots[slot].state, clock.now())
        }
    }

    /// The player object is gone: forget its state once it is not playing.
    func release(player id: UInt64) {
        core.withLock { core in
            guard let slot = core.players.index(of: id) else { return }
            if core.players.slots[slot].state.status == .playing || !core.players.slots[slot].state.pending.isEmpty {
                core.players.slots[slot].state.isOrphan = true
            } else {
                core.players.slots.remove(at: slot)
            }
        }
    }

    // MARK: - The scheduler

    private func update(_ body: (inout Core) -> Void) {
        core.withLock { body(&$0) }
        tick()
    }

    /// One pass of the engine: apply due commands, render every device, schedule the next pass.
    func tick() {
        var notices: [Notice] = []
        core.withLock { core in
            guard core.running else { return }
            render(&core, now: clock.now(), notices: &notices)
        }
        deliver(notices)
    }

    /// The shortest time, in nanoseconds (1 ms), between a pass that came less than this after the
    /// one before it and the next pass players' changes ask for: at most two passes a millisecond,
    /// what bounds the scheduler thread's share of a core whatever the patterns (Docs/Daemon.md).
    static let minimumPassInterval: Int64 = 1_000_000

    /// One pass. It builds no array: the players are walked in place in their table, and each
    /// device mixes into its own scratch storage (``DeviceOutput/voices``, ``DeviceOutput/mixed``).
    private func render(_ core: inout Core, now: HapticInstant, notices: inout [Notice]) {
        var next: HapticInstant?
        func consider(_ instant: HapticInstant?) {
            guard let instant else { return }
            next = next.map { min($0, instant) } ?? instant
        }

        // 1. Commands that are due. A start still to come also needs a pass ahead of it, by the
        //    wake latency of every idle device, so the device is awake when the start arrives.
        var startedThisPass = false
        // Index loops rather than filter/map chains: each intermediate array is an allocation.
        var slowestWake: Double?
        for index in core.outputs.indices where !core.outputs[index].lost && !core.outputs[index].active {
            let latency = core.outputs[index].device.description.wakeLatency
            slowestWake = max(slowestWake ?? latency, latency)
        }
        for slot in core.players.slots.indices {
            while let first = core.players.slots[slot].state.pending.first, first.time <= now {
                core.players.slots[slot].state.pending.removeFirst()
                if case .start = first.command { startedThisPass = true }
                apply(first.command, at: first.time, to: &core.players.slots[slot].state, notices: &notices)
            }
            consider(core.players.slots[slot].state.pending.first?.time)
            if let slowestWake, let start = core.players.slots[slot].state.pending.first(where: { if case .start = $0.command { true } else { false } }) {
                let early = start.time.advanced(bySeconds: -(slowestWake + 0.001))
                if early > now { consider(early) }
            }
        }

        // 2. What every playing player sounds like on every device, mixed per channel.
        for index in core.outputs.indices where !core.outputs[index].lost { core.outputs[index].clearMix() }
        let sounds = core.policy.isEnabled
        var anyPlaying = false
        // Two passes in a row for players' changes are at most ``minimumPassInterval`` short: no
        // pattern (a loop of a nanosecond, a rate of 100 over events a microsecond apart) can make
        // this thread run passes back to back. One short step stays exact (a change a rounding
        // away); frames are sent an update interval (4 ms or more) apart anyway.
        let dense = now.nanoseconds >= core.lastPass.nanoseconds && now.nanoseconds - core.lastPass.nanoseconds < UInt64(Self.minimumPassInterval)
        core.lastPass = now
        let soonest = now.advanced(byNanoseconds: dense ? Self.minimumPassInterval : 0)
        func considerChange(_ instant: HapticInstant?) { consider(instant.map { max($0, soonest) }) }
        for slot in core.players.slots.indices where core.players.slots[slot].state.status == .playing {
            let playing = Self.render(
                &core.players.slots[slot].state, into: &core.outputs, now: now, longestTap: core.longestTap,
                scale: sounds ? core.policy.intensityScale : nil, notices: &notices, consider: considerChange)
            if playing {
                anyPlaying = true
                core.lastActivity = now
            }
        }
        core.players.slots.removeAll { $0.state.isOrphan && $0.state.status != .playing && $0.state.pending.isEmpty }

        // 3. Each device: begin a trigger while anything plays (or starts within its wake latency),
        //    send the mixed frame if it changed and the device's update interval allows, end the
        //    trigger once silent and idle.
        for index in core.outputs.indices where !core.outputs[index].lost {
            if core.outputs[index].faulted {
                // A device that failed is retried by the next start, not on every pass.
                guard startedThisPass else { continue }
                core.outputs[index].faulted = false
            }
            let device = core.outputs[index].device
            let wakeHorizon = now.advanced(bySeconds: device.description.wakeLatency + 0.001)
            var startingSoon = false
            for slot in core.players.slots.indices where !startingSoon {
                startingSoon = core.players.slots[slot].state.pending.contains { if case .start = $0.command { $0.time <= wakeHorizon } else { false } }
            }
            if (anyPlaying || startingSoon) && !core.outputs[index].active {
                do {
                    try device.beginActivity()
                    core.outputs[index].active = true
                } catch {
                    fail(&core, index: index, error: error, notices: &notices)
                    continue
                }
            }
            // Silence is every channel off, which rounds to itself.
            core.outputs[index].quantizeMix()
            if core.outputs[index].mixed != core.outputs[index].lastDrives {
                let earliest = core.outputs[index].nextUpdate(orNow: now)
                if earliest > now {
                    consider(earliest)
                } else if core.outputs[index].active {
                    do {
                        try device.submit(DriveFrame(time: now, channels: core.outputs[index].mixed, levels: core.outputs[index].mapper.sendsLevels))
                        core.outputs[index].record(core.outputs[index].mixed)
                        core.outputs[index].lastSubmit = now
                    } catch {
                        fail(&core, index: index, error: error, notices: &notices)
                        continue
                    }
                }
            }
            if core.outputs[index].active, !anyPlaying, !startingSoon, core.outputs[index].isSilent {
                device.endActivity()
                core.outputs[index].active = false
            }
        }
        if !core.outputs.contains(where: { !$0.lost }) {
            shutDown(&core, reason: nil, notices: &notices)
            return
        }

        // 4. The idle timeout.
        var busy = anyPlaying
        for slot in core.players.slots.indices where !busy { busy = !core.players.slots[slot].state.pending.isEmpty }
        if core.autoShutdownEnabled, !busy {
            let deadline = core.lastActivity.advanced(bySeconds: core.autoShutdownTimeout)
            if deadline <= now {
                shutDown(&core, reason: .idleTimeout, notices: &notices)
                return
            }
            consider(deadline)
        }
        reschedule(&core, at: next)
    }

    /// One playing player in a pass: finishes it at its end (or wraps its loop), and mixes what it
    /// sounds like now into every live device's ``DeviceOutput/mixed``, every intensity times the
    /// player's scale and `scale` (nil: the policy silences haptics, nothing is mixed). Whether it
    /// still plays.
    private static func render(
        _ player: inout PlayerState, into outputs: inout [DeviceOutput], now: HapticInstant, longestTap: Double, scale: Double?,
        notices: inout [Notice], consider: (HapticInstant?) -> Void
    ) -> Bool {
        var position = player.position(at: now)
        let end = player.timeline.end(transientDuration: longestTap)
        if player.loopEnabled, player.loopLength > 0, position >= player.loopLength - 1e-9 {
            position = 0
            player.startOffset = 0
            player.anchor = now
        } else if !player.loopEnabled, position >= end - 1e-9 {
            player.status = .finished
            player.startOffset = 0
            if let completion = player.completion { notices.append(.completion(completion, nil)) }
            return false
        }
        // Untouched controls change nothing: no array of their values, no breakpoint to look for.
        let untouched = player.controls.tracks.isUntouched
        let external = untouched ? nil : player.controls.tracks.values(at: now.seconds)
        let externalRamping = !untouched && player.controls.tracks.isRamping(at: now.seconds)
        if !untouched { consider(player.controls.tracks.nextBreakpoint(after: now.seconds).map { HapticInstant(seconds: $0) }) }
        for index in outputs.indices where !outputs[index].lost {
            let step = outputs[index].step
            let shape = outputs[index].mapper.profile.transient
            outputs[index].voices.removeAll(keepingCapacity: true)
            let (nextPosition, underWay) = player.timeline.evaluate(
                at: position, shape: shape, external: external, step: step, startWindow: outputs[index].mapper.startWindow, into: &outputs[index].voices)
            if let scale, !player.isMuted { outputs[index].mixVoices(scale: player.intensityScale * scale) }
            consider(player.instant(ofChange: nextPosition, end: end, from: now, position: position))
            if externalRamping, underWay { consider(now.advanced(bySeconds: step)) }
        }
        return true
    }

    private func apply(_ command: PlayerCommand, at time: HapticInstant, to player: inout PlayerState, notices: inout [Notice]) {
        switch command {
        case .start:
            if player.status == .finished { player.startOffset = 0 }
            player.status = .playing
            player.anchor = time
        case .stop:
            guard player.status != .finished else { return }
            let wasActive = player.status != .idle
            player.status = .finished
            player.startOffset = 0
            if wasActive, let completion = player.completion { notices.append(.completion(completion, HapticEngineError.playerStopped)) }
        case .pause:
            guard player.status == .playing else { return }
            player.rebase(at: time)
            player.status = .paused
        case .resume:
            guard player.status == .paused else { return }
            player.status = .playing
            player.anchor = time
        case .parameters(let parameters):
            for parameter in parameters {
                guard let control = HapticControl(parameter.id) else { continue }
                let value = min(max(parameter.value, parameter.id.range.lowerBound), parameter.id.range.upperBound)
                player.controls.tracks[control].set(value, at: time.seconds + max(parameter.relativeTime, 0))
            }
        case .curve(let curve):
            player.controls.tracks.apply(parameters: [], curves: [curve], offset: time.seconds)
        }
    }

    private func fail(_ core: inout Core, index: Int, error: DeviceError, notices: inout [Notice]) {
        let id = core.outputs[index].device.description.id
        if error.isDeviceLost {
            guard !core.outputs[index].lost else { return }
            core.outputs[index].lost = true
            core.outputs[index].active = false
            Self.refreshTapInterval(&core)
            notices.append(.stopped(.deviceLost(deviceID: id)))
        } else {
            logger.error("\(error)")
            notices.append(.stopped(.systemError(error)))
            // Park the device, stopped, until the next start tries again (the error may have been transient).
            core.outputs[index].faulted = true
            core.outputs[index].record(core.outputs[index].silence)
            if core.outputs[index].active {
                core.outputs[index].device.endActivity()
                core.outputs[index].active = false
            }
        }
    }

    private func deviceLost(_ index: Int, _ error: DeviceError) {
        var notices: [Notice] = []
        core.withLock { core in
            guard core.running else {
                core.outputs[index].lost = true
                Self.refreshTapInterval(&core)
                return
            }
            fail(&core, index: index, error: error, notices: &notices)
            if !core.outputs.contains(where: { !$0.lost }) { shutDown(&core, reason: nil, notices: &notices) }
        }
        deliver(notices)
        tick()
    }

    private func startLocked(_ core: inout Core) {
        guard !core.running else { return }
        core.running = true
        core.lastActivity = clock.now()
    }

    /// Stops everything; `reason` nil for an explicit stop or when no device is left (already reported).
    private func shutDown(_ core: inout Core, reason: StoppedReason?, notices: inout [Notice]) {
        for slot in core.players.slots.indices {
            let wasPlaying = core.players.slots[slot].state.status == .playing || core.players.slots[slot].state.status == .paused
            core.players.slots[slot].state.pending.removeAll()
            core.players.slots[slot].state.status = .finished
            core.players.slots[slot].state.startOffset = 0
            if wasPlaying, let completion = core.players.slots[slot].state.completion {
                notices.append(.completion(completion, reason == nil ? HapticEngineError.engineStopped : HapticEngineError.playerStopped))
            }
        }
        for index in core.outputs.indices where !core.outputs[index].lost {
            let output = core.outputs[index]
            if output.lastDrives.contains(where: { $0.amplitude > 0 }) {
                try? output.device.submit(DriveFrame.silence(channelCount: output.lastDrives.count, at: clock.now()))
            }
            if output.active { output.device.endActivity() }
            core.outputs[index].active = false
            core.outputs[index].record(output.silence)
            core.outputs[index].lastSubmit = nil
        }
        core.running = false
        reschedule(&core, at: nil, force: true)
        if let reason { notices.append(.stopped(reason)) }
    }

    /// Arms the scheduler for `next`. An armed wake that comes no later is kept (a pass that finds
    /// nothing due costs less than a cancel and a reschedule on every pass); `force` replaces it
    /// whatever it is (a stop: nothing may run after it).
    private func reschedule(_ core: inout Core, at next: HapticInstant?, force: Bool = false) {
        if let wake = core.wake, !force {
            if let next, wake.at <= next { return }
            if next == nil { return }
        }
        if let wake = core.wake { clock.cancel(wake.id) }
        core.wake = nil
        guard let next else { return }
        let id = clock.schedule(at: next, tickAction)
        core.wake = (id, next)
    }

    private func scheduledTick() {
        core.withLock { core in
            // The armed wake is the one running unless it was replaced meanwhile by an earlier
            // one: a wake that is due is done either way (its pass is this one).
            if let wake = core.wake, wake.at <= clock.now() { core.wake = nil }
        }
        tick()
    }

    /// Runs the handlers of `notices`, outside the lock. Inlined: most calls have none.
    @inline(__always)
    private func deliver(_ notices: [Notice]) {
        if !notices.isEmpty { deliverNow(notices) }
    }

    private func deliverNow(_ notices: [Notice]) {
        let handler = core.withLock { $0.stoppedHandler }
        for notice in notices {
            switch notice {
            case .stopped(let reason): handler?(reason)
            case .completion(let completion, let error): completion(error)
            }
        }
    }
}

/// Why an engine or player call failed.
public enum HapticEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An engine needs at least one device.
    case noDevices
    /// Every device of the engine was lost.
    case allDevicesLost
    /// A time that is NaN or infinite.
    case invalidTime(Double)
    /// A value outside its range: which, the value, and the range.
    case invalidValue(name: String, value: Double, expected: String)
    /// The player was stopped before it finished (given to its completion handler).
    case playerStopped
    /// The engine was stopped before the player finished (given to its completion handler).
    case engineStopped
    /// The player's engine no longer knows it.
    case playerReleased
    /// hapticsd refused or failed a request: the D-Bus error name and its message.
    case serviceFailure(name: String, message: String)
    /// An engine's devices must all be hapticsd's or all this process's.
    case mixedDevices

    public var description: String {
        switch self {
        case .noDevices: "an engine needs at least one device"
        case .allDevicesLost: "every device of the engine was lost; open a device again"
        case .invalidTime(let time): "time \(time) is not a finite number of seconds"
        case .invalidValue(let name, let value, let expected): "\(name) \(value) is outside \(expected)"
        case .playerStopped: "the player was stopped before it finished"
        case .engineStopped: "the engine was stopped before the player finished"
        case .playerReleased: "the player was released"
        case .serviceFailure(let name, let message): "hapticsd: \(message) [\(name)]"
        case .mixedDevices: "an engine cannot mix devices hapticsd owns with devices this process opened; open them all through one HapticSystem"
        }
    }
}
