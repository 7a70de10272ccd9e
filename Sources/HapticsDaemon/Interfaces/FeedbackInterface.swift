import CHapticsdInterfaces
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

    func feedbackCall(_ call: BusMessage) throws(BusError) {
        switch (call.interface ?? "", call.member ?? "") {
        case (HAPTICSD_FEEDBACK_INTERFACE, "TriggerFeedback"):
            statistics.calls += 1
            do { try triggerFeedback(call) } catch {
                statistics.refuse(error)
                throw error
            }
        case (HAPTICSD_FEEDBACK_INTERFACE, "EndFeedback"):
            let id = try call.reader.uint32()
            // As feedbackd: an id that already ended (or never existed) is not an error; the end races the call.
            if let event = feedback.events[id], let record = players.records[event.playerID] {
                players.stop(record, reason: "stopped")
            }
            try reply(call)
        case (HAPTICSD_FEEDBACK_HAPTIC_INTERFACE, "Vibrate"):
            statistics.calls += 1
            do { try vibrate(call) } catch {
                statistics.refuse(error)
                throw error
            }
        default:
            throw BusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(call.member ?? "?")")
        }
    }

    /// `TriggerFeedback(s app_id, s event, a{sv} hints, i timeout) → u id`.
    private func triggerFeedback(_ call: BusMessage) throws(BusError) {
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
        guard let (themed, section) = feedback.theme.hapticFeedback(for: event, at: level), let pattern = themed.hapticPattern(),
            let owned = devices.defaultDevice, let engine = owned.engine
        else {
            // As feedbackd: the id comes back, then FeedbackEnded says nothing was found to play.
            try reply(call) { writer throws(BusError) in try writer.uint32(id) }
            emitFeedbackEnded(id, .notFound)
            return
        }
        let record = PlayerRecord(
            id: players.allocateID(), owner: sender, appID: app, deviceID: owned.id, origin: .feedbackEvent(id), oneShot: true, intensity: 1)
        try players.attach(record, pattern: pattern, engine: engine, scale: policy.appScale(app: app), muted: !policy.isEnabled(app: app))
        if timeout >= 0 {
            record.player?.loopEnabled = true
            record.player?.loopEnd = max(themed.runLength, pattern.duration)
        }
        feedback.add(FeedbackEvent(id: id, appID: app, event: event, sender: sender, timeout: timeout, section: section, playerID: record.id))
        do {
            try record.player?.start(atTime: 0)
            if timeout > 0 {
                // Until a stop says otherwise, the end is the timeout's.
                record.pendingReason = "expired"
                try record.player?.stop(atTime: engine.currentTime + Double(timeout))
            }
        } catch {
            players.remove(record)
            _ = feedback.removeEvent(id)
            throw DaemonError.deviceFailed(owned.id, "\(error)")
        }
        statistics.played += 1
        try reply(call) { writer throws(BusError) in try writer.uint32(id) }
    }

    /// `Vibrate(s app_id, a(du) pattern) → b`: (amplitude 0…1, duration ms) steps; an empty pattern
    /// stops the app's vibration. Refused (false) when the effective profile is below quiet or there
    /// is no device, as feedbackd does.
    private func vibrate(_ call: BusMessage) throws(BusError) {
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
        if let previous = feedback.vibrations[app], let record = players.records[previous] {
            players.stop(record, reason: "replaced")
        }
        feedback.vibrations[app] = nil
        if steps.isEmpty {
            try reply(call) { writer throws(BusError) in try writer.bool(true) }
            return
        }
        try noteClient(call, app: app)
        try limiter.admit(sender, at: .monotonicNow())
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
        feedback.vibrations[app] = record.id
        statistics.played += 1
        try reply(call) { writer throws(BusError) in try writer.bool(true) }
    }

    /// The global profile changed: events whose feedback comes from a louder section end (feedbackd's rule).
    func profileChanged() {
        for event in feedback.events(above: policy.profile) {
            if let record = players.records[event.playerID] { players.stop(record, reason: "profile") }
        }
        emitPropertiesChanged(["Profile"], path: HAPTICSD_FEEDBACK_OBJECT_PATH, interface: HAPTICSD_FEEDBACK_INTERFACE)
    }
}
