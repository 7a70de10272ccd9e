import CHapticsSystem
import HapticsSupport

/// The thread hapticsd parses clients' documents on: one thread, jobs in order, at nice 19, so
/// parsing takes only the CPU the event loop, the engines and everything else on the machine leave
/// (a client sending the largest documents slows its own replies, nobody else's).
final class ParseWorker: Sendable {
    private let jobs = Guarded<[@Sendable () -> Void]>([])

    /// Starts the thread; it lives as long as the service.
    /// - Throws: ``ThreadStartError`` when no thread can be started.
    init() throws(ThreadStartError) {
        let jobs = self.jobs
        try PosixThread.start(name: "hapticsd-parse") {
            _ = haptics_set_thread_nice(19)
            while true {
                let job = jobs.wait { queued in queued.isEmpty ? .sleep : .done(queued.removeFirst()) }
                job()
            }
        }.detach()
    }

    /// Runs `job` on the thread, after the jobs before it.
    func async(_ job: @escaping @Sendable () -> Void) {
        jobs.locked { $0.append(job) }
        jobs.broadcast()
    }
}
