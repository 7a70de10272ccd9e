import Foundation
import Haptics
import HapticsSupport
import Synchronization
import Testing

@Suite("Deadline timer")
struct DeadlineTimerTests {
    /// A thread sleeps on a disarmed timer; another arms it for 150 ms ahead: the sleeper wakes
    /// then, not before. Armed for a time already past, it returns at once; armed for a deadline
    /// that came before the wait, too.
    @Test("wait returns at the armed deadline, never before it; a past deadline returns at once", arguments: [true, false])
    func deadlines(timerfd: Bool) async throws {
        let timer = DeadlineTimer(timerfd: timerfd)
        #expect(timer.isTimerfd == timerfd)
        let woke = Mutex<UInt64?>(nil)
        let sleeper = try PosixThread.start(name: "timer-test") {
            timer.wait()
            woke.withLock { $0 = Monotonic.now() }
        }
        try await Task.sleep(for: .milliseconds(30))
        #expect(woke.withLock { $0 } == nil, "a disarmed timer does not wake its sleeper")
        let deadline = Monotonic.now() + 150_000_000
        timer.arm(at: deadline)
        sleeper.join()
        let at = try #require(woke.withLock { $0 })
        #expect(at >= deadline, "woke \(Double(Int64(bitPattern: deadline &- at)) / 1e6) ms early")

        // Each wait timed by itself: the task's sleep between them can take a second on a
        // machine running the whole suite (a pool thread to resume on), and is not under test.
        var before = Monotonic.now()
        timer.arm(at: 0)
        timer.wait()
        let first = Monotonic.now() - before
        timer.arm(at: Monotonic.now() + 1_000_000)
        try await Task.sleep(for: .milliseconds(5))
        before = Monotonic.now()
        timer.wait()
        let second = Monotonic.now() - before
        #expect(first < 500_000_000 && second < 500_000_000, "past deadlines returned at once: \(first) ns, \(second) ns")
    }

    /// The point of the timer: an engine's scheduler thread asleep until a far deadline is given an
    /// earlier one without being woken when it is given (a condition variable would have to wake it
    /// to shorten its wait), and runs the action at that deadline. The action reads the thread's
    /// wake-up count itself, so the figure does not depend on when the test looks.
    @Test("a scheduler thread given an earlier deadline sleeps on until it")
    func earlierDeadlineWakesNobodyNow() async throws {
        let clock = SystemClock(name: "clock-arm-test", realtime: false)
        let start = clock.now()
        let ran = Mutex<(at: HapticInstant, wakeUps: UInt64)?>(nil)
        clock.schedule(at: start.advanced(bySeconds: 30)) {}
        try await Task.sleep(for: .milliseconds(50))  // the thread is asleep until the far deadline
        let armed = clock.wakeUps
        let deadline = clock.now().advanced(bySeconds: 0.2)
        clock.schedule(at: deadline) { ran.withLock { $0 = (HapticInstant.monotonicNow(), clock.wakeUps) } }
        let limit = Date().addingTimeInterval(10)
        while ran.withLock({ $0 }) == nil, Date() < limit { try await Task.sleep(for: .milliseconds(10)) }
        let run = try #require(ran.withLock { $0 })
        #expect(run.at >= deadline)
        #expect(run.wakeUps == armed + 1, "\(run.wakeUps - armed) wake-ups up to the deadline; one, for the deadline, expected")
    }
}
