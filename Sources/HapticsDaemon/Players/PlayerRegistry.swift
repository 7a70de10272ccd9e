import Haptics
import HapticsBus
import Logging

/// Every player hapticsd runs, by handle. Confined to the main thread; the engines' completion
/// handlers (on their scheduler thread) hand each end over through the ``WakeupQueue``.
final class PlayerRegistry {
    private(set) var records: [UInt64: PlayerRecord] = [:]
    private var nextID: UInt64 = 1
    private let queue: WakeupQueue
    private let logger: Logger
    /// Called on the main thread when a player ended (played out, stopped, its device lost), with the reason.
    var onEnded: ((PlayerRecord, String) -> Void)?

    init(queue: WakeupQueue, logger: Logger) {
        self.queue = queue
        self.logger = logger
    }

    /// A fresh id (a path not yet in use).
    func allocateID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// The player at `path`, whoever owns it (anyone may read a player's properties).
    /// - Throws: `UnknownPlayer`.
    func record(at path: String) throws(BusError) -> PlayerRecord {
        guard let id = HapticsServiceName.playerID(fromPath: path), let record = records[id], !record.released else {
            throw DaemonError.unknownPlayer(path)
        }
        return record
    }

    /// The player at `path` for `sender`.
    /// - Throws: `UnknownPlayer`, or `NotOwner` when it belongs to another connection.
    func record(at path: String, for sender: String?) throws(BusError) -> PlayerRecord {
        let record = try record(at: path)
        guard record.owner == sender else { throw DaemonError.notOwner(path) }
        return record
    }

    /// A pattern's elements: events, parameter changes and curve control points.
    static func elements(of pattern: HapticPattern) -> Int {
        pattern.events.count + pattern.parameters.count + pattern.parameterCurves.reduce(0) { $0 + $1.controlPoints.count }
    }

    /// The elements `owner`'s players hold together.
    func elements(ownedBy owner: String) -> Int {
        records.values.reduce(0) { $0 + ($1.owner == owner ? $1.elements : 0) }
    }

    /// How many players `owner` holds.
    func count(ownedBy owner: String) -> Int {
        records.values.reduce(0) { $0 + ($1.owner == owner ? 1 : 0) }
    }

    /// The players `owner` holds.
    func records(ownedBy owner: String) -> [PlayerRecord] {
        records.values.filter { $0.owner == owner }.sorted { $0.id < $1.id }
    }

    /// Registers `record` (its player attached later for a deferred effect).
    func insert(_ record: PlayerRecord) {
        records[record.id] = record
    }

    /// Makes the engine's player for `record` from `pattern` on `engine`, scaled and muted as given.
    func attach(_ record: PlayerRecord, pattern: HapticPattern, engine: HapticEngine, scale: Double, muted: Bool, feedback: String? = nil) throws(BusError) {
        let player = try maker.make(record.id, pattern: pattern, engine: engine, scale: scale, muted: muted, device: record.deviceID, feedback: feedback)
        adopt(record, player: player, engine: engine, pattern: pattern)
    }

    /// Registers `record` with `player`, made for it by ``maker`` (on any thread).
    func adopt(_ record: PlayerRecord, player: any HapticAdvancedPatternPlayer, engine: HapticEngine, pattern: HapticPattern) {
        record.player = player
        record.engine = engine
        record.duration = pattern.duration
        record.elements = Self.elements(of: pattern)
        records[record.id] = record
    }

    /// What makes the engine's players for records: usable from any thread (the service's parse
    /// worker makes the players of large documents), their ends reported on the main thread.
    var maker: Maker { Maker(queue: queue, registry: UncheckedMain(self)) }

    /// Makes engine players whose ends reach the registry (see ``maker``).
    struct Maker: Sendable {
        let queue: WakeupQueue
        let registry: UncheckedMain<PlayerRegistry>

        /// The engine's player for record `id`, from `pattern` on `engine`, scaled and muted as given;
        /// its `AudioCustom` events find `clips` (its client's, ``AudioStore``) by name; `feedback` names the vocabulary
        /// effect `pattern` is, so a device storing a fitting effect plays that.
        func make(
            _ id: UInt64, pattern: HapticPattern, engine: HapticEngine, scale: Double, muted: Bool, device: String,
            clips: [String: AudioClip] = [:], feedback: String? = nil
        ) throws(BusError) -> any HapticAdvancedPatternPlayer {
            let queue = self.queue, registry = self.registry
            do {
                return try engine.makeAdvancedPlayer(with: pattern, intensityScale: scale, muted: muted, clips: clips, feedback: feedback) { error in
                    queue.post { registry.value.playerFinished(id, error: error) }
                }
            } catch {
                throw DaemonError.deviceFailed(device, "\(error)")
            }
        }
    }

    /// Stops `record` now (dropping a start still to come), ending it with `reason`: a playing player
    /// reports `Ended` when the engine has stopped it; one that was not playing yet (a deferred effect,
    /// a one-shot pattern scheduled for later) ends here.
    func stop(_ record: PlayerRecord, reason: String) {
        let running = record.isRunning
        record.pendingReason = reason
        if let player = record.player {
            do { try player.cancel() } catch { logger.warning("stopping \(record.path): \(error)") }
        }
        guard !running else { return }
        record.pendingReason = nil
        if record.oneShot || record.player == nil || record.released {
            remove(record)
            onEnded?(record, reason)
        }
    }

    /// `Release`: forgets the player; one that plays is stopped and goes when it ends.
    func release(_ record: PlayerRecord) {
        record.released = true
        stop(record, reason: "released")
    }

    func remove(_ record: PlayerRecord) {
        records[record.id] = nil
        record.player?.completionHandler = nil
    }

    /// A player's completion handler fired (main thread, through the queue).
    private func playerFinished(_ id: UInt64, error: (any Error)?) {
        guard let record = records[id] else { return }
        let reason: String
        if let pending = record.pendingReason {
            reason = pending
        } else if error == nil {
            reason = "finished"
        } else if let engineError = error as? HapticEngineError, engineError == .engineStopped {
            reason = "device-lost"
        } else {
            reason = "stopped"
        }
        record.pendingReason = nil
        if record.oneShot || record.released { remove(record) }
        onEnded?(record, reason)
    }

    /// Ends every player, for the service stopping: each is stopped and reported with `reason` at once.
    func endAll(reason: String) -> [PlayerRecord] {
        let all = records.values.sorted { $0.id < $1.id }
        for record in all {
            record.player?.completionHandler = nil
            try? record.player?.cancel()
        }
        records.removeAll()
        return all
    }
}
