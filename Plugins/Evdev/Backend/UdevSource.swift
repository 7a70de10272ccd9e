import CUdev
import HapticsPluginKit
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Watches for input devices appearing and disappearing through a libudev monitor, scans, and hands
/// the result to every subscribed backend instance.
///
/// Which events: with a udev daemon running (`/run/udev/control` exists) the monitor listens to
/// udevd's own events, which come after the rules ran, so a node is already tagged and its access
/// granted when the backend lists it; without one (containers, the VM rig) it listens to the
/// kernel's uevents directly (the node exists by then: devtmpfs creates it before the uevent goes
/// out). Only the `input` subsystem is delivered (a filter in the kernel socket). When no monitor
/// can be made (no netlink socket in a sandbox), it rescans once a second instead.
///
/// After an event it waits 20 ms for the burst to settle (an input device and its event node come
/// together), then scans (``Discovery/scan()``) and calls the subscribers. A HID driver still probing
/// a device (``Discovery/Scan/pending``) announces the end of its probe with the HID device's "bind"
/// uevent, which the monitor also receives (the `hid` subsystem is in its filter), so it never polls
/// for it; it rescans once a second meanwhile, for at most 20 s, in case that event is lost. While
/// nothing happens the thread sleeps in `poll` with no time-out: no wake-ups.
///
/// One monitor serves the whole process: one thread, one netlink socket (close-on-exec, like every
/// descriptor the backend opens). It also counts the uevents it receives, so a backend can tell that
/// nothing changed since its last scan and answer a listing without scanning again.
final class UdevMonitor: Sendable {
    /// The process's monitor; its thread starts with the first subscription and lives as long as the
    /// process (the plugin is never unloaded).
    static let shared = UdevMonitor()

    /// One subscriber; called on the monitor's thread holding `alive`, so ``unsubscribe(_:)`` can
    /// wait for a call in progress.
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

    /// How many input uevents the monitor has received, process-wide: a listing made when this
    /// count was N still holds while it is N (see ``EvdevBackend/devices()``).
    let eventCount = Atomic<UInt64>(0)
    /// Whether the monitor receives uevents (its netlink socket works); until then and without it,
    /// nothing can be cached.
    let isWatching = Atomic<Bool>(false)

    /// The delay between an event and the rescan, in milliseconds.
    static let settleMilliseconds: Int32 = 20
    /// The interval between rescans while a device is pending, in milliseconds: a safety net only,
    /// the HID device's "bind" uevent normally ends the wait first.
    static let pendingMilliseconds: Int32 = 1000
    /// How long a pending device is waited for, in nanoseconds.
    static let pendingLimit: UInt64 = 20_000_000_000

    /// Calls `changed` (on the monitor's thread) with a new scan whenever input devices change.
    func subscribe(_ changed: @escaping @Sendable (Discovery.Scan) -> Void) throws(BackendFailure) -> Subscription {
        let result: Result<Subscription, BackendFailure> = state.withLock { state in
            let subscription = Subscription(id: state.nextID, changed: changed)
            state.nextID += 1
            if state.thread == nil {
                do throws(ThreadStartError) {
                    state.thread = try PosixThread.start(name: "haptics-evdev-hp") { [self] in run() }
                } catch {
                    return .failure(BackendFailure(error))
                }
            }
            state.subscribers.append(subscription)
            return .success(subscription)
        }
        return try result.get()
    }

    /// Stops calling `subscription`; when it returns no call is in progress (unless called from the
    /// monitor's thread, from inside that very call).
    func unsubscribe(_ subscription: Subscription) {
        let onMonitorThread = state.withLock { state in
            state.subscribers.removeAll { $0.id == subscription.id }
            return state.thread?.isCurrent ?? false
        }
        if onMonitorThread { return }
        subscription.alive.withLock { $0 = false }
    }

    /// Scans and hands the result to every subscriber; whether a device is pending (a failed scan
    /// counts as pending, so it is retried).
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

    /// The netlink source: udevd's events when it runs, the kernel's otherwise.
    static var eventSource: String {
        access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel"
    }

    private func run() {
        let udev = udev_new()
        var monitor: OpaquePointer?
        if let udev, let made = udev_monitor_new_from_netlink(udev, Self.eventSource) {
            // `hid` too: a HID driver's probe ends with the HID device's "bind" uevent, which is when a
            // pending device's id is final.
            if udev_monitor_filter_add_match_subsystem_devtype(made, "input", nil) >= 0,
                udev_monitor_filter_add_match_subsystem_devtype(made, "hid", nil) >= 0, udev_monitor_enable_receiving(made) >= 0
            {
                monitor = made
            } else {
                udev_monitor_unref(made)
            }
        }
        let fd = monitor.map { udev_monitor_get_fd($0) } ?? -1
        if fd >= 0 {
            // libudev opens its socket with SOCK_CLOEXEC; make sure, and keep the reads non-blocking.
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        let watching = fd >= 0
        isWatching.store(watching, ordering: .releasing)
        var dirty = false
        var pendingSince: UInt64?
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
            if ready > 0, let monitor {
                // Drain every queued event; any of them (an event node, its input device) is a reason to rescan.
                while let device = udev_monitor_receive_device(monitor) {
                    udev_device_unref(device)
                    eventCount.add(1, ordering: .releasing)
                    dirty = true
                }
                continue
            }
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
}
