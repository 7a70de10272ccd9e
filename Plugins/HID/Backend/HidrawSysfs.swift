import HIDReports

#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says about the HID device behind a hidraw node, from
/// `/sys/class/hidraw/hidrawN/device/uevent`:
///
/// ```
/// DRIVER=playstation
/// HID_ID=0005:0000054C:00000CE6
/// HID_NAME=Wireless Controller
/// HID_PHYS=aa:bb:cc:dd:ee:ff
/// HID_UNIQ=02:56:00:12:00:01
/// ```
struct HIDUevent: Sendable, Hashable {
    /// The Linux bus number of `HID_ID` (`BUS_USB` 0x03, `BUS_BLUETOOTH` 0x05), if present.
    var bus: UInt16?
    /// The vendor id of `HID_ID`.
    var vendorID: UInt32?
    /// The product id of `HID_ID`.
    var productID: UInt32?
    /// `HID_NAME`.
    var name = ""
    /// `HID_PHYS`: where the device is attached (a USB port path, the Bluetooth adapter's address).
    var phys = ""
    /// `HID_UNIQ`: the device's own unique string (a Bluetooth device's address, a Sony pad's MAC).
    var uniq = ""

    /// Parses the text of a uevent file.
    init(text: String) {
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals]
            let value = String(line[line.index(after: equals)...])
            switch key {
            case "HID_ID":
                let fields = value.split(separator: ":")
                guard fields.count == 3 else { continue }
                bus = UInt16(fields[0], radix: 16)
                vendorID = UInt32(fields[1], radix: 16)
                productID = UInt32(fields[2], radix: 16)
            case "HID_NAME": name = value
            case "HID_PHYS": phys = value
            case "HID_UNIQ": uniq = value
            default: continue
            }
        }
    }

    /// The transport `HID_ID`'s bus names, if it is USB or Bluetooth.
    var transport: HIDTransport? { bus.flatMap { HIDTransport(linuxBus: $0) } }
}

/// Which file a `/dev/hidrawN` path is: devtmpfs makes a new inode for every new device, so a node
/// that was removed and created again for another controller no longer matches.
struct NodeIdentity: Sendable, Hashable {
    var device: UInt64
    var inode: UInt64
    var rdev: UInt64

    /// The identity of the file at `path` now, or `nil` if it does not exist.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        rdev = UInt64(info.st_rdev)
    }
}

/// Small, allocation-light reads of the hidraw class in sysfs.
enum HidrawSysfs {
    /// `/sys/class/hidraw`.
    static let classDirectory = "/sys/class/hidraw"

    /// The node's name (`hidraw3`) from its path (`/dev/hidraw3`).
    static func nodeName(path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// The uevent of the HID device behind `path`, or `nil` when the node has gone.
    static func uevent(path: String) -> HIDUevent? {
        readFile("\(classDirectory)/\(nodeName(path: path))/device/uevent").map(HIDUevent.init(text:))
    }

    /// Whether a driver has finished binding the HID device behind `path`.
    ///
    /// The hidraw node appears while a driver's probe is still running (it calls `hid_hw_start`
    /// early), and drivers such as hid-playstation and hid-sony set `HID_UNIQ` to the pad's MAC
    /// address later in the same probe. The `driver` link appears only when the probe has returned,
    /// so waiting for it keeps a device's id from changing under the host.
    static func isBound(path: String) -> Bool {
        access("\(classDirectory)/\(nodeName(path: path))/device/driver", F_OK) == 0
    }

    /// The sysfs path of the HID device behind `path` (`/sys/devices/…/0005:054C:0CE6.0003`), its
    /// physical identity: the evdev backend reaches the same pad through an input node below the
    /// same directory, so both list it with this path and the host lists the pad once.
    static func deviceDirectory(path: String) -> String? {
        guard let resolved = realpath("\(classDirectory)/\(nodeName(path: path))/device", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether the hidraw node is still registered (its sysfs entry exists).
    static func exists(path: String) -> Bool {
        access("\(classDirectory)/\(nodeName(path: path))", F_OK) == 0
    }

    /// The whole file at `path` as UTF-8, or `nil` if it cannot be read.
    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
