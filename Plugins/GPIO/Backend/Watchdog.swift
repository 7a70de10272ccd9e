import GPIOBoards
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Something with a safety deadline: a kick that must end, a continuous drive that must be cut.
protocol DeadlineTarget: AnyObject, Sendable {
    /// Called on the watchdog's thread once `CLOCK_MONOTONIC` reached the deadline.
    func deadlineReached()
}

/// One thread per backend instance that calls ``DeadlineTarget/deadlineReached()`` at each
/// scheduled deadline, so a limit holds even when the host sends no further frame (a 10 s
/// continuous event is one frame). It sleeps in `poll(2)` on a pipe until the earliest deadline (met within 1 ms),
/// makes no wake-ups while nothing is scheduled, and starts with the first deadline.
final class Watchdog: Sendable {
    private struct State {
        var deadlines: [ObjectIdentifier: (at: UInt64, target: any DeadlineTarget)] = [:]
        var thread: pthread_t?
        var stopping = false
    }

    private let state = Mutex(State())
    /// The pipe that wakes the thread: [read end, write end]; owned here, closed after the thread ends.
    private let pipeEnds: [Int32]

    init() throws(WatchdogError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw WatchdogError(errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        pipeEnds = ends
    }

    deinit {
        close(pipeEnds[0])
        close(pipeEnds[1])
    }

    /// Calls `target` at `deadline` (`CLOCK_MONOTONIC` ns), replacing its previous deadline; nil cancels.
    func schedule(_ target: any DeadlineTarget, at deadline: UInt64?) {
        let key = ObjectIdentifier(target)
        let (start, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            let earliest = state.deadlines.values.map(\.at).min()
            if let deadline {
                state.deadlines[key] = (deadline, target)
            } else {
                state.deadlines[key] = nil
            }
            guard let deadline else { return (false, false) }
            return (state.thread == nil, earliest.map { deadline < $0 } ?? true)
        }
        if start { startThread() }
        if wake { poke() }
    }

    /// Stops the thread and waits for it. Later ``schedule(_:at:)`` calls do nothing.
    func shutdown() {
        let thread = state.withLock { state -> pthread_t? in
            state.stopping = true
            state.deadlines.removeAll()
            return state.thread
        }
        poke()
        if let thread { pthread_join(thread, nil) }
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(pipeEnds[1], &byte, 1)
    }

    private func startThread() {
        state.withLock { state in
            guard state.thread == nil, !state.stopping else { return }
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let created = pthread_create(&thread, nil, { context in
                let watchdog = Unmanaged<Watchdog>.fromOpaque(context!).takeRetainedValue()
                watchdog.run()
                return nil
            }, context)
            if created == 0 {
                state.thread = thread
            } else {
                Unmanaged<Watchdog>.fromOpaque(context).release()
            }
        }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let (next, stopping) = state.withLock { ($0.deadlines.values.map(\.at).min(), $0.stopping) }
            if stopping { return }
            let now = monotonicNanoseconds()
            if let next, next <= now {
                let due = state.withLock { state -> [any DeadlineTarget] in
                    let keys = state.deadlines.filter { $0.value.at <= now }.map(\.key)
                    return keys.compactMap { state.deadlines.removeValue(forKey: $0)?.target }
                }
                for target in due { target.deadlineReached() }
                continue
            }
            var descriptor = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            // poll(2) counts milliseconds: round up, so a deadline is met at most 1 ms late, never early.
            let timeout = next.map { Int32(min(($0 - now + 999_999) / 1_000_000, 3_600_000)) } ?? -1
            _ = poll(&descriptor, 1, timeout)
            while buffer.withUnsafeMutableBytes({ read(pipeEnds[0], $0.baseAddress, $0.count) }) > 0 {}
        }
    }
}

/// The watchdog's pipe could not be made.
struct WatchdogError: Error {
    var errno: Int32
}
