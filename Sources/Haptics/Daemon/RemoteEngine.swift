import CHapticsABI
import Synchronization

/// The daemon-mode half of a ``HapticEngine`` whose devices hapticsd owns: players and feedback are
/// sent to the service as patterns, effect names and commands; it renders and schedules them.
/// Engine times are `CLOCK_MONOTONIC` seconds in both processes, so scheduled starts keep their meaning.
final class RemoteEngine: Sendable {
    let client: ServiceLink
    let deviceIDs: [String]
    /// One-shot plays (effects, fire-and-forget patterns) not yet ended, so ``stopAll()`` reaches them.
    private let oneShots = Mutex<Set<UInt64>>([])

    init(client: ServiceLink, deviceIDs: [String]) {
        self.client = client
        self.deviceIDs = deviceIDs
    }

    /// The remote engine for `devices`, when every one of them is hapticsd's; nil when none is.
    /// - Throws: ``HapticEngineError/mixedDevices`` for a mix of remote and in-process devices.
    static func make(for devices: [HapticDevice]) throws(HapticEngineError) -> RemoteEngine? {
        let remote = devices.compactMap { $0.actuator as? RemoteActuator }
        guard !remote.isEmpty else { return nil }
        guard remote.count == devices.count, let client = remote.first?.client, remote.allSatisfy({ $0.client === client }) else {
            throw .mixedDevices
        }
        return RemoteEngine(client: client, deviceIDs: devices.map(\.description.id))
    }

    /// A player on the service for `pattern`, one per device.
    func makePlayer(with pattern: HapticPattern) throws(HapticEngineError) -> RemotePatternPlayer {
        let text = pattern.ahapText(pretty: false)
        var ids: [UInt64] = []
        for device in deviceIDs {
            do {
                ids.append(try client.createPlayer(deviceID: device, ahap: text))
            } catch {
                for id in ids { try? client.command(HAPTICS_CLIENT_RELEASE, player: id, at: 0) }
                throw error
            }
        }
        return RemotePatternPlayer(client: client, ids: ids)
    }

    /// Plays `effect` at `scale` on every device through the service's overuse guard (a vocabulary
    /// effect by name, another as its pattern); returns what the guard did on the first device.
    @discardableResult
    func play(_ effect: FeedbackEffect, scale: Double, clock: any HapticClock) -> OveruseGuard.Decision {
        var decision = OveruseGuard.Decision.played
        let known = FeedbackEffect.named(effect.name) == effect
        for (index, device) in deviceIDs.enumerated() {
            do {
                let player: UInt64
                if known {
                    let result = try client.playEffect(deviceID: device, effect: effect.name, intensity: scale)
                    player = result.player
                    if index == 0 {
                        switch result.disposition {
                        case HAPTICS_CLIENT_DEFERRED.rawValue: decision = .deferred(until: clock.now())
                        case HAPTICS_CLIENT_COALESCED.rawValue: decision = .coalesced
                        default: decision = .played
                        }
                    }
                } else {
                    player = try client.playPattern(deviceID: device, ahap: effect.pattern.ahapText(pretty: false), intensity: scale)
                }
                guard player != 0 else { continue }
                track(player)
            } catch {
                client.warn("feedback \(effect.name) did not play on \(device): \(error)")
            }
        }
        return decision
    }

    private func track(_ player: UInt64) {
        oneShots.withLock { _ = $0.insert(player) }
        client.onEnded(player) { [weak self] _ in self?.oneShots.withLock { _ = $0.remove(player) } }
    }

    /// The service's `Prepare` for every device (minimum latency for the next while).
    func prepare() {
        for device in deviceIDs {
            do { try client.prepare(deviceID: device) } catch { client.warn("prepare \(device): \(error)") }
        }
    }

    /// Stops the one-shot plays this engine started (players stop themselves: see ``HapticEngine/stop()``).
    func stopAll() {
        let players = oneShots.withLock { players in
            defer { players.removeAll() }
            return players
        }
        for player in players { try? client.command(HAPTICS_CLIENT_STOP, player: player, at: 0) }
    }
}
