import CHapticsABI
import HapticsPluginKit
import HapticsStopGuard

/// What the stop guard could not set up (its supervisor missing, refusing, or replaced), for the
/// host's log: each warning is logged once, prefixed with the backend's name.
public enum StopGuardWarning {
    /// Logs the warning not reported yet, if any, as `backend: …`.
    /// - Parameter waitMilliseconds: how long to wait for a supervisor still starting (`haptics_stop_guard_take_warning`):
    ///   a backend that registers once per open waits (2,000 ms), so a refusal is not missed; one
    ///   that registers on a latency path (a wake) passes 0 and hears of it at a later call.
    public static func log(to services: HostServices, backend: String, waitMilliseconds: Int32) {
        var text = [CChar](repeating: 0, count: 1024)
        guard haptics_stop_guard_take_warning(&text, text.count, waitMilliseconds) == 1 else { return }
        services.log(HAPTICS_LOG_WARNING, "\(backend): " + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// Runs `body`, a hardware write of the actuator registered in stop-guard `slot`, inside the
/// guard's write section (`haptics_stop_guard_enter`): the signal handler does not stop that
/// actuator while it runs, and once the process is stopping no write starts.
/// - Throws: ESHUTDOWN when the process is stopping, or what `body` throws.
public func withStopGuardSection<T>(_ slot: Int32, _ body: () throws(BackendFailure) -> T) throws(BackendFailure) -> T {
    let entered = haptics_stop_guard_enter(slot)
    guard entered == 0 else {
        throw BackendFailure(code: -entered, "the process is stopping (a fatal signal or exit); the actuator was stopped")
    }
    defer { haptics_stop_guard_leave(slot) }
    return try body()
}
