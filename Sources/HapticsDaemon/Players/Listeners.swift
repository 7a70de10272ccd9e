import Haptics
import HapticsAudioAnalysis
import HapticsBus
import HapticsSupport
import Synchronization

/// Live audio the service follows for its clients (`Listen`): each a capture, the run that drives
/// one device's engine from it, and its thread. Confined to the main thread; a run ends on its own
/// thread and reports back through the wakeup queue.
struct Listeners {
    /// One running (or ended, until its owner collects the report) listener.
    final class Listener {
        let id: UInt64
        let owner: String
        let app: String
        let deviceID: String
        let source: String
        let live: LiveHaptics
        var thread: PosixThread?
        /// The run's report, set by its thread as it ends.
        let report = Ended()

        /// Where a run's thread leaves its report.
        final class Ended: Sendable {
            let value = Mutex<LiveHapticsReport?>(nil)
        }

        init(id: UInt64, owner: String, app: String, deviceID: String, source: String, live: LiveHaptics) {
            self.id = id
            self.owner = owner
            self.app = app
            self.deviceID = deviceID
            self.source = source
            self.live = live
        }

        /// Ends the run (within its read timeout and a period) and closes the capture.
        func end() {
            live.stop()
            thread?.join()
            thread = nil
            live.capture.close()
        }
    }

    /// Most listeners one connection may run at once.
    static let perClient = 2
    /// Most listeners the service runs at once (each a capture and a thread).
    static let total = 4

    private(set) var all: [UInt64: Listener] = [:]
    private var nextID: UInt64 = 1

    /// The capture sources a client may name: ALSA's own names for cards and the sound servers,
    /// never a PCM definition that reads or writes a file (`file:FILE=…` would write the captured
    /// audio wherever the caller says, as the service's user).
    static func checkedSource(_ source: String) throws(BusError) -> String {
        let plain: Set<String> = ["default", "pulse", "pipewire", "sysdefault", "dsnoop"]
        if plain.contains(source) { return source }
        let kinds = ["hw:", "plughw:", "dsnoop:", "sysdefault:", "front:"]
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=,")
        guard source.utf8.count <= 128, let kind = kinds.first(where: source.hasPrefix),
            source.count > kind.count, source.dropFirst(kind.count).allSatisfy(allowed.contains)
        else {
            throw DaemonError.invalidArgument(
                "source", "'\(source.prefix(128))' is not a capture the service opens: default, pulse, pipewire, or hw:/plughw:/dsnoop:/sysdefault:/front: with a card and device (letters, digits, _ = ,), e.g. hw:CARD=Loopback,DEV=1")
        }
        return source
    }

    /// The options of a `Listen` call (`band_low_hz`, `band_high_hz`, `gate_db`, `emphasis`,
    /// `intensity`: doubles), each checked; unknown keys are errors.
    static func options(_ entries: [(key: String, value: BusValue)], appScale: Double) throws(BusError) -> LiveHapticsOptions {
        var options = LiveHapticsOptions()
        var low: Double?, high: Double?
        for (key, value) in entries {
            guard case .double(let number) = value.unwrapped else { throw DaemonError.invalidArgument(key, "must be a double (d), not \(value.unwrapped.signature)") }
            switch key {
            // The ranges are the options' own (``LiveHapticsOptions``), checked here to name the bus keys.
            case "band_low_hz": low = try Validation.number(number, key, in: LiveHapticsOptions.bandLowRange)
            case "band_high_hz": high = try Validation.number(number, key, in: LiveHapticsOptions.bandLowRange.lowerBound...LiveHapticsOptions.bandHighLimit)
            case "gate_db": options.gate = try Validation.number(number, key, in: LiveHapticsOptions.gateRange)
            case "emphasis": options.onsetEmphasis = try Validation.number(number, key, in: LiveHapticsOptions.onsetEmphasisRange)
            case "intensity": options.intensity = try Validation.number(number, key, in: LiveHapticsOptions.intensityRange)
            default: throw DaemonError.invalidArgument(key, "unknown option; Listen takes band_low_hz, band_high_hz, gate_db, emphasis, intensity")
            }
        }
        switch (low, high) {
        case (nil, nil): break
        case (let low?, let high?) where low < high: options.band = low...high
        default: throw DaemonError.invalidArgument("band_low_hz", "band_low_hz and band_high_hz go together, low below high")
        }
        options.intensity *= appScale
        return options
    }

    mutating func add(owner: String, app: String, deviceID: String, source: String, live: LiveHaptics) -> Listener {
        let listener = Listener(id: nextID, owner: owner, app: app, deviceID: deviceID, source: source, live: live)
        nextID += 1
        all[listener.id] = listener
        return listener
    }

    func count(ownedBy owner: String) -> Int { all.values.count { $0.owner == owner } }

    /// Ends and forgets `id`; its report.
    mutating func remove(_ id: UInt64) -> LiveHapticsReport? {
        guard let listener = all.removeValue(forKey: id) else { return nil }
        listener.end()
        return listener.report.value.withLock { $0 } ?? LiveHapticsReport()
    }

    /// Ends and forgets every listener `owner` started (it left the bus); how many.
    mutating func removeAll(ownedBy owner: String) -> Int {
        let owned = all.values.filter { $0.owner == owner }
        for listener in owned { _ = remove(listener.id) }
        return owned.count
    }

    /// Ends every listener (the service stops).
    mutating func removeAll() {
        for id in Array(all.keys) { _ = remove(id) }
    }
}

extension HapticsDaemon {
    /// `Listen(s app_id, s device, s source, a{sv} options) → (t id)`: live audio from the ALSA
    /// capture `source` drives the device until `StopListening`, the caller leaving the bus, or a
    /// failure (polkit's `org.swifthaptics.Haptics1.listen` decides who may: the service opens the
    /// capture, which its caller might not be allowed to).
    func listen(_ call: BusMessage) throws(BusError) {
        let arguments = call.reader
        let rawApp = try arguments.string(), query = try arguments.string(), rawSource = try arguments.string()
        let entries = try arguments.dictionary()
        let app = try Validation.appID(rawApp)
        let source = try Listeners.checkedSource(rawSource)
        let owned = try devices.resolve(query)
        let sender = call.sender ?? ""
        try noteClient(call, app: app)
        try limiter.admit(sender, at: .monotonicNow())
        let options = try Listeners.options(entries, appScale: policy.isEnabled(app: app) ? policy.appScale(app: app) : 0)
        try authorizeListen(sender)
        guard listeners.count(ownedBy: sender) < Listeners.perClient else {
            throw DaemonError.tooManyListeners("client \(sender) runs \(Listeners.perClient) listeners, the most one connection may; StopListening one first")
        }
        guard listeners.all.count < Listeners.total else {
            throw DaemonError.tooManyListeners("the service runs \(Listeners.total) listeners, the most it runs at once; try again later")
        }
        guard let engine = owned.engine else { throw DaemonError.deviceUnavailable(owned.id, reason: owned.unavailableReason ?? "not open") }
        let capture: AudioCapture
        do { capture = try devices.system.openCapture(source) } catch {
            throw BusError(name: DaemonError.prefix + "CaptureFailed", message: "source '\(source)': \(error.message)")
        }
        let live: LiveHaptics
        do { live = try LiveHaptics(capture: capture, engine: engine, options: options) } catch {
            capture.close()
            throw DaemonError.invalidArgument("options", "\(error)")
        }
        let listener = listeners.add(owner: sender, app: app, deviceID: owned.id, source: source, live: live)
        let id = listener.id
        let me = UncheckedMain(self), queue = self.queue, ended = listener.report
        do {
            listener.thread = try PosixThread.start(name: "hapticsd-listen") {
                let report = live.run()
                ended.value.withLock { $0 = report }
                queue.post { me.value.listenerEnded(id, report: report) }
            }
        } catch {
            _ = listeners.remove(id)
            throw DaemonError.deviceFailed(owned.id, "a listener thread could not start: \(error)")
        }
        logger.info("client \(sender) (app \(app)) listens to \(source) on \(owned.id) (\(capture.format), band \(Int(live.band.lowerBound))–\(Int(live.band.upperBound)) Hz)")
        try reply(call) { writer throws(BusError) in try writer.uint64(id) }
    }

    /// `StopListening(t id) → (a{sv} report)`: ends one of the caller's listeners (leaving its device
    /// stopped) and says what it did: `seconds`, `blocks`, `onsets`, `updates`, `overruns`,
    /// `latency_p50_ms`, `latency_p99_ms`, and `failure` when it ended by itself.
    func stopListening(_ call: BusMessage) throws(BusError) {
        let id = try call.reader.uint64()
        guard let listener = listeners.all[id], listener.owner == (call.sender ?? "") else {
            throw BusError(name: DaemonError.prefix + "UnknownListener", message: "no listener \(id) was started by this connection (stopped already, or another client's)")
        }
        let report = listeners.remove(id) ?? LiveHapticsReport()
        var entries: [(key: String, value: BusValue)] = [
            ("seconds", .double(report.seconds)), ("blocks", .uint64(UInt64(report.blocks))), ("onsets", .uint64(UInt64(report.onsets))),
            ("updates", .uint64(UInt64(report.updates))), ("overruns", .uint64(UInt64(report.overruns))),
        ]
        if let p50 = report.latency(percentile: 0.5), let p99 = report.latency(percentile: 0.99) {
            entries += [("latency_p50_ms", .double(p50 * 1000)), ("latency_p99_ms", .double(p99 * 1000))]
        }
        if let failure = report.failure { entries.append(("failure", .string(failure))) }
        logger.info("listener \(id) on \(listener.deviceID) stopped: \((report.seconds * 10).rounded() / 10) s, \(report.updates) updates")
        try reply(call) { writer throws(BusError) in try writer.dictionary(entries) }
    }

    /// A run ended on its own thread (a failure, or a stop); its report waits for its owner's
    /// `StopListening`. A failure is logged.
    func listenerEnded(_ id: UInt64, report: LiveHapticsReport) {
        guard let listener = listeners.all[id] else { return }
        if let failure = report.failure { logger.warning("listener \(id) on \(listener.deviceID) ended: \(failure)") }
    }
}
