#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// The daemon's event loop: the one owner of an `sd_event`. Everything it runs, runs on the thread
/// that calls ``run()``: bus messages, signals, and work handed over through a ``WakeupQueue``.
public final class EventLoop {
    /// The `sd_event`.
    public let pointer: OpaquePointer
    private var sources: [OpaquePointer] = []
    private var callbacks: [Callback] = []

    /// A handler and the object the C callback finds it through.
    final class Callback {
        let body: (Int32) -> Void
        init(_ body: @escaping (Int32) -> Void) { self.body = body }
    }

    /// A new loop (not the thread's default one, so nothing else shares it).
    public init() throws(BusError) {
        var event: OpaquePointer?
        let rc = sd_event_new(&event)
        guard rc >= 0, let event else { throw .system("sd_event_new", code: rc) }
        pointer = event
    }

    deinit {
        for source in sources { sd_event_source_disable_unref(source) }
        sd_event_unref(pointer)
    }

    /// Runs `handler` on the loop's thread when `signal` arrives. The signal must be blocked in every
    /// thread first (``blockSignals(_:)`` before any thread starts): it is read through a signalfd.
    public func onSignal(_ signal: Int32, _ handler: @escaping (Int32) -> Void) throws(BusError) {
        let callback = Callback(handler)
        var source: OpaquePointer?
        let rc = sd_event_add_signal(pointer, &source, signal, { _, info, userdata in
            let callback = Unmanaged<EventLoop.Callback>.fromOpaque(userdata!).takeUnretainedValue()
            callback.body(Int32(bitPattern: info?.pointee.ssi_signo ?? 0))
            return 0
        }, Unmanaged.passUnretained(callback).toOpaque())
        guard rc >= 0, let source else { throw .system("sd_event_add_signal(\(signal))", code: rc) }
        sources.append(source)
        callbacks.append(callback)
    }

    /// Runs `handler` on the loop's thread whenever `descriptor` is readable.
    public func onReadable(_ descriptor: Int32, _ handler: @escaping (Int32) -> Void) throws(BusError) {
        let callback = Callback(handler)
        var source: OpaquePointer?
        let rc = sd_event_add_io(pointer, &source, descriptor, UInt32(EPOLLIN.rawValue), { _, fd, _, userdata in
            let callback = Unmanaged<EventLoop.Callback>.fromOpaque(userdata!).takeUnretainedValue()
            callback.body(fd)
            return 0
        }, Unmanaged.passUnretained(callback).toOpaque())
        guard rc >= 0, let source else { throw .system("sd_event_add_io(\(descriptor))", code: rc) }
        sources.append(source)
        callbacks.append(callback)
    }

    /// A one-shot timer on the loop's thread: its handler runs once at its deadline unless it was
    /// cancelled first. The timer is the one owner of its `sd_event` source; dropping it cancels it.
    public final class Timer {
        fileprivate var source: OpaquePointer?
        fileprivate let body: () -> Void

        fileprivate init(_ body: @escaping () -> Void) { self.body = body }

        deinit { cancel() }

        /// Whether it neither fired nor was cancelled.
        public var isPending: Bool { source != nil }

        /// Stops it from firing (nothing happens if it fired already).
        public func cancel() {
            guard let source else { return }
            self.source = nil
            sd_event_source_disable_unref(source)
        }

        fileprivate func fire() {
            cancel()
            body()
        }
    }

    /// Runs `handler` once on the loop's thread `seconds` from now (`CLOCK_MONOTONIC`, within 1 ms).
    /// Keep the returned timer: dropping it cancels it.
    public func timer(after seconds: Double, _ handler: @escaping () -> Void) throws(BusError) -> Timer {
        let timer = Timer(handler)
        var now: UInt64 = 0
        _ = sd_event_now(pointer, CLOCK_MONOTONIC, &now)
        let delay = UInt64((seconds.isFinite ? min(max(seconds, 0), 1e9) : 0) * 1_000_000)
        var source: OpaquePointer?
        let rc = sd_event_add_time(pointer, &source, CLOCK_MONOTONIC, now &+ delay, 1000, { _, _, userdata in
            // A strong reference for the handler's duration: it may drop the owner's.
            let timer = Unmanaged<EventLoop.Timer>.fromOpaque(userdata!).takeUnretainedValue()
            timer.fire()
            return 0
        }, Unmanaged.passUnretained(timer).toOpaque())
        guard rc >= 0, let source else { throw .system("sd_event_add_time", code: rc) }
        timer.source = source
        return timer
    }

    /// Dispatches `connection`'s messages from this loop.
    public func attach(_ connection: BusConnection) throws(BusError) {
        let rc = sd_bus_attach_event(connection.pointer, pointer, 0)
        guard rc >= 0 else { throw .system("sd_bus_attach_event", code: rc) }
    }

    /// Runs until ``exit(code:)``; returns the code.
    public func run() throws(BusError) -> Int32 {
        let rc = sd_event_loop(pointer)
        guard rc >= 0 else { throw .system("sd_event_loop", code: rc) }
        return rc
    }

    /// Makes ``run()`` return `code` after the current dispatch.
    public func exit(code: Int32) {
        _ = sd_event_exit(pointer, code)
    }

    /// Blocks `signals` for the calling thread and every thread it starts afterwards, so they reach
    /// the loop's signalfd and never a handler on some other thread. Call first thing in `main`.
    public static func blockSignals(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}
