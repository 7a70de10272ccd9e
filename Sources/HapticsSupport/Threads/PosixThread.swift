#if canImport(Glibc)
import Glibc
#endif

/// One joinable POSIX thread running a Swift closure.
///
/// The engine's scheduler, the HID writers and monitor and the GPIO watchdog are such threads rather
/// than tasks of Swift concurrency's cooperative pool: they block in `pthread_cond_wait`, `poll` and
/// `write(2)`, which must never tie up the pool's few threads.
public struct PosixThread: Sendable {
    private let id: pthread_t

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept, as Linux allows).
    ///
    /// - Throws: ``ThreadStartError`` with the errno of `pthread_create` (EAGAIN when the process is out of threads).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) -> PosixThread {
        let context = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, posixThreadEntry, context)
        if status != 0 {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            throw ThreadStartError(name: name, errno: status)
        }
        return PosixThread(id: thread)
    }

    /// Names the calling thread (what `top -H` and `gdb` show) through `/proc/thread-self/comm`, which
    /// is what `pthread_setname_np` does; Glibc's Swift module does not export that GNU function.
    public static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Asks for `SCHED_FIFO` at `priority` (1 … 99) for the calling thread, so it preempts ordinary
    /// threads as soon as it is woken: for threads that put output on the wire. Needs root or
    /// `CAP_SYS_NICE` (or an `rtprio` limit); without them the thread keeps its normal policy.
    /// - Returns: whether the thread now runs `SCHED_FIFO`.
    @discardableResult
    public static func requestRealtimeForCurrentThread(priority: Int32) -> Bool {
        var parameters = sched_param(sched_priority: priority)
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
    }

    /// Waits for the thread to finish. Call this or ``detach()`` exactly once.
    public func join() {
        pthread_join(id, nil)
    }

    /// Lets the thread's resources go when it ends, for a thread nobody waits for. Call this or
    /// ``join()`` exactly once.
    public func detach() {
        pthread_detach(id)
    }

    /// Whether the calling thread is this thread.
    public var isCurrent: Bool { pthread_equal(id, pthread_self()) != 0 }
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

/// A thread could not be started.
public struct ThreadStartError: Error, Sendable, CustomStringConvertible {
    /// The thread's name.
    public var name: String
    /// The errno of `pthread_create`.
    public var errno: Int32

    public var description: String { "cannot start thread '\(name)': \(String(cString: strerror(errno)))" }
}
