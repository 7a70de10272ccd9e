import Haptics
import HapticsBus

/// feedbackd's `org.sigxcpu.Feedback` and `org.sigxcpu.Feedback.Haptic` at `/org/sigxcpu/Feedback`,
/// as feedbackd serves them (`src/fbd-feedback-manager.c`, `src/fbd-haptic-manager.c`), so existing
/// clients (`fbcli`, libfeedback, GNOME/Phosh apps) work unchanged. Differences are deliberate and
/// listed in Docs/Daemon.md (bad input gets a named error where feedbackd clamps silently).
extension HapticsDaemon {
    /// Most (amplitude, duration) pairs `Vibrate` takes, and the longest duration, in ms (feedbackd's limits).
    static let vibrateMaximumItems = 10
    static let vibrateMaximumDurationMs: UInt32 = 10_000

    /// Counts a feedbackd play call (`TriggerFeedback`, `Vibrate`), and its refusal, its bad
    /// arguments under feedbackd's error name.
    func feedbackdCounted(_ body: () throws(BusError) -> Void) throws(BusError) {
        try counted { () throws(BusError) in try Self.asFeedbackdError(body) }
    }

    /// `EndFeedback(u id)`.
    func endFeedback(_ call: BusMessage) throws(BusError) {
        let id = try call.reader.uint32()
        // As feedbackd: an id that already ended (or never existed) is not an error; the end races
        // the call. Another client's event is treated as one that does not exist: only the
        // connection that triggered an event may end it. FeedbackEnded goes out before the reply,
        // as feedbackd sends it, so a client sees its event ended when its end call returns.
        if let event = feedback.events[id], event.sender == call.sender {
            endFeedbackEvent(event, reason: "stopped")
        }
        try reply(call)
    }

    /// The errors of bad arguments, under the name feedbackd gives them (and libfeedback's clients
    /// match on): `org.freedesktop.DBus.Error.InvalidArgs`, with hapticsd's message naming the
    /// argument and what it takes. Other errors (a device failing, a throttled client) keep theirs.
    static func asFeedbackdError(_ body: () throws(BusError) -> Void) throws(BusError) {
        do { try body() } catch {
            let arguments = ["InvalidAppId", "InvalidEvent", "InvalidArgument", "InvalidValue"].map { DaemonError.prefix + $0 }
            guard arguments.contains(error.name) else { throw error }
            throw BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: error.message)
        }
    }

    /// `TriggerFeedback(s app_id, s event, a{sv} hints, i timeout) → u id`.
    func triggerFeedback(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let app = try Validation.appID(arguments.string())
        let event = try Validation.eventName(arguments.string())
        let hints = try arguments.dictionary()
        // feedbackd treats anything below -1 as -1 (play once).
        let timeout = max(try arguments.int32(), -1)
        var wanted = FeedbackProfile.full
        var important = false
        for (key, raw) in hints {
            let value = raw.unwrapped
            switch key {
            case "profile":
                guard let name = value.stringValue else { throw DaemonError.invalidArgument("hints.profile", "expected a string (s), found '\(value.signature)'") }
                guard let profile = FeedbackProfile(name: name) else {
                    throw DaemonError.invalidArgument("hints.profile", "'\(name)' is not a profile; use full, quiet or silent")
                }
                wanted = profile
            case "important":
                guard let flag = value.boolValue else { throw DaemonError.invalidArgument("hints.important", "expected a boolean (b), found '\(value.signature)'") }
                important = flag
            default:
                // feedbackd ignores hints it does not know (sound-file plays a sound: not ours to play).
                break
            }
        }
        let sender = call.sender ?? ""
        try noteClient(call, app: app)
        try limiter.admit(sender, at: .monotonicNow())
        let id = feedback.allocateID()
        statistics.feedbackEvents += 1
        let level = policy.effectiveProfile(app: app, wanted: wanted, important: important)
        // The haptic feedback plays when there is a device to play it on (feedbackd's vibra feedback
        // is unavailable without a vibrator, and left out).
        var found = feedback.theme.eventFeedbacks(for: event, at: level)
        let target = devices.defaultDevice.flatMap { owned in owned.engine.map { (owned, $0) } }
        if target == nil { found?.haptic = nil }
        let pattern = found?.haptic?.hapticPattern()
        guard let found, pattern != nil || !found.silentMs.isEmpty else {
            // As feedbackd: the id comes back, then FeedbackEnded says nothing was found to play.
            try reply(call) { writer throws(BusError) in try writer.uint32(id) }
            emitFeedbackEnded(id, .notFound)
            return
        }
        let record: PlayerRecord?
        if let pattern, let haptic = found.haptic, let (owned, engine) = target {
            let made = PlayerRecord(
                id: players.allocateID(), owner: sender, appID: app, deviceID: owned.id, origin: .feedbackEvent(id), oneShot: true, intensity: 1)
            try players.attach(made, pattern: pattern, engine: engine, scale: policy.appScale(app: app), muted: !policy.isEnabled(app: app))
            let run = max(haptic.runLength, pattern.duration)
            if timeout >= 0 {
                made.player?.loopEnabled = true
                made.player?.loopEnd = run
            }
            do {
                try made.player?.start(atTime: 0)
                // feedbackd lets the run under way when the timeout passes finish, then ends naturally.
                if timeout > 0, let end = EventFeedbacks.lifetime(run: run, timeout: timeout) {
                    made.pendingReason = "finished"
                    try made.player?.stop(atTime: engine.currentTime + end)
                }
            } catch {
                players.remove(made)
                throw DaemonError.deviceFailed(owned.id, "\(error)")
            }
            record = made
        } else {
            record = nil
        }
        let started = FeedbackEvent(id: id, appID: app, event: event, sender: sender, timeout: timeout, section: found.section)
        started.playerID = record?.id
        let silent = found.silentMs.map { EventFeedbacks.lifetime(run: Double($0) / 1000, timeout: timeout) }
        if silent.contains(where: { $0 == nil }) {
            started.silentUntilEnded = true
        } else if let longest = silent.compactMap({ $0 }).max(), longest > 0 {
            do {
                started.silentEnd = try loop.timer(after: longest) { [unowned self, unowned started] in
                    started.silentEnd = nil
                    feedbackPartEnded(started, reason: "finished")
                }
            } catch {
                if let record { players.stop(record, reason: "failed") }
                throw DaemonError.deviceFailed("(feedback timer)", "\(error)")
            }
        }
        feedback.add(started)
        statistics.played += 1
        try reply(call) { writer throws(BusError) in try writer.uint32(id) }
        // Feedbacks of no length end at once, after the reply (feedbackd's order).
        if started.feedbacksEnded { feedbackPartEnded(started, reason: "finished") }
    }

    /// Ends `event` now: its player stops, its silent feedbacks stop, FeedbackEnded(id, explicit).
    /// `reason` is the player's (`stopped`, `client-vanished`, `profile`, …).
    func endFeedbackEvent(_ event: FeedbackEvent, reason: String) {
        guard feedback.removeEvent(event.id) != nil else { return }
        event.silentEnd?.cancel()
        event.silentEnd = nil
        event.silentUntilEnded = false
        if let id = event.playerID, let record = players.records[id] { players.stop(record, reason: reason) }
        event.playerID = nil
        emitFeedbackEnded(event.id, .explicit)
    }

    /// One part of `event` (its player, or its silent feedbacks) ended with `reason`: the event ends
    /// when every part has, naturally; any other end of a part (the device went, a stop) ends it all.
    func feedbackPartEnded(_ event: FeedbackEvent, reason: String) {
        guard feedback.events[event.id] === event else { return }
        guard reason == "finished" else {
            endFeedbackEvent(event, reason: reason)
            return
        }
        guard event.feedbacksEnded else { return }
        _ = feedback.removeEvent(event.id)
        emitFeedbackEnded(event.id, .natural)
    }

    /// `Vibrate(s app_id, a(du) pattern) → b`: (amplitude 0…1, duration ms) steps; an empty pattern
    /// stops the app's vibration. Refused (false) when the effective profile is below quiet or there
    /// is no device, as feedbackd does.
    func vibrate(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let app = try Validation.appID(arguments.string())
        let steps = try arguments.array("(du)") { () throws(BusError) in
            try arguments.structure("du") { () throws(BusError) in (try arguments.double(), try arguments.uint32()) }
        }
        guard steps.count <= Self.vibrateMaximumItems else {
            throw DaemonError.invalidArgument("pattern", "\(steps.count) steps; at most \(Self.vibrateMaximumItems) are allowed")
        }
        var magnitudes: [Double] = []
        var durations: [Int] = []
        for (index, step) in steps.enumerated() {
            magnitudes.append(try Validation.number(step.0, "pattern[\(index)].amplitude", in: 0...1))
            guard step.1 <= Self.vibrateMaximumDurationMs else {
                throw DaemonError.invalidValue("pattern[\(index)].duration", Double(step.1), expected: "0…\(Self.vibrateMaximumDurationMs) ms")
            }
            durations.append(Int(step.1))
        }
        let sender = call.sender ?? ""
        try noteClient(call, app: app)
        try limiter.admit(sender, at: .monotonicNow())
        // A vibration belongs to the connection that started it: the same app id from another
        // connection neither replaces nor stops it.
        if let previous = feedback.vibrations[sender]?[app], let record = players.records[previous] {
            players.stop(record, reason: "replaced")
        }
        feedback.vibrations[sender]?[app] = nil
        if steps.isEmpty {
            try reply(call) { writer throws(BusError) in try writer.bool(true) }
            return
        }
        guard policy.effectiveProfile(app: app, wanted: .quiet, important: false) >= .quiet, let owned = devices.defaultDevice, let engine = owned.engine,
            let pattern = ThemeFeedback.vibraPattern(magnitudes: magnitudes, durationsMs: durations).hapticPattern()
        else {
            try reply(call) { writer throws(BusError) in try writer.bool(false) }
            return
        }
        let record = PlayerRecord(id: players.allocateID(), owner: sender, appID: app, deviceID: owned.id, origin: .vibrate, oneShot: true, intensity: 1)
        try players.attach(record, pattern: pattern, engine: engine, scale: policy.appScale(app: app), muted: !policy.isEnabled(app: app))
        do {
            try record.player?.start(atTime: 0)
        } catch {
            players.remove(record)
            throw DaemonError.deviceFailed(owned.id, "\(error)")
        }
        feedback.vibrations[sender, default: [:]][app] = record.id
        statistics.played += 1
        try reply(call) { writer throws(BusError) in try writer.bool(true) }
    }

    /// The global profile changed: events whose feedback comes from a louder section end (feedbackd's rule).
    func profileChanged() {
        for event in feedback.events(above: policy.profile) { endFeedbackEvent(event, reason: "profile") }
        emitPropertiesChanged(["Profile"], path: FeedbackdServiceName.objectPath, interface: FeedbackdServiceName.interface)
    }
}
