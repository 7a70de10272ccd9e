import Haptics
import HapticsBus

/// One player hapticsd runs for a client: the D-Bus handle (`/org/swifthaptics/Haptics1/player/N`),
/// who owns it, and the engine's player.
final class PlayerRecord {
    /// Where a player came from.
    enum Origin: Equatable {
        /// `PlayEffect`: a vocabulary effect of this overuse-guard kind.
        case effect(name: String, kind: String)
        /// `PlayPattern`: an AHAP document played once (or looped) and released when it ends.
        case pattern
        /// `CreatePlayer`: a player the client starts, stops and releases itself.
        case player
        /// feedbackd's `TriggerFeedback`: the event with this id.
        case feedbackEvent(UInt32)
        /// feedbackd's `Haptic.Vibrate`.
        case vibrate
    }

    let id: UInt64
    /// The unique bus name of the client that created it (only it may control it).
    let owner: String
    let appID: String
    let deviceID: String
    var origin: Origin
    /// Released when it ends (everything but `CreatePlayer`'s players).
    let oneShot: Bool
    /// The pattern's length in seconds (0 while a deferred effect has not started).
    var duration: Double
    /// The pattern's elements (events, parameter changes, curve points): what it counts against its
    /// owner's budget.
    var elements = 0
    /// The engine's player; nil while an effect waits for the overuse guard.
    var player: (any HapticAdvancedPatternPlayer)?
    /// The engine the player belongs to.
    var engine: HapticEngine?
    /// The intensity the client asked for, 0…1 (the app's scale multiplies it).
    var intensity: Double
    /// Whether the client muted it (the app's policy can mute it too).
    var clientMuted = false
    /// Why hapticsd stopped it, when it did (`stopped`, `client-vanished`, `expired`, …); reported in `Ended`.
    var pendingReason: String?
    /// `Release` came while it played: it goes when it ends.
    var released = false

    init(id: UInt64, owner: String, appID: String, deviceID: String, origin: Origin, oneShot: Bool, intensity: Double) {
        self.id = id
        self.owner = owner
        self.appID = appID
        self.deviceID = deviceID
        self.origin = origin
        self.oneShot = oneShot
        self.intensity = intensity
        self.duration = 0
    }

    var path: String { HapticsServiceName.playerPath(id) }

    /// The engine's player and its engine, or the error for an effect still waiting for the overuse
    /// guard (it starts by itself: a client cannot control it yet).
    func started() throws(BusError) -> (player: any HapticAdvancedPatternPlayer, engine: HapticEngine) {
        guard let player, let engine else {
            throw DaemonError.invalidArgument("player", "\(path) waits for the overuse guard and starts by itself")
        }
        return (player, engine)
    }

    /// Whether the engine is playing it (or has it paused).
    var isRunning: Bool {
        guard let player, let engine else { return false }
        let status = engine.status(of: player)
        return status == .playing || status == .paused
    }
}
