import CHapticsABI
import Synchronization

/// A pattern player whose pattern plays in hapticsd: one service player per device of the engine,
/// every call a command to the service. Property values the app set are kept here, so reading them
/// costs no round trip; ``currentTime`` asks the service.
final class RemotePatternPlayer: HapticAdvancedPatternPlayer {
    private let client: ServiceLink
    private let ids: [UInt64]
    private struct State {
        var muted = false
        var loopEnabled = false
        var loopEnd = 0.0
        var rate = 1.0
        var completion: (@Sendable ((any Error)?) -> Void)?
        /// Service players still playing in this run (a run ends when all have).
        var running = 0
        /// The worst end reason of this run.
        var reason: String?
    }

    private let state = Mutex(State())

    init(client: ServiceLink, ids: [UInt64]) {
        self.client = client
        self.ids = ids
    }

    deinit {
        for id in ids {
            client.forgetEnded(id)
            try? client.command(HAPTICS_CLIENT_RELEASE, player: id, at: 0)
        }
    }

    private func each(_ body: (UInt64) throws(HapticEngineError) -> Void) throws(HapticEngineError) {
        for id in ids { try body(id) }
    }

    func start(atTime time: Double) throws(HapticEngineError) {
        guard time.isFinite else { throw .invalidTime(time) }
        state.withLock { state in
            state.running = ids.count
            state.reason = nil
        }
        for id in ids {
            client.onEnded(id) { [weak self] reason in self?.ended(reason) }
        }
        try each { id throws(HapticEngineError) in try client.command(HAPTICS_CLIENT_START, player: id, at: time) }
    }

    /// One service player of this run ended; the completion handler runs when the last one has.
    private func ended(_ reason: String) {
        let finished: (handler: (@Sendable ((any Error)?) -> Void)?, reason: String)? = state.withLock { state in
            state.running -= 1
            if reason != "finished" { state.reason = reason }
            guard state.running <= 0 else { return nil }
            return (state.completion, state.reason ?? "finished")
        }
        guard let finished, let handler = finished.handler else { return }
        switch finished.reason {
        case "finished": handler(nil)
        case "device-lost", "daemon-stopping", "disconnected", "client-vanished": handler(HapticEngineError.engineStopped)
        default: handler(HapticEngineError.playerStopped)
        }
    }

    func stop(atTime time: Double) throws(HapticEngineError) {
        guard time.isFinite else { throw .invalidTime(time) }
        try each { id throws(HapticEngineError) in try client.command(HAPTICS_CLIENT_STOP, player: id, at: time) }
    }

    func sendParameters(_ parameters: [HapticDynamicParameter], atTime time: Double) throws(HapticEngineError) {
        for parameter in parameters where !parameter.value.isFinite || !parameter.relativeTime.isFinite {
            throw .invalidValue(name: parameter.id.rawValue, value: parameter.value, expected: "finite numbers")
        }
        // Core Haptics clamps values into each control's range: so does this player.
        let clamped = parameters.map { parameter in
            HapticDynamicParameter(
                parameterID: parameter.id, value: min(max(parameter.value, parameter.id.range.lowerBound), parameter.id.range.upperBound),
                relativeTime: max(parameter.relativeTime, 0))
        }
        try each { id throws(HapticEngineError) in try client.sendParameters(clamped, player: id, at: time) }
    }

    func scheduleParameterCurve(_ curve: HapticParameterCurve, atTime time: Double) throws(HapticEngineError) {
        let checked: HapticParameterCurve
        do { checked = try HapticPattern.checked(curve, index: 0) } catch {
            throw .invalidValue(name: "\(curve.id.rawValue) curve", value: .nan, expected: error.problem)
        }
        for piece in HapticParameterCurve.split(checked) {
            try each { id throws(HapticEngineError) in try client.scheduleCurve(piece, player: id, at: time) }
        }
    }

    func cancel() throws(HapticEngineError) {
        try each { id throws(HapticEngineError) in try client.command(HAPTICS_CLIENT_CANCEL, player: id, at: 0) }
    }

    var isMuted: Bool {
        get { state.withLock { $0.muted } }
        set {
            state.withLock { $0.muted = newValue }
            try? each { id throws(HapticEngineError) in try client.set(HAPTICS_CLIENT_MUTED, of: id, to: newValue ? 1 : 0) }
        }
    }

    var loopEnabled: Bool {
        get { state.withLock { $0.loopEnabled } }
        set {
            state.withLock { $0.loopEnabled = newValue }
            try? each { id throws(HapticEngineError) in try client.set(HAPTICS_CLIENT_LOOP, of: id, to: newValue ? 1 : 0) }
        }
    }

    var loopEnd: Double {
        get { state.withLock { $0.loopEnd } }
        set {
            let value = max(newValue.isFinite ? newValue : 0, 0)
            state.withLock { $0.loopEnd = value }
            try? each { id throws(HapticEngineError) in try client.set(HAPTICS_CLIENT_LOOP_END, of: id, to: min(value, 3600)) }
        }
    }

    var playbackRate: Double {
        get { state.withLock { $0.rate } }
        set {
            let rate = newValue.isFinite ? min(max(newValue, 0.01), 100) : 1
            state.withLock { $0.rate = rate }
            try? each { id throws(HapticEngineError) in try client.set(HAPTICS_CLIENT_RATE, of: id, to: rate) }
        }
    }

    var currentTime: Double {
        guard let first = ids.first else { return 0 }
        return (try? client.get(HAPTICS_CLIENT_POSITION, of: first)) ?? 0
    }

    func seek(toOffset offset: Double) throws(HapticEngineError) {
        guard offset.isFinite else { throw .invalidTime(offset) }
        try each { id throws(HapticEngineError) in try client.set(HAPTICS_CLIENT_POSITION, of: id, to: max(offset, 0)) }
    }

    func pause(atTime time: Double) throws(HapticEngineError) {
        guard time.isFinite else { throw .invalidTime(time) }
        try each { id throws(HapticEngineError) in try client.command(HAPTICS_CLIENT_PAUSE, player: id, at: time) }
    }

    func resume(atTime time: Double) throws(HapticEngineError) {
        guard time.isFinite else { throw .invalidTime(time) }
        try each { id throws(HapticEngineError) in try client.command(HAPTICS_CLIENT_RESUME, player: id, at: time) }
    }

    var completionHandler: (@Sendable ((any Error)?) -> Void)? {
        get { state.withLock { $0.completion } }
        set { state.withLock { $0.completion = newValue } }
    }
}
