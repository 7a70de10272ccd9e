/// What sysfs says about one input device with force feedback: everything the backend lists it by.
/// Read from `/sys/class/input/inputN` and its parents (through libudev, which reads the same files
/// with or without a udev daemon); nothing here comes from udev rules.
public struct InputDeviceFacts: Sendable, Hashable {
    /// The event node, `/dev/input/event5`.
    public var eventNode: String
    /// The input device's sysfs path, `/sys/devices/…/input/input7`: input device numbers are never
    /// reused while the system runs, so this names one plugged-in instance.
    public var inputSyspath: String
    /// `name`: the driver's name for the device (`Sony Interactive Entertainment DualSense Wireless Controller`, `pwm-vibrator`).
    public var name: String
    /// `phys`: where it is attached (`usb-0000:00:14.0-2/input0`); often empty on platform devices.
    public var phys: String
    /// `uniq`: its own unique string (a Bluetooth or Sony pad's MAC address); usually empty.
    public var uniq: String
    /// `id/bustype`: a `BUS_*` number.
    public var bus: UInt16
    /// `id/vendor`.
    public var vendor: UInt16
    /// `id/product`.
    public var product: UInt16
    /// `capabilities/ff`: the force-feedback codes.
    public var ff: InputBitmap
    /// `capabilities/key`: the key and button codes.
    public var keys: InputBitmap
    /// The driver bound to the input device's parent (`xpad`, `playstation`, `pwm-vibrator`); nil
    /// when it has none.
    public var driver: String?
    /// The parent device's sysfs path, nil for a device without one (uinput makes those).
    public var parentSyspath: String?
    /// The sysfs path of the nearest ancestor in the `hid` subsystem (`/sys/devices/…/0003:054C:0CE6.0001`).
    public var hidSyspath: String?
    /// The USB serial number of the USB device above, "" when there is none (what udev's
    /// `ID_SERIAL_SHORT` is read from).
    public var usbSerial: String

    /// Facts.
    public init(
        eventNode: String, inputSyspath: String, name: String, phys: String = "", uniq: String = "", bus: UInt16, vendor: UInt16,
        product: UInt16, ff: InputBitmap, keys: InputBitmap = InputBitmap(codes: []), driver: String? = nil, parentSyspath: String? = nil,
        hidSyspath: String? = nil, usbSerial: String = ""
    ) {
        self.eventNode = eventNode
        self.inputSyspath = inputSyspath
        self.name = name
        self.phys = phys
        self.uniq = uniq
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.ff = ff
        self.keys = keys
        self.driver = driver
        self.parentSyspath = parentSyspath
        self.hidSyspath = hidSyspath
        self.usbSerial = usbSerial
    }

    /// The event node's name, `event5`.
    public var eventName: String { eventNode.split(separator: "/").last.map(String.init) ?? eventNode }

    /// The physical device shared with other backends: the HID device (the hidraw node the `hid`
    /// backend opens hangs off the same directory), else the input device's parent, else none.
    public var physicalID: String? { hidSyspath ?? parentSyspath }

    /// The driver part of the id: the parent's driver, `virtual` for a device without a parent
    /// (uinput), `none` for a parent without a driver.
    public var driverSegment: String {
        guard parentSyspath != nil else { return "virtual" }
        return Self.clean(driver ?? "none", keepColon: false)
    }

    /// The bus part of the id (`BUS_*` of linux/input.h).
    public var busSegment: String {
        switch bus {
        case 0x03: "usb"
        case 0x05: "bluetooth"
        case 0x06: "virtual"
        case 0x18: "i2c"
        case 0x19: "host"
        case 0x1C: "spi"
        default: "bus" + Self.hex4(bus)
        }
    }

    /// What tells this device from another of the same model: `uniq`, else the USB serial number,
    /// else `phys`, else the parent's path below `/sys/devices` (`platform/vibrator`: the device
    /// tree names it, as udev's `ID_PATH` does), else the name.
    public var key: String {
        if !uniq.isEmpty { return Self.clean(uniq, keepColon: true) }
        if !usbSerial.isEmpty { return Self.clean(usbSerial, keepColon: true) }
        if !phys.isEmpty { return Self.clean(phys, keepColon: true) }
        if let parentSyspath {
            let relative = parentSyspath.hasPrefix("/sys/devices/") ? String(parentSyspath.dropFirst("/sys/devices/".count)) : parentSyspath
            return Self.clean(relative, keepColon: true)
        }
        return Self.clean(name, keepColon: true)
    }

    /// The device id, `evdev:DRIVER:VVVV:PPPP:BUS:KEY`, e.g.
    /// `evdev:playstation:054c:0ce6:usb:02:56:00:12:00:01` or
    /// `evdev:pwm-vibrator:0000:0000:host:platform/vibrator`, cut to the contract's 127 bytes.
    ///
    /// Built from sysfs alone, so it is the same with and without a udev daemon, across replugs (the
    /// key is the device's own serial or MAC address where it has one, its port or device-tree path
    /// otherwise) and across reboots; never from the event or input number. The driver comes first
    /// because magnitude mappings belong to the driver: a profile named by the prefix
    /// `evdev:xpad:045e:02ea` serves that pad on every port.
    public var id: String {
        let id = "evdev:\(driverSegment):\(Self.hex4(vendor)):\(Self.hex4(product)):\(busSegment):\(key)"
        return String(decoding: id.utf8.prefix(127), as: UTF8.self)
    }

    /// Printable ASCII without spaces; everything else (and `:` when not kept) becomes `_`.
    static func clean(_ text: String, keepColon: Bool) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    (0x21...0x7E).contains(scalar.value) && (keepColon || scalar != ":") ? scalar : "_"
                }))
    }

    /// Four lower-case hex digits.
    public static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// How long the backend lets an effect run without hearing from the process, and how often it
/// renews a held drive.
///
/// Every play is bounded by `replay.length`: the kernel (ff-memless, which every in-kernel vibrator
/// and pad driver uses) stops the effect that long after the last play or update, and a uinput
/// driver is told the same length. While the host holds a drive (a continuous event is one frame),
/// the backend's own thread plays the effect again every ``refreshMilliseconds``, which restarts that
/// time. A process that stalls (stopped, swapped out, stuck) stops refreshing, so the motor stops
/// within ``lengthMilliseconds`` of its last refresh; a process that dies closes its descriptor, and
/// the kernel erases, hence stops, its effects at once.
public enum ReplayPolicy {
    /// `replay.length` of every effect, in milliseconds.
    public static let lengthMilliseconds: UInt16 = 500
    /// How long after a play the effect is played again while the drive is held, in milliseconds:
    /// 300 ms of slack before the length runs out, for a late scheduler.
    public static let refreshMilliseconds: UInt64 = 200
}
