import Logging
import Synchronization

/// The player table: registering patterns, starting them now or later, commands, release.
extension HapticEngine {
    /// Makes a player of `pattern` in the table; its `AudioCustom` events find `clips` by name, or
    /// by default the engine's registered clips.
    func register(_ pattern: HapticPattern, clips given: [String: AudioClip]? = nil) -> UInt64 {
        // Built before the lock: a pattern of tens of thousands of events takes a while, and the
        // scheduler thread and every other player wait for the lock.
        let clips = pattern.events.contains { $0.type == .audioCustom } ? given ?? audioResources.withLock { $0.byName } : [:]
        let timeline = PatternTimeline(pattern: pattern, clips: clips)
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
    /// `feedback` names the vocabulary effect the timeline is, if it is one (see ``PlayerState/feedback``).
    func play(_ timeline: PatternTimeline, intensityScale: Double, feedback: String? = nil, at now: HapticInstant) throws(HapticEngineError) {
        var notices: [Notice] = []
        let failure = core.withLock { core in
            playLocked(timeline, intensityScale: intensityScale, feedback: feedback, at: now, &core, notices: &notices)
        }
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
            return (decision, playLocked(effect.timeline, intensityScale: scale, feedback: effect.name, at: now, &core, notices: &notices))
        }
        deliver(notices)
        return result
    }

    /// Starts `timeline` as a player of its own that leaves the table when it ends, under the lock;
    /// `feedback` names the vocabulary effect it is, if it is one.
    func playLocked(
        _ timeline: PatternTimeline, intensityScale: Double, feedback: String?, at now: HapticInstant, _ core: inout Core, notices: inout [Notice]
    ) -> HapticEngineError? {
        if !core.running {
            guard core.outputs.contains(where: { !$0.lost }) else { return .allDevicesLost }
            startLocked(&core)
        }
        let id = core.nextPlayerID
        core.nextPlayerID += 1
        var player = PlayerState(timeline: timeline)
        player.intensityScale = intensityScale
        player.feedback = feedback
        player.isOrphan = true
        // Started before it is stored: one insertion, no copy of the state out of the table.
        var failures: [(index: Int, error: DeviceError)] = []
        let next = startNow(&player, on: &core.outputs, policy: core.policy, longestTap: core.longestTap, now: now, failures: &failures, notices: &notices)
        started(&core, at: now, next: next, failures: failures, notices: &notices)
        core.players.append(id, player)
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
    func startNow(
        _ player: inout PlayerState, on outputs: inout [DeviceOutput], policy: HapticPolicy, longestTap: Double, now: HapticInstant,
        failures: inout [(index: Int, error: DeviceError)], notices: inout [Notice]
    ) -> HapticInstant {
        apply(.start, at: now, to: &player, notices: &notices)
        startNative(&player, on: &outputs, policy: policy, failures: &failures)
        // Untouched controls change nothing: no array of their values to build.
        let untouched = player.controls.tracks.isUntouched
        let external = untouched ? nil : player.controls.tracks.values(at: now.seconds)
        let scale = player.intensityScale * policy.intensityScale
        let end = player.timeline.end(transientDuration: longestTap)
        var fullPass = false
        var firstChange: HapticInstant?
        // Clips are mixed by the full pass, which follows at once.
        if !player.timeline.clipEvents.isEmpty { fullPass = true }
        for index in outputs.indices where !outputs[index].lost {
            if outputs[index].faulted { outputs[index].faulted = false }
            if player.isNative(on: index) { continue }
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
                for voice in voices where !voice.audio || outputs[index].takesClips {
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

    /// At a start of `player`, a feedback effect's: every silent device that stores an effect
    /// fitting it starts that (ABI 1.8), and the player renders nothing for it. Waking the device
    /// begins the engine's activity on it, which holds it awake while the player plays and lets
    /// it idle once the stored effect has ended. A device playing frames already mixes the effect
    /// into them instead. A device that cannot start it renders it with frames too (logged); one
    /// that is gone is left in `failures`.
    func startNative(_ player: inout PlayerState, on outputs: inout [DeviceOutput], policy: HapticPolicy, failures: inout [(index: Int, error: DeviceError)]) {
        player.native = 0
        guard let effect = player.feedback, policy.isEnabled, !player.isMuted else { return }
        let scale = player.intensityScale * policy.intensityScale
        for index in outputs.indices where index < UInt64.bitWidth && outputs[index].hasNativeEffects && !outputs[index].lost && outputs[index].isSilent {
            guard let sequence = outputs[index].nativeFeedback(effect, scale: scale) else { continue }
            let device = outputs[index].device
            do throws(DeviceError) {
                if !outputs[index].active {
                    try device.beginActivity()
                    outputs[index].active = true
                }
                try device.startNative(sequence)
                outputs[index].faulted = false
                player.native |= 1 << UInt64(index)
            } catch where error.isDeviceLost {
                failures.append((index, error))
            } catch {
                logger.warning("\(error); \(effect) plays with frames")
            }
        }
    }

    /// After ``startNow(_:on:policy:longestTap:now:failures:notices:)``: notes the activity, fails
    /// the devices that failed, and arms the engine's next pass for `next`.
    func started(
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
}
