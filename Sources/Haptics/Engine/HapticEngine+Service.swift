/// Where a player is, as a service reports it.
public enum HapticPlayerStatus: String, Sendable, Hashable {
    /// Made, not started (or stopped before it started).
    case idle
    /// Playing.
    case playing
    /// Paused; ``HapticAdvancedPatternPlayer/resume(atTime:)`` continues it.
    case paused
    /// Played to its end or stopped; a start plays it again.
    case finished
}

extension HapticEngine {
    /// A player for `pattern` whose intensities are multiplied by `intensityScale` (0…1), before the
    /// engine's ``policy``: what a service gives each client (the intensity it asked for times its
    /// application's scale), changeable while it plays with ``setIntensityScale(_:of:)``. It starts
    /// muted when `muted`, and calls `completion` as ``HapticAdvancedPatternPlayer/completionHandler``
    /// does; set up in one step, without an engine pass, so a service's start is not delayed.
    /// `clips`, when given, are the clips its `AudioCustom` events find by name instead of the
    /// engine's registered ones (a service's client's own). `feedback`, when `pattern` is a
    /// vocabulary effect's (``FeedbackEffect/pattern``), names it: a device that stores an effect
    /// fitting it plays that instead of frames (a DRV2605L's ROM click for `impact.heavy`).
    public func makeAdvancedPlayer(
        with pattern: HapticPattern, intensityScale: Double, muted: Bool = false, clips: [String: AudioClip]? = nil, feedback: String? = nil,
        completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) throws(HapticEngineError) -> any HapticAdvancedPatternPlayer {
        let player: any HapticAdvancedPatternPlayer
        if let clips, remote == nil {
            player = PatternPlayer(engine: self, id: register(pattern, clips: clips))
        } else {
            player = try makeAdvancedPlayer(with: pattern)
        }
        guard let local = player as? PatternPlayer else { return player }
        let clamped = intensityScale.isFinite ? min(max(intensityScale, 0), 1) : 0
        _ = updatePlayer(local.id, render: false) { state, _ in
            state.intensityScale = clamped
            state.isMuted = muted
            state.feedback = feedback
            state.completion = completion
        }
        return player
    }

    /// Multiplies every intensity of `player` (made by this engine) by `scale` (0…1) from the next frame.
    public func setIntensityScale(_ scale: Double, of player: any HapticPatternPlayer) {
        guard let player = player as? PatternPlayer, player.engine === self else { return }
        let clamped = scale.isFinite ? min(max(scale, 0), 1) : 0
        _ = updatePlayer(player.id) { state, _ in state.intensityScale = clamped }
    }

    /// Where `player` (made by this engine) is; nil for another engine's player.
    public func status(of player: any HapticPatternPlayer) -> HapticPlayerStatus? {
        guard let player = player as? PatternPlayer, player.engine === self else { return nil }
        return readPlayer(player.id) { state, _ in
            switch state.status {
            case .idle: HapticPlayerStatus.idle
            case .playing: .playing
            case .paused: .paused
            case .finished: .finished
            }
        }
    }
}
