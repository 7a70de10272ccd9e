import Logging
import Synchronization

/// The scheduler pass: rendering every player's frame for each device, device failures and losses,
/// shutting down when idle, and delivering notices outside the lock.
extension HapticEngine {
    func update(_ body: (inout Core) -> Void) {
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
    func render(_ core: inout Core, now: HapticInstant, notices: inout [Notice]) {
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
                apply(first.command, at: first.time, to: &core.players.slots[slot].state, notices: &notices)
                if case .start = first.command {
                    startedThisPass = true
                    var failures: [(index: Int, error: DeviceError)] = []
                    startNative(&core.players.slots[slot].state, on: &core.outputs, policy: core.policy, failures: &failures)
                    for failure in failures { fail(&core, index: failure.index, error: failure.error, notices: &notices) }
                }
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
            if core.outputs[index].mixed != core.outputs[index].lastDrives || (core.outputs[index].takesClips && core.outputs[index].clipsChanged) {
                let earliest = core.outputs[index].nextUpdate(orNow: now)
                if earliest > now {
                    consider(earliest)
                } else if core.outputs[index].active {
                    do {
                        try device.submit(DriveFrame(
                            time: now, channels: core.outputs[index].mixed, levels: core.outputs[index].mapper.sendsLevels, clips: core.outputs[index].clips))
                        core.outputs[index].record(core.outputs[index].mixed)
                        if core.outputs[index].takesClips { core.outputs[index].recordClips() }
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
    static func render(
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
            // The device plays it from its own stored effects: only the player's end counts.
            if player.isNative(on: index) {
                consider(player.instant(ofChange: nil, end: end, from: now, position: position))
                continue
            }
            let step = outputs[index].step
            let shape = outputs[index].mapper.profile.transient
            outputs[index].voices.removeAll(keepingCapacity: true)
            let (nextPosition, underWay) = player.timeline.evaluate(
                at: position, shape: shape, external: external, step: step, startWindow: outputs[index].mapper.startWindow, into: &outputs[index].voices)
            if let scale, !player.isMuted { outputs[index].mixVoices(scale: player.intensityScale * scale) }
            consider(player.instant(ofChange: nextPosition, end: end, from: now, position: position))
            if outputs[index].takesClips, !player.timeline.clipEvents.isEmpty {
                // A clip's voice says when its first frame plays: as far before now as the pattern
                // has gone past its start, at the player's rate.
                let rate = max(player.rate, 1e-9)
                let gain = scale.map { player.isMuted ? 0 : player.intensityScale * $0 } ?? 0
                let next = player.timeline.soundingClips(at: position) { event in
                    guard gain > 0, outputs[index].clips.count < InlineClips.capacity else { return }
                    outputs[index].clips.append(ClipVoice(
                        clip: event.clip, start: now.advanced(bySeconds: -(position - event.start) / rate), gain: event.volume * gain, speed: rate,
                        length: event.length, loops: event.loops))
                }
                consider(player.instant(ofChange: next, end: end, from: now, position: position))
            }
            if externalRamping, underWay { consider(now.advanced(bySeconds: step)) }
        }
        return true
    }

    func apply(_ command: PlayerCommand, at time: HapticInstant, to player: inout PlayerState, notices: inout [Notice]) {
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

    func fail(_ core: inout Core, index: Int, error: DeviceError, notices: inout [Notice]) {
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
            core.outputs[index].forgetClips()
            if core.outputs[index].active {
                core.outputs[index].device.endActivity()
                core.outputs[index].active = false
            }
        }
    }

    func deviceLost(_ index: Int, _ error: DeviceError) {
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

    func startLocked(_ core: inout Core) {
        guard !core.running else { return }
        core.running = true
        core.lastActivity = clock.now()
    }

    /// Stops everything; `reason` nil for an explicit stop or when no device is left (already reported).
    func shutDown(_ core: inout Core, reason: StoppedReason?, notices: inout [Notice]) {
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
            // Silence, clips included: a prepared device stays awake, and a clip would play on.
            if output.lastDrives.contains(where: { $0.amplitude > 0 }) || !output.lastClips.isEmpty {
                try? output.device.submit(DriveFrame.silence(channelCount: output.lastDrives.count, at: clock.now()))
            }
            if output.active { output.device.endActivity() }
            core.outputs[index].active = false
            core.outputs[index].record(output.silence)
            core.outputs[index].forgetClips()
            core.outputs[index].lastSubmit = nil
        }
        core.running = false
        reschedule(&core, at: nil, force: true)
        if let reason { notices.append(.stopped(reason)) }
    }

    /// Arms the scheduler for `next`. An armed wake that comes no later is kept (a pass that finds
    /// nothing due costs less than a cancel and a reschedule on every pass); `force` replaces it
    /// whatever it is (a stop: nothing may run after it).
    func reschedule(_ core: inout Core, at next: HapticInstant?, force: Bool = false) {
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

    func scheduledTick() {
        core.withLock { core in
            // The armed wake is the one running unless it was replaced meanwhile by an earlier
            // one: a wake that is due is done either way (its pass is this one).
            if let wake = core.wake, wake.at <= clock.now() { core.wake = nil }
        }
        tick()
    }

    /// Runs the handlers of `notices`, outside the lock. Inlined: most calls have none.
    @inline(__always)
    func deliver(_ notices: [Notice]) {
        if !notices.isEmpty { deliverNow(notices) }
    }

    func deliverNow(_ notices: [Notice]) {
        let handler = core.withLock { $0.stoppedHandler }
        for notice in notices {
            switch notice {
            case .stopped(let reason): handler?(reason)
            case .completion(let completion, let error): completion(error)
            }
        }
    }
}
