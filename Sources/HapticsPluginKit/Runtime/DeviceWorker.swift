import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// What a device shares with its worker thread, behind the worker's lock: at least whether the
/// device is lost. (Its metatype is sendable: the worker thread is started with the guarded state.)
public protocol WorkerState: SendableMetatype {
    /// Set once the device is gone (`ENODEV`): every later call fails with it.
    var lost: BackendFailure? { get set }
    /// Called with the lock held when the device has just been marked lost, to wake a worker that
    /// sleeps on something other than the condition variable (a timer); the condition is broadcast
    /// afterwards in any case. `now` is `CLOCK_MONOTONIC` nanoseconds. Default: nothing.
    mutating func workerMustLook(now: UInt64)
}

extension WorkerState {
    /// Nothing to do: the worker waits on the condition variable, which is broadcast.
    public mutating func workerMustLook(now: UInt64) {}
}

/// The machinery every device with a worker thread has (the evdev backend's effect device, the
/// HID backend's writer): its state behind one lock with a condition variable, the thread that
/// works on it, the lost failure every later call fails with, and the close that tells the worker
/// to end and joins it. The device keeps what is its own: the state's fields, the worker's loop,
/// what a call does.
///
/// One owner: the device holds the worker; the worker's loop gets the guarded state and nothing
/// of the device, so the device can go away once ``finish(_:)`` has returned.
public final class DeviceWorker<State: WorkerState>: Sendable {
    /// The state the device's calls and its worker share.
    public let shared: Guarded<State>
    private let thread: PosixThread

    /// Guards `initial` and starts thread `name` (at most 15 bytes, as Linux shows it) running
    /// `loop` with the guarded state; the loop returns when the state says the device is closed.
    /// - Throws: a failure naming the thread, when it cannot start.
    public init(name: String, initial: State, loop: @escaping @Sendable (Guarded<State>) -> Void) throws(BackendFailure) {
        let shared = Guarded(initial)
        self.shared = shared
        do throws(ThreadStartError) {
            thread = try PosixThread.start(name: name) { loop(shared) }
        } catch {
            throw BackendFailure(error)
        }
    }

    /// Marks the device gone with `message` (`ENODEV`): the worker is woken to close what it holds
    /// without writing, and every later call fails. Returns the first such failure (a second call
    /// keeps the first message).
    @discardableResult
    public func markLost(_ message: String) -> BackendFailure {
        let failure = BackendFailure(code: ENODEV, message)
        let first = shared.locked { state -> BackendFailure in
            if let lost = state.lost { return lost }
            state.lost = failure
            state.workerMustLook(now: Monotonic.now())
            return failure
        }
        shared.broadcast()  // the worker, and a call waiting for it, look again
        return first
    }

    /// Ends the worker: `ending` tells it so through the state (with the lock held), then the
    /// condition is broadcast and the thread joined. Call once, from the device's `close`.
    public func finish(_ ending: (inout State) -> Void) {
        shared.locked(ending)
        shared.broadcast()
        thread.join()
    }
}
