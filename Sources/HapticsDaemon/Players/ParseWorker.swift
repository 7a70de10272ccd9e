import CHapticsSystem
import Dispatch
import Foundation
import Synchronization

/// The thread hapticsd parses clients' documents on: one thread, jobs in order, at nice 19, so
/// parsing takes only the CPU the event loop, the engines and everything else on the machine leave
/// (a client sending the largest documents slows its own replies, nobody else's).
final class ParseWorker: Sendable {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    /// Starts the thread; it lives as long as the service.
    init() {
        let thread = Thread { [self] in
            _ = haptics_set_thread_nice(19)
            while true {
                ready.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job()
            }
        }
        thread.name = "hapticsd-parse"
        thread.start()
    }

    /// Runs `job` on the thread, after the jobs before it.
    func async(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        ready.signal()
    }
}
