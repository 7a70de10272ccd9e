import Haptics
import HapticsBus

/// `org.swifthaptics.Haptics1` at `/org/swifthaptics/Haptics1`: devices, effects, patterns, players, policy.
extension HapticsDaemon {
    /// The largest AHAP document a call may carry, in bytes.
    static let maximumAHAPBytes = 4 << 20

    /// `ListDevices() → a(sa{sv}) devices`.
    func listDevices(_ call: BusMessage) throws(BusError) {
        try reply(call) { writer throws(BusError) in
            try writer.container("a", "(sa{sv})") { () throws(BusError) in
                for owned in devices.devices {
                    try writer.container("r", "sa{sv}") { () throws(BusError) in
                        try writer.string(owned.id)
                        try writer.dictionary(details(owned))
                    }
                }
            }
        }
    }

    /// `GetDevice(s device) → a{sv} details`; an empty id means the default device.
    func getDevice(_ call: BusMessage) throws(BusError) {
        let query = try call.reader.string()
        let owned: OwnedDevice
        if query.isEmpty {
            guard let chosen = devices.defaultDevice else { throw DaemonError.unknownDevice("(the default device)", available: devices.devices.map(\.id)) }
            owned = chosen
        } else {
            guard let found = devices.devices.first(where: { $0.id == query }) else {
                throw DaemonError.unknownDevice(query, available: devices.devices.map(\.id))
            }
            owned = found
        }
        try reply(call) { writer throws(BusError) in try writer.dictionary(details(owned)) }
    }

    /// `ListEffects() → a(sss) effects`: name, family, kind.
    func listEffects(_ call: BusMessage) throws(BusError) {
        try reply(call) { writer throws(BusError) in
            try writer.container("a", "(sss)") { () throws(BusError) in
                for effect in FeedbackEffect.vocabulary {
                    try writer.append(.structure([.string(effect.name), .string(effect.family.rawValue), .string(effect.kind)]))
                }
            }
        }
    }

    /// `GetCapabilities() → a{sv} capabilities`: what this service takes, so a client can stay
    /// within it instead of learning each bound from a refusal.
    func getCapabilities(_ call: BusMessage) throws(BusError) {
        try reply(call) { writer throws(BusError) in try writer.dictionary(capabilities()) }
    }

    /// The entries of `GetCapabilities` (Docs/Daemon.md lists them with their units).
    func capabilities() -> [(key: String, value: BusValue)] {
        [
            ("version", .string(Self.version)),
            ("max-pattern-bytes", .uint32(UInt32(Self.maximumAHAPBytes))),
            ("max-calls-per-second", .uint32(UInt32(clamping: options.maxCallsPerSecond))),
            ("max-parse-bytes-per-second", .uint32(UInt32(clamping: limiter.byteLimit))),
            ("max-players-per-client", .uint32(UInt32(clamping: options.maxPlayersPerClient))),
            ("max-elements-per-client", .uint32(UInt32(clamping: options.maxElementsPerClient))),
            ("max-curve-points", .uint32(UInt32(HapticParameterCurve.maximumControlPoints))),
            ("parameters", .strings(HapticDynamicParameter.ID.allCases.map(\.rawValue))),
            ("effects", .uint32(UInt32(FeedbackEffect.vocabulary.count))),
            ("feedbackd", .bool(servesFeedbackd)),
            ("vibrate-max-items", .uint32(UInt32(Self.vibrateMaximumItems))),
            ("vibrate-max-duration-ms", .uint32(Self.vibrateMaximumDurationMs)),
        ]
    }

    /// `Prepare(s app_id, s device)`: wakes the device ahead of a play.
    func prepare(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        _ = try Validation.appID(arguments.string())
        let owned = try devices.resolve(arguments.string())
        owned.device?.prepare()
        try reply(call)
    }

    /// `StopAll()`: stops every player of the caller.
    func stopAll(_ call: BusMessage) throws(BusError) {
        if let sender = call.sender {
            for record in players.records(ownedBy: sender) { players.stop(record, reason: "stopped") }
        }
        try reply(call)
    }

    /// `SetAppPolicy(s app_id, a{sv} policy)`; an empty policy resets the app's.
    func setAppPolicy(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let app = try Validation.appID(arguments.string())
        let entries = try arguments.dictionary()
        let appPolicy = try PolicyStore.appPolicy(from: entries)
        let setter = try authorizeAppPolicy(call.sender, app: app)
        guard appPolicy.isDefault || policy.apps[app] != nil || policy.apps.count < PolicyStore.maximumAppPolicies else {
            throw DaemonError.invalidArgument(
                "app_id", "settings are kept for \(PolicyStore.maximumAppPolicies) apps already; reset one (an empty policy) to make room")
        }
        policy.apps[app] = appPolicy.isDefault ? nil : appPolicy
        appPolicyOwners[app] = appPolicy.isDefault ? nil : setter
        applyAppPolicy(app)
        try reply(call)
        emitPropertiesChanged(["AppPolicies"])
    }

    /// `GetAppPolicy(s app_id) → a{sv} policy`: the app's effective settings.
    func getAppPolicy(_ call: BusMessage) throws(BusError) {
        let app = try Validation.appID(call.reader.string())
        try reply(call) { writer throws(BusError) in try writer.dictionary(effectivePolicy(app)) }
    }

    /// `GetStatistics() → a{sv} statistics`.
    func getStatistics(_ call: BusMessage) throws(BusError) {
        var entries = statistics.entries(
            players: players.records.count, clients: clients.count, guards: guards.count, devices: devices.devices.count,
            uptime: HapticInstant.monotonicNow().seconds(since: started))
        entries.append(("audio-clips", .uint32(UInt32(audio.count))))
        entries.append(("audio-bytes", .uint64(UInt64(audio.bytes))))
        try reply(call) { writer throws(BusError) in try writer.dictionary(entries) }
    }

    /// Counts a play call, and its refusal when it throws.
    func counted(_ body: () throws(BusError) -> Void) throws(BusError) {
        statistics.calls += 1
        do { try body() } catch {
            statistics.refuse(error)
            throw error
        }
    }

    /// What every play call checks first: the app id, the device, the caller's rate and player count.
    private func admit(_ call: BusMessage, app rawApp: String, device query: String) throws(BusError) -> (app: String, device: OwnedDevice, sender: String) {
        let app = try Validation.appID(rawApp)
        let owned = try devices.resolve(query)
        let sender = call.sender ?? ""
        try noteClient(call, app: app)
        try limiter.admit(sender, at: .monotonicNow())
        if players.count(ownedBy: sender) >= options.maxPlayersPerClient { throw DaemonError.tooManyPlayers(sender, limit: options.maxPlayersPerClient) }
        return (app, owned, sender)
    }

    /// `PlayEffect(s app_id, s device, s effect, d intensity) → (o player, s disposition)`.
    func playEffect(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let rawApp = try arguments.string(), query = try arguments.string(), name = try arguments.string()
        let rawIntensity = try arguments.double()
        guard let effect = FeedbackEffect.named(name) else { throw DaemonError.unknownEffect(name) }
        let intensity = try Validation.number(rawIntensity, "intensity", in: 0...1)
        let (app, owned, sender) = try admit(call, app: rawApp, device: query)
        guard let engine = owned.engine else { throw DaemonError.deviceUnavailable(owned.id, reason: owned.unavailableReason ?? "not open") }

        let id = players.allocateID()
        let overuse = guards.guardFor(app: app, device: owned.id)
        let interval = max(policy.minimumInterval(for: effect.kind, app: app), engine.minimumTapInterval())
        let request = UncheckedMain(EffectRequest(daemon: self, id: id, owner: sender, app: app, device: owned))
        let decision = overuse.request(effect, scale: intensity, interval: interval, clock: engine.clock) { effect, scale in
            request.value.play(effect, scale: scale)
        }
        if let failure = request.value.failure { throw failure }
        let path: String
        let disposition: String
        switch decision {
        case .played:
            statistics.played += 1
            path = HapticsServiceName.playerPath(id)
            disposition = "played"
        case .deferred:
            statistics.deferred += 1
            let record = PlayerRecord(
                id: id, owner: sender, appID: app, deviceID: owned.id, origin: .effect(name: effect.name, kind: effect.kind), oneShot: true,
                intensity: intensity)
            players.insert(record)
            guards.setWaiting(id, app: app, device: owned.id, kind: effect.kind)
            path = record.path
            disposition = "deferred"
        case .coalesced:
            statistics.coalesced += 1
            let waiting = guards.waiting(app: app, device: owned.id, kind: effect.kind)
            path = waiting.map { HapticsServiceName.playerPath($0) } ?? "/"
            disposition = "coalesced"
        }
        try reply(call) { writer throws(BusError) in
            try writer.objectPath(path)
            try writer.string(disposition)
        }
    }

    /// One `PlayEffect` call as the overuse guard sees it: what to start when the guard lets it play.
    final class EffectRequest {
        let daemon: HapticsDaemon
        let id: UInt64
        let owner: String
        let app: String
        let device: OwnedDevice
        /// Why the play that ran inline failed.
        var failure: BusError?

        init(daemon: HapticsDaemon, id: UInt64, owner: String, app: String, device: OwnedDevice) {
            self.daemon = daemon
            self.id = id
            self.owner = owner
            self.app = app
            self.device = device
        }

        /// Played at once, this runs inline on the main thread; deferred, it runs on the engine's
        /// scheduler thread when the interval has passed, and is handed to the main thread.
        func play(_ effect: FeedbackEffect, scale: Double) {
            if daemon.isMainThread {
                do throws(BusError) {
                    try daemon.startEffect(id: id, effect: effect, scale: scale, owner: owner, app: app, device: device)
                } catch {
                    failure = error
                }
            } else {
                let request = UncheckedMain(self)
                daemon.queue.post { request.value.daemon.startDeferredEffect(id: request.value.id, effect: effect, scale: scale, app: request.value.app, device: request.value.device) }
            }
        }
    }

    /// Starts an effect now as the one-shot player `id`.
    func startEffect(id: UInt64, effect: FeedbackEffect, scale: Double, owner: String, app: String, device owned: OwnedDevice) throws(BusError) {
        guard let engine = owned.engine else { throw DaemonError.deviceUnavailable(owned.id, reason: owned.unavailableReason ?? "not open") }
        let record = PlayerRecord(
            id: id, owner: owner, appID: app, deviceID: owned.id, origin: .effect(name: effect.name, kind: effect.kind), oneShot: true, intensity: scale)
        try players.attach(
            record, pattern: effect.pattern, engine: engine, scale: scale * policy.appScale(app: app), muted: !policy.isEnabled(app: app), feedback: effect.name)
        do {
            try record.player?.start(atTime: 0)
        } catch {
            players.remove(record)
            throw DaemonError.deviceFailed(owned.id, "\(error)")
        }
    }

    /// The overuse guard's interval passed: the deferred effect `id` (standing for every call
    /// coalesced into it; the newest's effect and intensity) plays, unless its client left meanwhile.
    func startDeferredEffect(id: UInt64, effect: FeedbackEffect, scale: Double, app: String, device owned: OwnedDevice) {
        if guards.waiting(app: app, device: owned.id, kind: effect.kind) == id { guards.setWaiting(nil, app: app, device: owned.id, kind: effect.kind) }
        guard let reserved = players.records[id], reserved.player == nil, !stopping else { return }
        players.remove(reserved)
        do {
            try startEffect(id: id, effect: effect, scale: scale, owner: reserved.owner, app: app, device: owned)
        } catch {
            logger.warning("deferred \(effect.name) for \(app) did not play: \(error)")
            playerEnded(reserved, reason: "failed")
        }
    }

    /// `PlayPattern(s app_id, s device, s ahap, d intensity, a{sv} options) → o player`.
    func playPattern(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let rawApp = try arguments.string(), query = try arguments.string()
        // Admission before work: the app id, the device, the caller's rate, players and parse
        // budget are checked before the document is even read, so a refused call costs the
        // service next to nothing. The rest is read with the document, off the event loop.
        let (app, owned, sender) = try admit(call, app: rawApp, device: query)
        guard let engine = owned.engine else { throw DaemonError.deviceUnavailable(owned.id, reason: owned.unavailableReason ?? "not open") }
        let record = PlayerRecord(id: players.allocateID(), owner: sender, appID: app, deviceID: owned.id, origin: .pattern, oneShot: true, intensity: 1)
        try parseThenReply(call, for: record, on: engine, appScale: policy.appScale(app: app), tail: Self.playOptions) { [unowned self] record, options throws(BusError) in
            if options.loop {
                record.player?.loopEnabled = true
                if options.loopEnd > 0 { record.player?.loopEnd = options.loopEnd }
            }
            do {
                try record.player?.start(atTime: options.at)
            } catch {
                throw DaemonError.deviceFailed(record.deviceID, "\(error)")
            }
            statistics.played += 1
        }
    }

    /// What `PlayPattern` asks for after its document: its intensity and options.
    struct PlayOptions: Sendable {
        /// The intensity asked for, 0…1.
        var intensity = 1.0
        /// Whether the pattern loops (`options.loop`).
        var loop = false
        /// Seconds; 0: the pattern's end.
        var loopEnd = 0.0
        /// When to start, the engine's time in seconds (0: now).
        var at = 0.0
    }

    /// Reads and checks `PlayPattern`'s intensity and options, after its document.
    static func playOptions(_ arguments: BusReader) throws(BusError) -> PlayOptions {
        var result = PlayOptions()
        result.intensity = try Validation.number(try arguments.double(), "intensity", in: 0...1)
        for (key, raw) in try arguments.dictionary() {
            let value = raw.unwrapped
            switch key {
            case "loop":
                guard let flag = value.boolValue else { throw DaemonError.invalidArgument("options.loop", "expected a boolean (b), found '\(value.signature)'") }
                result.loop = flag
            case "loop-end":
                guard case .double(let seconds) = value else {
                    throw DaemonError.invalidArgument("options.loop-end", "expected seconds as a double (d), found '\(value.signature)'")
                }
                result.loopEnd = try Validation.number(seconds, "options.loop-end", in: 0...3600)
            case "at-usec":
                guard case .uint64(let microseconds) = value else {
                    throw DaemonError.invalidArgument("options.at-usec", "expected CLOCK_MONOTONIC µs as a uint64 (t), found '\(value.signature)'")
                }
                result.at = try Validation.time(microseconds, "options.at-usec", now: HapticInstant.monotonicNow().nanoseconds)
            default:
                throw DaemonError.invalidArgument("options", "unknown option '\(key)'; options: loop (b), loop-end (d), at-usec (t)")
            }
        }
        return result
    }

    /// `CreatePlayer(s app_id, s device, s ahap) → o player`: made, not started.
    func createPlayer(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let rawApp = try arguments.string(), query = try arguments.string()
        let (app, owned, sender) = try admit(call, app: rawApp, device: query)
        guard let engine = owned.engine else { throw DaemonError.deviceUnavailable(owned.id, reason: owned.unavailableReason ?? "not open") }
        let record = PlayerRecord(id: players.allocateID(), owner: sender, appID: app, deviceID: owned.id, origin: .player, oneShot: false, intensity: 1)
        try parseThenReply(call, for: record, on: engine, appScale: policy.appScale(app: app), tail: { _ throws(BusError) in PlayOptions() }) { _, _ throws(BusError) in }
    }

    /// `RegisterAudio(s app_id, s name, u rate_hz, u channels, ay samples) → t id`: a clip of the
    /// caller's that its patterns' `AudioCustom` events name as `EventWaveformPath` (``AudioStore``).
    /// The samples are 32-bit little-endian floats, interleaved; the bytes count against the
    /// caller's byte rate as a document's do, and the clip against its and the service's budgets.
    func registerAudio(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let app = try Validation.appID(try arguments.string())
        let name = try arguments.string()
        guard (1...4096).contains(name.utf8.count) else {
            throw DaemonError.invalidArgument("name", "a clip's name is the EventWaveformPath its events give, 1…4096 bytes; found \(name.utf8.count)")
        }
        let rate = try arguments.uint32(), channels = try arguments.uint32()
        guard (1...2).contains(channels) else {
            throw DaemonError.invalidArgument("channels", "\(channels) channels; a clip is mono (1) or stereo (2: left and right actuators)")
        }
        guard AudioClip.sampleRates.contains(Double(rate)) else {
            throw DaemonError.invalidArgument("rate_hz", "\(rate) Hz is outside 1000…384000 Hz")
        }
        let sender = call.sender ?? ""
        try noteClient(call, app: app)
        let now = HapticInstant.monotonicNow()
        try limiter.admitBytes(sender, at: now)
        let frameBytes = 4 * Int(channels)
        let clip = try arguments.bytes { raw throws(BusError) -> AudioClip in
            guard raw.count.isMultiple(of: frameBytes) else {
                throw DaemonError.invalidArgument("samples", "\(raw.count) bytes are not whole frames of \(frameBytes) bytes (\(channels) × a 32-bit little-endian float)")
            }
            // Refused before anything is copied: too long for a clip, or past a budget.
            let seconds = Double(raw.count / frameBytes) / Double(rate)
            guard seconds <= AudioClip.maximumDuration else {
                throw DaemonError.invalidArgument("samples", "\((seconds * 10).rounded() / 10) s long; a clip is at most \(Int(AudioClip.maximumDuration)) s")
            }
            try audio.admit(sender, name: name, adding: raw.count)
            // Charged before the copy and the check, so samples refused as not finite cost the sender too.
            limiter.chargeBytes(sender, raw.count, at: now)
            let samples = (0..<(raw.count / 4)).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
            do {
                return try AudioClip(interleaved: samples, channelCount: Int(channels), sampleRate: Double(rate), name: name)
            } catch {
                throw DaemonError.invalidArgument("samples", "\(error)")
            }
        }
        let id = try audio.register(sender, name: name, clip: clip)
        try reply(call) { writer throws(BusError) in try writer.uint64(id) }
    }

    /// `UnregisterAudio(t id)`: forgets one of the caller's clips.
    func unregisterAudio(_ call: BusMessage) throws(BusError) {
        let id = try call.reader.uint64()
        guard audio.unregister(call.sender ?? "", id: id) else { throw DaemonError.unknownAudio(id) }
        try reply(call)
    }

    /// `SetTriggers(s app_id, s device, a{sv} right, a{sv} left)`: adaptive-trigger effects on the
    /// device's R2 and L2 (an empty dictionary leaves that trigger as it is). The caller holds the
    /// triggers until it sets both off or leaves the bus (``TriggerHolds``).
    func setTriggers(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let app = try Validation.appID(try arguments.string())
        let owned = try devices.resolve(try arguments.string())
        let right = try TriggerHolds.effect(try arguments.dictionary(), side: "right")
        let left = try TriggerHolds.effect(try arguments.dictionary(), side: "left")
        let sender = call.sender ?? ""
        try noteClient(call, app: app)
        try limiter.admit(sender, at: .monotonicNow())
        try triggers.set(owner: sender, app: app, device: owned, right: right, left: left)
        try reply(call)
    }

    /// An AHAP document or a `.haptic` clip from a call (``HapticPattern/init(document:)``), or
    /// `InvalidPattern` naming the line, column or JSON path.
    static func pattern(fromDocument text: String) throws(BusError) -> HapticPattern {
        guard text.utf8.count <= maximumAHAPBytes else {
            throw DaemonError.invalidPattern("ahap", "the document is \(text.utf8.count) bytes; at most \(maximumAHAPBytes) are accepted")
        }
        do {
            return try HapticPattern(document: text)
        } catch {
            throw DaemonError.invalidPattern("ahap", "\(error)")
        }
    }

    /// Most documents parsed or waiting to be, for all clients together (one per client at a time).
    static let maximumParsesUnderWay = 8

    /// Reads the document (and, through `tail`, what follows it) from `call`, parses it and makes
    /// `record`'s engine player on `engine` (scaled by the intensity asked for and `appScale`,
    /// muted by the app's policy), all off the main thread: sd-bus checks a 4 MiB string's UTF-8
    /// as it is read (tens of ms; on the event loop it was most of what the largest documents cost
    /// everyone else), and the document and its timeline take tens of ms more. Back on the main
    /// thread the document's bytes are charged to the caller's parse budget, the player joins the
    /// registry, `then` starts or sets it up, and `call` is answered with its path, or with the
    /// error thrown (the player then goes).
    ///
    /// A caller that owes its parse budget is refused (`Throttled`) before anything is read, its
    /// elements count against its element budget (checked again on the main thread); a client has
    /// one document under way at a time and the service ``maximumParsesUnderWay`` (`Throttled`
    /// beyond). Nothing is made for a client that left meanwhile.
    ///
    /// The worker reads `call` while the main thread holds it and leaves it alone: sd-bus's reads
    /// touch only the message (its read position), never the connection, and the message's
    /// reference is the main thread's, taken and dropped there.
    func parseThenReply(
        _ call: BusMessage, for record: PlayerRecord, on engine: HapticEngine, appScale: Double,
        tail: @escaping @Sendable (BusReader) throws(BusError) -> PlayOptions, _ then: @escaping (PlayerRecord, PlayOptions) throws(BusError) -> Void
    ) throws(BusError) {
        let sender = record.owner
        guard !parsing.contains(sender) else { throw DaemonError.parsing(sender, busy: false) }
        guard parsing.count < Self.maximumParsesUnderWay else { throw DaemonError.parsing(sender, busy: true) }
        try limiter.admitBytes(sender, at: .monotonicNow())
        parsing.insert(sender)
        let pending = UncheckedMain(PendingParse(daemon: self, call: call, record: record, engine: engine, then: then))
        let message = LentMessage(pointer: call.pointer)
        let queue = self.queue, maker = players.maker, id = record.id, device = record.deviceID
        let holding = players.elements(ownedBy: sender), limit = options.maxElementsPerClient
        let clips = audio.clips(of: sender)
        let muted = !policy.isEnabled(app: record.appID)
        parser.async {
            var bytes = 0
            let made = Result<Made, BusError> { () throws(BusError) in
                let arguments = BusReader(message.pointer)
                let text = try arguments.string()
                bytes = text.utf8.count
                let options = try tail(arguments)
                let pattern = try HapticsDaemon.pattern(fromDocument: text)
                try Self.checkElements(of: pattern, for: sender, holding: holding, limit: limit)
                let player = try maker.make(id, pattern: pattern, engine: engine, scale: options.intensity * appScale, muted: muted, device: device, clips: clips)
                return Made(pattern: pattern, player: player, options: options)
            }
            queue.post { [bytes] in pending.value.finish(made, bytes: bytes) }
        }
    }

    /// A method call the main thread holds (``PendingParse/call``) while the parse worker reads its
    /// arguments: the worker neither takes nor drops a reference to it.
    struct LentMessage: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Throws `OverBudget` when `pattern` would take `sender`'s players past `limit` elements
    /// together, its players holding `holding` now.
    static func checkElements(of pattern: HapticPattern, for sender: String, holding: Int, limit: Int) throws(BusError) {
        let adding = PlayerRegistry.elements(of: pattern)
        guard holding + adding <= limit else { throw DaemonError.overBudget(sender, holding: holding, adding: adding, limit: limit) }
    }

    /// A pattern parsed off the main thread and the engine player made from it.
    struct Made: @unchecked Sendable {
        let pattern: HapticPattern
        let player: any HapticAdvancedPatternPlayer
        let options: PlayOptions
    }

    /// A document being parsed for a call, and what to do with it (main thread only).
    final class PendingParse {
        let daemon: HapticsDaemon
        let call: BusMessage
        let record: PlayerRecord
        let engine: HapticEngine
        let then: (PlayerRecord, PlayOptions) throws(BusError) -> Void

        init(
            daemon: HapticsDaemon, call: BusMessage, record: PlayerRecord, engine: HapticEngine, then: @escaping (PlayerRecord, PlayOptions) throws(BusError) -> Void
        ) {
            self.daemon = daemon
            self.call = call
            self.record = record
            self.engine = engine
            self.then = then
        }

        /// The worker read `bytes` bytes of document and made `made`.
        func finish(_ made: Result<Made, BusError>, bytes: Int) {
            let sender = record.owner
            daemon.parsing.remove(sender)
            // The client left while its document was parsed: nothing is kept, nobody to answer
            // (the engine player goes with `made`).
            guard daemon.clientApps[sender] != nil, !daemon.stopping else { return }
            daemon.limiter.chargeBytes(sender, bytes, at: .monotonicNow())
            do throws(BusError) {
                let made = try made.get()
                record.intensity = made.options.intensity
                // Again: the client's other players may have grown meanwhile.
                try HapticsDaemon.checkElements(
                    of: made.pattern, for: sender, holding: daemon.players.elements(ownedBy: sender), limit: daemon.options.maxElementsPerClient)
                guard daemon.devices.devices.contains(where: { $0.id == record.deviceID && $0.engine === engine }) else {
                    throw DaemonError.deviceUnavailable(record.deviceID, reason: "it went while the pattern was read")
                }
                daemon.players.adopt(record, player: made.player, engine: engine, pattern: made.pattern)
                // The app's policy may have changed meanwhile.
                daemon.applyAppPolicy(to: record)
                do { try then(record, made.options) } catch {
                    daemon.players.remove(record)
                    throw error
                }
                try daemon.reply(call) { writer throws(BusError) in try writer.objectPath(record.path) }
            } catch {
                daemon.statistics.refuse(error)
                do { try BusMessage.replyError(to: call.pointer, error) } catch { daemon.logger.warning("replying to \(sender): \(error)") }
            }
        }
    }

    /// `app`'s settings as they apply now.
    func effectivePolicy(_ app: String) -> [(key: String, value: BusValue)] {
        let appPolicy = policy.apps[app] ?? AppPolicy()
        let kinds = Set(HapticPolicy.defaultMinimumIntervals.keys).union(policy.global.minimumIntervals.keys).union(appPolicy.minimumIntervals.keys)
        var intervals: [String: Double] = [:]
        for kind in kinds { intervals[kind] = policy.minimumInterval(for: kind, app: app) }
        return [
            ("enabled", .bool(policy.isEnabled(app: app))),
            ("intensity-scale", .double(policy.appScale(app: app))),
            ("effective-intensity-scale", .double(policy.appScale(app: app) * policy.global.intensityScale)),
            ("profile", .string(policy.effectiveProfile(app: app, wanted: .full, important: false).name)),
            ("allow-important", .bool(appPolicy.allowImportant)),
            ("minimum-intervals", PolicyStore.intervalsValue(intervals)),
        ]
    }
}
