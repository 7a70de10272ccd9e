import CUdev
import HapticsPluginKit

#if canImport(Glibc)
import Glibc
#endif

/// Where the evdev backend's ``EvdevBackend/monitor`` hears of input devices: a libudev monitor.
///
/// Which events: with a udev daemon running (`/run/udev/control` exists) the monitor listens to
/// udevd's own events, which come after the rules ran, so a node is already tagged and its access
/// granted when the backend lists it; without one (containers, the VM rig) it listens to the
/// kernel's uevents directly (the node exists by then: devtmpfs creates it before the uevent goes
/// out). Only the `input` and `hid` subsystems are delivered (a filter in the kernel socket): a HID
/// driver still probing a device (``Discovery/Scan/pending``) announces the end of its probe with
/// the HID device's "bind" uevent. When no monitor can be made (no netlink socket in a sandbox),
/// there is no descriptor and the monitor rescans once a second instead. Its socket is
/// close-on-exec, like every descriptor the backend opens.
struct UdevSource: HotplugSource {
    let fileDescriptor: Int32
    private let monitor: OpaquePointer?

    /// The netlink source: udevd's events when it runs, the kernel's otherwise.
    static var eventSource: String {
        access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel"
    }

    init() {
        var monitor: OpaquePointer?
        if let udev = udev_new() {
            if let made = udev_monitor_new_from_netlink(udev, Self.eventSource) {
                if udev_monitor_filter_add_match_subsystem_devtype(made, "input", nil) >= 0,
                    udev_monitor_filter_add_match_subsystem_devtype(made, "hid", nil) >= 0, udev_monitor_enable_receiving(made) >= 0
                {
                    monitor = made
                } else {
                    udev_monitor_unref(made)
                }
            }
            // The monitor holds its own reference to the context.
            udev_unref(udev)
        }
        let fd = monitor.map { udev_monitor_get_fd($0) } ?? -1
        if fd >= 0 {
            // libudev opens its socket with SOCK_CLOEXEC; make sure, and keep the reads non-blocking.
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        self.monitor = monitor
        fileDescriptor = fd
    }

    /// Drains every queued event; any of them (an event node, its input device, a HID bind) is a
    /// reason to rescan.
    mutating func drain() -> Bool {
        guard let monitor else { return false }
        var any = false
        while let device = udev_monitor_receive_device(monitor) {
            udev_device_unref(device)
            any = true
        }
        return any
    }
}
