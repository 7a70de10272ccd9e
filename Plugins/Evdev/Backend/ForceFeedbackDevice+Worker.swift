import CEvdevShim
import CHapticsABI
import EvdevEffects
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// The device's worker thread: it performs what may not run on the host's thread (a uinput device's
/// uploads, which wait for its driver process), refreshes held drives, plays the delay line, and
/// closes the descriptor. It owns no state of its own: it takes each step from the device's guarded
/// state and writes the outcome back.
extension ForceFeedbackDevice {
    /// The flattened effect for the shim (`replay.length` bounded, see ``EvdevEffects/ReplayPolicy``).
    static func effect(_ parameters: EffectParameters, id: Int32) -> haptics_evdev_effect {
        haptics_evdev_effect(
            type: UInt16(parameters.type), id: Int16(truncatingIfNeeded: id), length_ms: ReplayPolicy.lengthMilliseconds,
            strong: parameters.strong, weak: parameters.weak, magnitude: parameters.magnitude, period_ms: parameters.periodMilliseconds,
            level: parameters.level)
    }

    /// Stops (if playing), erases (unless the device is gone) and closes; the errno of the first
    /// failed call, if any.
    static func shutdown(fd: Int32, id: Int32, playing: Bool, erase: Bool) -> Int32? {
        var error: Int32?
        if erase, id >= 0 {
            if playing {
                let stopped = haptics_evdev_play(fd, id, 0)
                if stopped < 0 { error = -stopped }
            }
            let erased = haptics_evdev_erase(fd, id)
            if erased < 0, error == nil { error = -erased }
        }
        Glibc.close(fd)
        return error == ENODEV ? nil : error
    }

    static func workerLoop(shared: Guarded<State>, input: DiscoveredInput) {
        // The worker keeps a held drive alive (the refresh before `replay.length` runs out) and makes
        // the updates the host hands over: starved by busier threads, a held drive would stop early.
        // Like the HID writer it outranks the engine's scheduler thread (priority 20); without the
        // privilege it stays a normal thread.
        PosixThread.requestRealtimeForCurrentThread(priority: 21)
        let refresh = ReplayPolicy.refreshMilliseconds * 1_000_000
        while true {
            let step = shared.wait { state -> Guarded<State>.Decision<Step> in
                // A close waits until the delay line has played out (its last state is the stop).
                if state.fd >= 0, state.lost != nil || (state.closeRequested && state.line.isEmpty) {
                    let fd = state.fd, id = state.effectID, playing = state.playing, erase = state.lost == nil
                    state.fd = -1
                    state.effectID = -1
                    state.uploaded = nil
                    state.playing = false
                    state.busy = true
                    state.line.removeAll()
                    state.lineClock = nil
                    return .done(.shutdown(fd: fd, id: id, playing: playing, erase: erase))
                }
                if state.fd < 0 {
                    state.workerPolling = false
                    state.line.removeAll()
                    state.lineClock = nil
                    return state.terminate ? .done(.exit) : .sleep
                }
                state.workerPolling = true
                let now = Monotonic.now()
                let lineDue = advanceLine(&state, now: now)
                if state.needsWork {
                    state.busy = true
                    return .done(
                        .reconcile(
                            fd: state.fd, id: state.effectID, uploaded: state.uploaded, desired: state.desired, playing: state.playing,
                            askedAt: state.lineClock?.askedAt))
                }
                // While the device is awake the worker looks every refresh interval whether a drive is
                // held, so the host's calls never need to wake it for a play they made themselves.
                if state.playing, state.desired != nil {
                    let due = state.lastPlay + refresh
                    if now >= due {
                        state.busy = true
                        return .done(.refresh(fd: state.fd, id: state.effectID))
                    }
                    return .sleepUntil(min(due, lineDue ?? due))
                }
                return .sleepUntil(min(now + refresh, lineDue ?? .max))
            }
            switch step {
            case .exit:
                return
            case .shutdown(let fd, let id, let playing, let erase):
                let error = shutdown(fd: fd, id: id, playing: playing, erase: erase)
                shared.locked { state in
                    state.busy = false
                    state.closeRequested = false
                    if let error, state.lost == nil {
                        state.pendingFailure = BackendFailure(
                            code: error, "\(input.id): cannot stop the effect on \(input.facts.eventNode): \(String(cString: strerror(error)))")
                    }
                }
            case .refresh(let fd, let id):
                let result = haptics_evdev_play(fd, id, 1)
                let now = Monotonic.now()
                shared.locked { state in
                    state.busy = false
                    if result == 0 {
                        state.lastPlay = now
                    } else {
                        worker(failed: -result, "refresh the effect on", state: &state, input: input)
                    }
                }
            case .reconcile(let fd, var id, var uploaded, let desired, var playing, let askedAt):
                var error: (Int32, String)?
                if let desired {
                    if desired != uploaded {
                        let outcome = performUpload(fd: fd, id: id, desired, playing: playing)
                        playing = outcome.playing
                        if outcome.result >= 0 {
                            id = outcome.result
                            uploaded = desired
                        } else {
                            error = (-outcome.result, "upload \(desired) to")
                        }
                    }
                    if error == nil {
                        let result = haptics_evdev_play(fd, id, 1)
                        if result == 0 { playing = true } else { error = (-result, "play the effect on") }
                    }
                } else if playing {
                    let result = haptics_evdev_play(fd, id, 0)
                    if result == 0 { playing = false } else { error = (-result, "stop the effect on") }
                }
                let now = Monotonic.now()
                shared.locked { state in
                    state.busy = false
                    state.effectID = id
                    state.uploaded = uploaded
                    state.playing = playing
                    if playing {
                        state.lastPlay = now
                        state.lastPlayed = uploaded
                    }
                    // The line's state began when the driver took it: the next one is due as much later
                    // as the host asked for it later.
                    if let askedAt, state.lineClock?.askedAt == askedAt { state.lineClock = (playedAt: now, askedAt: askedAt) }
                    if let (code, what) = error {
                        worker(failed: code, what, state: &state, input: input)
                        // Leave it stopped: the host hears of the failure with its next call.
                        if state.lost == nil, id >= 0 { _ = haptics_evdev_play(fd, id, 0) }
                        state.playing = false
                    }
                }
            }
            shared.broadcast()
        }
    }

    /// Takes the delay line's next state into `desired` once it is due; returns when the next one
    /// will be (nil: the line is empty).
    private static func advanceLine(_ state: inout State, now: UInt64) -> UInt64? {
        guard !state.line.isEmpty else { return nil }
        // A backlog the driver fell too far behind on collapses towards its newest state.
        while state.line.count > 1, now - state.line[1].at > maximumLag { state.line.removeFirst() }
        let next = state.line[0]
        var due = now
        if let clock = state.lineClock, clock.playedAt - min(clock.playedAt, clock.askedAt) <= maximumLag {
            due = clock.playedAt + (next.at - min(next.at, clock.askedAt))
        }
        guard now >= due else { return due }
        state.line.removeFirst()
        state.desired = next.parameters
        // Silence ends the line: the host's frames go out directly again.
        state.lineClock = next.parameters == nil ? nil : (playedAt: now, askedAt: next.at)
        return state.line.isEmpty ? nil : now
    }

    /// Records a failure of the worker's call.
    private static func worker(failed code: Int32, _ what: String, state: inout State, input: DiscoveredInput) {
        state.desired = nil
        state.line.removeAll()
        state.lineClock = nil
        if code == ENODEV {
            if state.lost == nil {
                state.lost = BackendFailure(code: ENODEV, "\(input.id): \(input.facts.eventNode) disappeared")
            }
        } else {
            state.pendingFailure = BackendFailure(
                code: code, "\(input.id): cannot \(what) \(input.facts.eventNode): \(String(cString: strerror(code)))")
        }
    }
}
