import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where a ``HotplugMonitor`` hears that devices may have changed: a descriptor to `poll`, and how
/// to drain it. Made on the monitor's own thread, which owns it for the life of the process.
public protocol HotplugSource {
    /// The descriptor to wait on, or -1 when no source could be made (the monitor then rescans
    /// once a second instead).
    var fileDescriptor: Int32 { get }
    /// Reads every queued event; whether any of them is a reason to rescan.
    mutating func drain() -> Bool
}

/// One monitor of device arrivals and departures for a whole process, whatever the backend: it
/// waits on its ``HotplugSource`` (inotify on `/dev`, a libudev monitor), lets a burst of events
/// settle, scans, and hands the scan to every subscribed backend instance.
///
/// - After an event it waits ``Timing/settleMilliseconds`` for the burst to settle (a node is
///   created, then its permissions change), then scans and calls the subscribers.
/// - While a device is pending (its driver still binding, so its id is not final) it scans again
///   every ``Timing/pendingMilliseconds``, for at most ``Timing/pendingLimitNanoseconds``; a failed
///   scan counts as pending, so it is retried.
/// - While nothing happens, its thread sleeps in `poll` with no time-out: no wake-ups. Without a
///   source it rescans once a second.
///
/// One thread and one source serve the process, however many backend instances there are (tests
/// make one per `HapticSystem`; inotify instances and netlink sockets are scarce). It also counts
/// the events it receives, so a backend can tell that nothing changed since its last scan.
public final class HotplugMonitor<Scan: Sendable>: Sendable {
    /// The monitor's timing, in milliseconds and nanoseconds.
    public struct Timing: Sendable {
        /// The delay between an event and the rescan, in milliseconds.
        public var settleMilliseconds: Int32 = 20
        /// The interval between rescans while a device is pending, in milliseconds.
        public var pendingMilliseconds: Int32
        /// How long a pending device is waited for, in nanoseconds.
        public var pendingLimitNanoseconds: UInt64 = 20_000_000_000

        /// Timing with rescans every `pendingMilliseconds` while a device is pending.
        public init(pendingMilliseconds: Int32) { self.pendingMilliseconds = pendingMilliseconds }
    }

    /// One subscriber. The monitor calls it on its own thread, holding `alive`, so
    /// ``HotplugMonitor/unsubscribe(_:)`` can wait for a call in progress to finish.
    public final class Subscription: Sendable {
        fileprivate let changed: @Sendable (Scan) -> Void
        fileprivate let alive = Mutex(true)
        fileprivate let id: UInt64

        fileprivate init(id: UInt64, changed: @escaping @Sendable (Scan) -> Void) {
            self.id = id
            self.changed = changed
        }
    }

    private struct State {
        var subscribers: [Subscription] = []
        var nextID: UInt64 = 1
        var thread: PosixThread?
    }

    private let state = Mutex(State())
    private let threadName: String
    private let timing: Timing
    private let makeSource: @Sendable () -> any HotplugSource
    private let scan: @Sendable () throws(BackendFailure) -> Scan
    private let isPending: @Sendable (Scan) -> Bool

    /// How many events the monitor has received: a listing made when this count was N still holds
    /// while it is N.
    public let eventCount = Atomic<UInt64>(0)
    /// Whether the monitor receives events (its source works); until then and without it, nothing
    /// can be cached.
    public let isWatching = Atomic<Bool>(false)

    /// A monitor whose thread (named `threadName`, at most 15 bytes) starts with the first
    /// subscription and then lives as long as the process (a plugin is never unloaded).
    ///
    /// - Parameters:
    ///   - threadName: The monitor thread's name.
    ///   - timing: Settle and pending intervals.
    ///   - source: Makes the event source, on the monitor's thread.
    ///   - scan: Lists the devices.
    ///   - isPending: Whether a scan has a device whose id is not final yet.
    public init(
        threadName: String, timing: Timing, source: @escaping @Sendable () -> any HotplugSource,
        scan: @escaping @Sendable () throws(BackendFailure) -> Scan, isPending: @escaping @Sendable (Scan) -> Bool
    ) {
        self.threadName = threadName
        self.timing = timing
        self.makeSource = source
        self.scan = scan
        self.isPending = isPending
    }

    /// Calls `changed` (on the monitor's thread) with a new scan whenever devices change. Starts the
    /// monitor thread if needed.
    public func subscribe(_ changed: @escaping @Sendable (Scan) -> Void) throws(BackendFailure) -> Subscription {
        let result: Result<Subscription, BackendFailure> = state.withLock { state in
            let subscription = Subscription(id: state.nextID, changed: changed)
            state.nextID += 1
            if state.thread == nil {
                do throws(ThreadStartError) {
                    state.thread = try PosixThread.start(name: threadName) { [self] in run() }
                } catch {
                    return .failure(BackendFailure(error))
                }
            }
            state.subscribers.append(subscription)
            return .success(subscription)
        }
        return try result.get()
    }

    /// Stops calling `subscription`; when it returns, no call is in progress (unless called from the
    /// monitor's own thread, from inside that very call).
    public func unsubscribe(_ subscription: Subscription) {
        let onMonitorThread = state.withLock { state in
            state.subscribers.removeAll { $0.id == subscription.id }
            return state.thread?.isCurrent ?? false
        }
        if onMonitorThread { return }
        subscription.alive.withLock { $0 = false }
    }

    /// Scans and hands the result to every subscriber; whether a device is pending.
    private func notifySubscribers() -> Bool {
        let subscribers = state.withLock { $0.subscribers }
        guard !subscribers.isEmpty else { return false }
        let found: Scan
        do throws(BackendFailure) { found = try scan() } catch { return true }
        for subscriber in subscribers {
            subscriber.alive.withLock { alive in if alive { subscriber.changed(found) } }
        }
        return isPending(found)
    }

    private func run() {
        var source = makeSource()
        let fd = source.fileDescriptor
        let watching = fd >= 0
        isWatching.store(watching, ordering: .releasing)
        var dirty = false
        var pendingSince: UInt64?
        while true {
            let timeout: Int32 = !watching ? 1000 : dirty ? timing.settleMilliseconds : pendingSince != nil ? timing.pendingMilliseconds : -1
            var ready: Int32 = 0
            if watching {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                ready = poll(&descriptor, 1, timeout)
                if ready < 0, errno == EINTR { continue }
            } else {
                Monotonic.sleep(until: Monotonic.now() + UInt64(timeout) * 1_000_000)
            }
            if ready > 0 {
                if source.drain() {
                    eventCount.add(1, ordering: .releasing)
                    dirty = true
                }
                continue
            }
            // Timed out: the burst settled, a pending device is due, or (without a source) the
            // periodic rescan is due.
            guard dirty || pendingSince != nil || !watching else { continue }
            dirty = false
            let pending = notifySubscribers()
            let now = Monotonic.now()
            if pending {
                if pendingSince == nil { pendingSince = now }
                if let since = pendingSince, now - since > timing.pendingLimitNanoseconds { pendingSince = nil }
            } else {
                pendingSince = nil
            }
        }
    }
}

/// Hears of device nodes through inotify on a directory (`/dev`): works with and without udev
/// (devtmpfs creates and removes the nodes itself, and udev only adjusts their permissions
/// afterwards, which `IN_ATTRIB` also reports), so hotplug works in a container or the VM rig as on
/// a desktop. Without inotify (`EMFILE`: the per-user limit of instances is reached) there is no
/// descriptor, and the monitor rescans once a second.
public struct InotifySource: HotplugSource {
    public let fileDescriptor: Int32
    private let prefix: [UInt8]
    private var buffer = [UInt8](repeating: 0, count: 8192)

    /// Watches `directory` for entries whose names start with `prefix` (`hidraw`).
    public init(directory: String, namePrefix prefix: String) {
        self.prefix = Array(prefix.utf8)
        var fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if fd >= 0 {
            let mask = UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO)
            if inotify_add_watch(fd, directory, mask) < 0 {
                close(fd)
                fd = -1
            }
        }
        fileDescriptor = fd
    }

    public mutating func drain() -> Bool {
        var relevant = false
        let prefix = self.prefix
        Self.readEvents(fileDescriptor, into: &buffer) { _, _, name in
            if name.starts(with: prefix) { relevant = true }
        }
        return relevant
    }

    /// Reads every event queued on the inotify descriptor `fd` (non-blocking) through `buffer`,
    /// calling `event` with each one's watch descriptor, mask and name (without its NUL padding).
    public static func readEvents(_ fd: Int32, into buffer: inout [UInt8], _ event: (Int32, UInt32, ArraySlice<UInt8>) -> Void) {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { bytes in
                    (bytes.load(fromByteOffset: offset, as: Int32.self), bytes.load(fromByteOffset: offset + 4, as: UInt32.self),
                     Int(bytes.load(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameStart = offset + header
                event(watch, mask, buffer[nameStart..<min(nameStart + length, count)].prefix { $0 != 0 })
                offset = nameStart + length
            }
        }
    }
}
