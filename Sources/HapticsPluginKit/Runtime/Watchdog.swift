import HapticsSupport

/// Something with a safety deadline: a kick that must end, a continuous drive that must be cut.
public protocol DeadlineTarget: AnyObject, Sendable {
    /// Called on the watchdog's thread once `CLOCK_MONOTONIC` reached the deadline.
    func deadlineReached()
}

/// One thread per backend instance that calls ``DeadlineTarget/deadlineReached()`` at each
/// scheduled deadline, so a limit holds even when the host sends no further frame (a 10 s
/// continuous event is one frame). The thread starts with the backend, so no limit can go
/// unenforced for want of it; it sleeps on a monotonic condition variable until the earliest
/// deadline and makes no wake-ups while nothing is scheduled. Shared by the backends that drive
/// motors (`gpio`, `i2c`).
public final class Watchdog: Sendable {
    private struct State {
        var deadlines: [ObjectIdentifier: (at: UInt64, target: any DeadlineTarget)] = [:]
        var stopping = false
    }

    private let shared = Guarded(State())
    private let thread: PosixThread

    /// Starts the thread `name` (at most 15 bytes); it runs `prepareThread` first (a backend's stop
    /// guard gives it an alternate signal stack, since deadlines write to the hardware).
    public init(name: String, prepareThread: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        let shared = self.shared
        thread = try PosixThread.start(name: name) { Watchdog.run(shared, prepareThread: prepareThread) }
    }

    /// Calls `target` at `deadline` (`CLOCK_MONOTONIC` ns), replacing its previous deadline; nil cancels.
    public func schedule(_ target: any DeadlineTarget, at deadline: UInt64?) {
        let key = ObjectIdentifier(target)
        let earlier = shared.locked { state -> Bool in
            guard !state.stopping else { return false }
            let earliest = state.deadlines.values.map(\.at).min()
            state.deadlines[key] = deadline.map { ($0, target) }
            guard let deadline else { return false }
            return earliest.map { deadline < $0 } ?? true
        }
        if earlier { shared.broadcast() }
    }

    /// Stops the thread and waits for it. Later ``schedule(_:at:)`` calls do nothing.
    public func shutdown() {
        let first = shared.locked { state -> Bool in
            defer { state.stopping = true }
            state.deadlines.removeAll()
            return !state.stopping
        }
        shared.broadcast()
        if first { thread.join() }
    }

    private static func run(_ shared: Guarded<State>, prepareThread: @Sendable () -> Void) {
        // Its deadlines are safety limits (a kick's end, the continuous-drive cut): they must hold on a
        // busy machine, so it outranks the engine's scheduler thread (priority 20) and a calibration's
        // sampling thread, as the HID writers do. Without the privilege it stays a normal thread.
        PosixThread.requestRealtimeForCurrentThread(priority: 21)
        // It writes to the hardware: the stop guard's handler must run here even on a stack overflow.
        prepareThread()
        while let due = shared.wait({ state -> Guarded<State>.Decision<[any DeadlineTarget]?> in
            if state.stopping { return .done(nil) }
            let now = Monotonic.now()
            let keys = state.deadlines.filter { $0.value.at <= now }.map(\.key)
            if !keys.isEmpty { return .done(keys.compactMap { state.deadlines.removeValue(forKey: $0)?.target }) }
            return state.deadlines.values.map(\.at).min().map { .sleepUntil($0) } ?? .sleep
        }) {
            for target in due { target.deadlineReached() }
        }
    }
}
