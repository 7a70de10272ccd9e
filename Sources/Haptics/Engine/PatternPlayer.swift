import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// Plays one pattern on an engine (Core Haptics' `CHHapticPatternPlayer`).
///
/// Times are engine times in seconds (``HapticEngine/currentTime``); 0, or a time already past, means now.
public protocol HapticPatternPlayer: AnyObject, Sendable {
    /// Starts playing from the beginning (or from where ``HapticAdvancedPatternPlayer/seek(toOffset:)`` put it) at `time`.
    func start(atTime time: Double) throws(HapticEngineError)
    /// Stops at `time`; output stops.
    func stop(atTime time: Double) throws(HapticEngineError)
    /// Changes controls from `time` on: each parameter takes effect at `time + relativeTime`.
    func sendParameters(_ parameters: [HapticDynamicParameter], atTime time: Double) throws(HapticEngineError)
    /// Moves a control along `curve` starting at `time`.
    func scheduleParameterCurve(_ curve: HapticParameterCurve, atTime time: Double) throws(HapticEngineError)
    /// Stops now and drops every command not yet carried out.
    func cancel() throws(HapticEngineError)
    /// Whether the player is silenced (it keeps its place).
    var isMuted: Bool { get set }
}

/// A player with looping, seeking, rate, pause and a completion handler (`CHHapticAdvancedPatternPlayer`).
public protocol HapticAdvancedPatternPlayer: HapticPatternPlayer {
    /// Whether playback loops between 0 and ``loopEnd``.
    var loopEnabled: Bool { get set }
    /// Where a loop ends, in pattern seconds; 0 (the default) means the pattern's end. Set values
    /// are clamped to 0 … ``HapticPattern/maximumTime``.
    var loopEnd: Double { get set }
    /// Playback speed: 1 normal, 2 twice as fast (0.01 … 100).
    var playbackRate: Double { get set }
    /// The position in the pattern now, in seconds.
    var currentTime: Double { get }
    /// Moves to `offset` seconds into the pattern (now, playing or not), clamped to 0 … ``HapticPattern/maximumTime``.
    func seek(toOffset offset: Double) throws(HapticEngineError)
    /// Pauses at `time`, keeping the position.
    func pause(atTime time: Double) throws(HapticEngineError)
    /// Resumes at `time` from the paused position.
    func resume(atTime time: Double) throws(HapticEngineError)
    /// Called when playback ends: `nil` when it played to its end, an error when stopped early.
    var completionHandler: (@Sendable ((any Error)?) -> Void)? { get set }
}

/// The one implementation of both player protocols: a handle on state kept by the engine.
final class PatternPlayer: HapticAdvancedPatternPlayer {
    let engine: HapticEngine
    let id: UInt64

    init(engine: HapticEngine, id: UInt64) {
        self.engine = engine
        self.id = id
    }

    deinit { engine.release(player: id) }

    func start(atTime time: Double) throws(HapticEngineError) {
        try engine.send(.start, to: id, at: time)
    }

    func stop(atTime time: Double) throws(HapticEngineError) {
        try engine.send(.stop, to: id, at: time)
    }

    func sendParameters(_ parameters: [HapticDynamicParameter], atTime time: Double) throws(HapticEngineError) {
        for parameter in parameters {
            guard parameter.value.isFinite else { throw .invalidValue(name: parameter.id.rawValue, value: parameter.value, expected: "finite numbers") }
            // Negative offsets take effect at once; later ones are bounded like a pattern's times.
            guard parameter.relativeTime.isFinite, parameter.relativeTime <= HapticPattern.maximumTime else {
                throw .invalidValue(
                    name: "\(parameter.id.rawValue) relativeTime", value: parameter.relativeTime,
                    expected: "...\(JSONValue.format(HapticPattern.maximumTime)) s")
            }
        }
        try engine.send(.parameters(parameters), to: id, at: time)
    }

    func scheduleParameterCurve(_ curve: HapticParameterCurve, atTime time: Double) throws(HapticEngineError) {
        let checked: HapticParameterCurve
        do { checked = try HapticPattern.checked(curve, index: 0) } catch {
            throw .invalidValue(name: "\(curve.id.rawValue) curve", value: .nan, expected: error.problem)
        }
        try engine.send(.curve(checked), to: id, at: time)
    }

    func cancel() throws(HapticEngineError) {
        // No pass between dropping the commands and the stop: it could send one more frame of drive.
        _ = engine.updatePlayer(id, render: false) { player, _ in player.pending.removeAll() }
        try engine.send(.stop, to: id, at: 0)
    }

    var isMuted: Bool {
        get { engine.readPlayer(id) { player, _ in player.isMuted } ?? false }
        set { _ = engine.updatePlayer(id) { player, _ in player.isMuted = newValue } }
    }

    var loopEnabled: Bool {
        get { engine.readPlayer(id) { player, _ in player.loopEnabled } ?? false }
        set { _ = engine.updatePlayer(id) { player, now in player.rebase(at: now); player.loopEnabled = newValue } }
    }

    var loopEnd: Double {
        get { engine.readPlayer(id) { player, _ in player.loopEnd } ?? 0 }
        set { _ = engine.updatePlayer(id) { player, now in player.rebase(at: now); player.loopEnd = min(max(newValue.isFinite ? newValue : 0, 0), HapticPattern.maximumTime) } }
    }

    var playbackRate: Double {
        get { engine.readPlayer(id) { player, _ in player.rate } ?? 1 }
        set {
            let rate = newValue.isFinite ? min(max(newValue, 0.01), 100) : 1
            _ = engine.updatePlayer(id) { player, now in
                player.rebase(at: now)
                player.rate = rate
            }
        }
    }

    var currentTime: Double {
        engine.readPlayer(id) { player, now in player.position(at: now) } ?? 0
    }

    func seek(toOffset offset: Double) throws(HapticEngineError) {
        guard offset.isFinite else { throw .invalidTime(offset) }
        _ = engine.updatePlayer(id) { player, now in
            player.startOffset = min(max(offset, 0), HapticPattern.maximumTime)
            player.anchor = now
            if player.status == .finished { player.status = .idle }
        }
    }

    func pause(atTime time: Double) throws(HapticEngineError) {
        try engine.send(.pause, to: id, at: time)
    }

    func resume(atTime time: Double) throws(HapticEngineError) {
        try engine.send(.resume, to: id, at: time)
    }

    var completionHandler: (@Sendable ((any Error)?) -> Void)? {
        get { engine.readPlayer(id) { player, _ in player.completion } ?? nil }
        set { _ = engine.updatePlayer(id) { player, _ in player.completion = newValue } }
    }
}
