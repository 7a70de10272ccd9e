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

    /// Whether the engine plays through hapticsd (its devices are the service's): clips go to the
    /// service as copies, so a ``LiveAudioRing`` cannot be played on it.
    public var playsThroughService: Bool { remote != nil }
    let core: Mutex<Core>
    /// The registered clips (``registerAudioResource(_:named:)``).
    let audioResources = Mutex(AudioResources())
    let ticker = Ticker()
    /// The engine's scheduled pass, built once, so arming the scheduler (on every start for now)
    /// allocates no closure; a constant, so arming reads it without a reference count.
    let tickAction: @Sendable () -> Void

    /// What the scheduled pass reaches the engine through: the clock's queue holds the pass, and
    /// must not hold the engine that owns the clock.
    final class Ticker: @unchecked Sendable {
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
    static func feedbackInterval(for kind: String, _ core: inout Core) -> Double {
        // An index loop: no generic algorithm, which allocates in an unoptimised build.
        for index in core.feedbackIntervals.indices where core.feedbackIntervals[index].kind == kind {
            return core.feedbackIntervals[index].interval
        }
        let interval = max(core.policy.minimumInterval(for: kind), core.tapInterval)
        core.feedbackIntervals.append((kind, interval))
        return interval
    }

    static func refreshTapInterval(_ core: inout Core) {
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

    /// The frequencies a device plays and its output at each, from the profile in use (Android's
    /// `Vibrator.getFrequencyProfile()`); nil for a device whose frequency cannot be chosen.
    public func frequencyProfile(forDevice deviceID: String) -> FrequencyProfile? {
        profile(forDevice: deviceID).flatMap { FrequencyProfile(profile: $0) }
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
}
