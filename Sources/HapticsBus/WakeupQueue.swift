#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import Synchronization

/// Hands work from any thread to the one thread that owns a bus connection: jobs are queued under a
/// lock and an `eventfd` becomes readable, which that thread's event loop (or `poll`) waits on. No
/// polling, and no lock is held while a job runs.
public final class WakeupQueue: Sendable {
    /// The eventfd to wait on (readable while jobs are queued).
    public let descriptor: Int32
    private let jobs = Mutex<[@Sendable () -> Void]>([])

    /// A queue with its own eventfd.
    public init() throws(BusError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw .system("eventfd", code: -errno) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Queues `job` to run on the owning thread.
    public func post(_ job: @escaping @Sendable () -> Void) {
        let first = jobs.withLock { jobs in
            jobs.append(job)
            return jobs.count == 1
        }
        if first { wake() }
    }

    /// Makes the descriptor readable without queueing anything (the owner re-checks its state).
    public func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(descriptor, $0.baseAddress, 8) }
    }

    /// On the owning thread: clears the descriptor and runs every queued job, in order.
    public func drain() {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { read(descriptor, $0.baseAddress, 8) }
        while true {
            let batch = jobs.withLock { jobs in
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            if batch.isEmpty { return }
            for job in batch { job() }
        }
    }
}
