import HapticsPluginKit

#if canImport(Glibc)
import Glibc
#endif

/// `CLOCK_MONOTONIC` in nanoseconds: the clock the engine stamps frames with, and the one every
/// spacing and refresh rule of the HID backend is measured on.
enum Monotonic {
    /// Now, in nanoseconds since an arbitrary start.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Sleeps until `deadline` (nanoseconds on `CLOCK_MONOTONIC`), through signals.
    static func sleep(until deadline: UInt64) {
        var request = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
    }

    /// `seconds` as nanoseconds, rounded, never negative.
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(max(0, (seconds * 1e9).rounded()))
    }
}

/// State behind a pthread mutex with one condition variable on `CLOCK_MONOTONIC`.
///
/// `Synchronization.Mutex` has no condition variable, and the writer thread must sleep until "a new
/// state was submitted, or the spacing deadline passed", so this small owner wraps the two pthread
/// objects. It allocates them once and destroys them exactly once, in `deinit`.
///
/// Waiting never happens inside an access to the state: ``wait(_:)`` calls its body (one `inout`
/// access), and only after the body returned does it sleep on the condition variable, so another
/// thread's changes made meanwhile are seen by the next call and never overwritten.
final class Guarded<State>: @unchecked Sendable {
    // `state` is only touched between pthread_mutex_lock and pthread_mutex_unlock; the pthread
    // objects live at stable heap addresses for the object's lifetime.
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// What the body of ``wait(_:)`` decides.
    enum Decision<Result> {
        /// Stop waiting with this result.
        case done(Result)
        /// Sleep until the next ``broadcast()``, then call the body again.
        case sleep
        /// Sleep until the next broadcast or this time (nanoseconds on `CLOCK_MONOTONIC`), then call
        /// the body again.
        case sleepUntil(UInt64)
    }

    init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the state locked.
    func locked<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Calls `body` with the state locked until it decides `.done`, sleeping on the condition
    /// variable (the lock released) whenever it asks to.
    func wait<Result>(_ body: (inout State) -> Decision<Result>) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            switch body(&state) {
            case .done(let result):
                return result
            case .sleep:
                pthread_cond_wait(condition, mutex)
            case .sleepUntil(let deadline):
                var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &time)
            }
        }
    }

    /// Wakes every waiter.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// One joinable POSIX thread running a Swift closure.
///
/// The HID backend keeps its own threads (one writer per open device, the hotplug monitor) rather than
/// Swift concurrency's cooperative pool: they block in `poll`, `pthread_cond_wait` and `write(2)`, which
/// must never tie up the pool's few threads.
struct PosixThread: Sendable {
    private let id: pthread_t

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept, as Linux allows).
    ///
    /// - Throws: the errno of `pthread_create` (EAGAIN when the process is out of threads).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(BackendFailure) -> PosixThread {
        let context = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, posixThreadEntry, context)
        if status != 0 {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            throw BackendFailure(code: status, "cannot start thread '\(name)': \(String(cString: strerror(status)))")
        }
        return PosixThread(id: thread)
    }

    /// Names the calling thread (what `top -H` and `gdb` show) through `/proc/thread-self/comm`, which
    /// is what `pthread_setname_np` does; Glibc's Swift module does not export that GNU function.
    fileprivate static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Waits for the thread to finish.
    func join() {
        pthread_join(id, nil)
    }

    /// Whether the calling thread is this thread.
    var isCurrent: Bool { pthread_equal(id, pthread_self()) != 0 }
}

/// What a new thread runs, handed over through `pthread_create`'s argument.
private final class ThreadStart {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// The `pthread_create` entry point: takes the ``ThreadStart`` back and runs it.
private func posixThreadEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
    PosixThread.nameCurrentThread(start.name)
    start.body()
    return nil
}
