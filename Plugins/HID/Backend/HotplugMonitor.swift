import HapticsPluginKit
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Watches `/dev` for hidraw nodes appearing and disappearing, scans once, and hands the result to
/// every subscribed backend instance.
///
/// inotify on `/dev` works with and without udev (devtmpfs creates and removes the nodes itself, and
/// udev only adjusts their permissions afterwards, which `IN_ATTRIB` also reports), so hotplug works
/// in a container or the VM rig as on a desktop. When inotify is unavailable (`EMFILE`: the
/// per-user limit of inotify instances is reached), the monitor rescans once a second instead.
///
/// After an event it waits 20 ms for the burst to settle (a node is created, then its permissions
/// change), then scans (``Discovery/scan()``) and calls the subscribers with the result. While a
/// controller is pending (its node exists but its driver is still binding, so its id is not final)
/// it scans again every 50 ms, for at most 20 s. While nothing happens, the thread sleeps in `poll` with no time-out:
/// no wake-ups.
///
/// One monitor serves the whole process (one thread, one inotify instance), however many backend
/// instances there are: tests create one per `HapticSystem`, and inotify instances are a scarce
/// per-user resource (128 by default).
final class HotplugMonitor: Sendable {
    /// The process's monitor; its thread starts with the first subscription and then lives as long
    /// as the process (the plugin is never unloaded).
    static let shared = HotplugMonitor()

    /// One subscriber. The monitor calls `changed` on its own thread, holding `alive`, so
    /// ``HotplugMonitor/unsubscribe(_:)`` can wait for a call in progress to finish.
    final class Subscription: Sendable {
        fileprivate let changed: @Sendable (Discovery.Scan) -> Void
        fileprivate let alive = Mutex(true)
        fileprivate let id: UInt64

        fileprivate init(id: UInt64, changed: @escaping @Sendable (Discovery.Scan) -> Void) {
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

    /// The delay between an event and the rescan, in milliseconds.
    static let settleMilliseconds: Int32 = 20
    /// The interval between rescans while a controller is pending, in milliseconds.
    static let pendingMilliseconds: Int32 = 50
    /// How long a pending controller is waited for, in nanoseconds.
    static let pendingLimit: UInt64 = 20_000_000_000

    /// Calls `changed` (on the monitor's thread) with a new scan whenever hidraw nodes change. Starts
    /// the monitor thread if needed.
    func subscribe(_ changed: @escaping @Sendable (Discovery.Scan) -> Void) throws(BackendFailure) -> Subscription {
        let result: Result<Subscription, BackendFailure> = state.withLock { state in
            let subscription = Subscription(id: state.nextID, changed: changed)
            state.nextID += 1
            if state.thread == nil {
                do throws(ThreadStartError) {
                    state.thread = try PosixThread.start(name: "haptics-hid-hp") { [self] in run() }
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
    func unsubscribe(_ subscription: Subscription) {
        let onMonitorThread = state.withLock { state in
            state.subscribers.removeAll { $0.id == subscription.id }
            return state.thread?.isCurrent ?? false
        }
        if onMonitorThread { return }
        subscription.alive.withLock { $0 = false }
    }

    /// Scans and hands the result to every subscriber; whether a controller is pending. A failed scan
    /// (hidapi cannot start) counts as pending, so it is retried.
    private func notifySubscribers() -> Bool {
        let subscribers = state.withLock { $0.subscribers }
        guard !subscribers.isEmpty else { return false }
        let scan: Discovery.Scan
        do throws(BackendFailure) { scan = try Discovery.scan() } catch { return true }
        for subscriber in subscribers {
            subscriber.alive.withLock { alive in if alive { subscriber.changed(scan) } }
        }
        return scan.pending
    }

    private func run() {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        var watching = false
        if fd >= 0 {
            let mask = UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO)
            watching = inotify_add_watch(fd, "/dev", mask) >= 0
            if !watching { close(fd) }
        }
        var dirty = false
        var pendingSince: UInt64?
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let timeout: Int32 =
                !watching ? 1000 : dirty ? Self.settleMilliseconds : pendingSince != nil ? Self.pendingMilliseconds : -1
            var ready: Int32 = 0
            if watching {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                ready = poll(&descriptor, 1, timeout)
                if ready < 0, errno == EINTR { continue }
            } else {
                Monotonic.sleep(until: Monotonic.now() + UInt64(timeout) * 1_000_000)
            }
            if ready > 0 {
                if Self.drainEvents(fd: fd, buffer: &buffer) { dirty = true }
                continue
            }
            // Timed out: the burst settled, a pending controller is due, or (without inotify) the
            // periodic rescan is due.
            guard dirty || pendingSince != nil || !watching else { continue }
            dirty = false
            let pending = notifySubscribers()
            let now = Monotonic.now()
            if pending {
                if pendingSince == nil { pendingSince = now }
                if let since = pendingSince, now - since > Self.pendingLimit { pendingSince = nil }
            } else {
                pendingSince = nil
            }
        }
    }

    /// Reads every queued inotify event; whether one names a hidraw node.
    private static func drainEvents(fd: Int32, buffer: inout [UInt8]) -> Bool {
        var relevant = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return relevant }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameStart = offset + header
                let nameEnd = min(nameStart + length, count)
                let name = buffer[nameStart..<nameEnd].prefix { $0 != 0 }
                if name.starts(with: "hidraw".utf8) { relevant = true }
                offset = nameStart + length
            }
        }
    }
}
