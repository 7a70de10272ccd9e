import Foundation
import Glibc
import Synchronization

/// A virtual USB DualSense on a real USB bus inside the VM rig: a configfs gadget (UAC2 + HID)
/// on `dummy_hcd_iso` (the kernel's `dummy_hcd` with isochronous endpoints,
/// `Scripts/vm/dummy-hcd-iso.py`), enumerated by the host side's own drivers: `snd-usb-audio`
/// makes the pad's sound card (id `Controller`, 4 channels at 48 kHz, channel map FL FR RL RR)
/// and `usbhid` its HID interface (`hid-generic` binds it when the boot ignores the special
/// drivers; `hid-playstation` refuses it, for `f_hid` answers every GET_REPORT with zeros).
///
/// The gadget side is a second sound card, ``gadgetCardID``: what an application plays on the
/// pad's card is captured there, bit-exact and in channel order (`arecord -N`, started first).
/// Output reports written to the pad's hidraw node arrive at ``hidgPath``.
///
/// ``usbDevice`` and ``hidrawPath`` are read from sysfs here, on purpose apart from the alsa
/// backend's own scan (`SoundCard`), so a test comparing the two checks something.
///
/// One gadget at a time (the UDC is `dummy_udc.0`); ``remove()`` unbinds and deletes it, and
/// the next one can be made. Facts and sources: `Docs/DualSenseUSBGadget.md`.
public final class USBGadget {
    /// The pad's card id as `snd-usb-audio` names it: the product string's last word.
    public let cardID = "Controller"
    /// The gadget side's own card id (`f_uac2`).
    public let gadgetCardID = "UAC2Gadget"
    /// The configfs directory of the gadget.
    public let path: String
    /// The host side's USB device directory in sysfs (`/sys/devices/platform/dummy_hcd.0/usb1/1-1`).
    public private(set) var usbDevice: String
    /// The gadget's end of the HID interface (`/dev/hidgN`): reads the host's output reports.
    public let hidgPath: String
    private var removed = false

    private static let busy = Mutex(false)

    /// Builds the DualSense gadget (054c:0ce6, Sony's strings; UAC2: playback 4 channels at
    /// 48 kHz S16, adaptive, and the pad's stereo microphone; HID: `descriptor`, 64-byte reports),
    /// binds it and waits until the host side has made its sound card and its hidraw node.
    public init(dualSenseDescriptor descriptor: HIDReportDescriptor, productID: UInt16 = 0x0CE6) throws {
        for module in ["usbhid", "hid-generic", "snd-usb-audio", "libcomposite", "usb_f_uac2", "usb_f_hid", "dummy_hcd_iso"] {
            try VMRig.loadKernelModule(module)
        }
        guard Self.busy.withLock({ taken in defer { taken = true }; return !taken }) else {
            throw RigError.invalidArgument("one USBGadget at a time: remove() the other first")
        }
        path = "/sys/kernel/config/usb_gadget/" + VMRig.uniqueName("ds")
        hidgPath = "/dev/hidg0"
        usbDevice = ""
        do {
            try SysFS.makeDirectory(path)
            try SysFS.write(path + "/idVendor", "0x054c")
            try SysFS.write(path + "/idProduct", String(format: "0x%04x", productID))
            try SysFS.write(path + "/bcdDevice", "0x0100")
            try SysFS.makeDirectory(path + "/strings/0x409")
            try SysFS.write(path + "/strings/0x409/manufacturer", "Sony Interactive Entertainment")
            try SysFS.write(path + "/strings/0x409/product", "DualSense Wireless Controller")
            try SysFS.makeDirectory(path + "/configs/c.1")
            let audio = path + "/functions/uac2.ds"
            try SysFS.makeDirectory(audio)
            // c_*: what the gadget captures, the host's playback; p_*: the microphone.
            for (name, value) in [("c_chmask", "0x33"), ("c_srate", "48000"), ("c_ssize", "2"), ("c_sync", "adaptive"),
                                  ("p_chmask", "0x3"), ("p_srate", "48000"), ("p_ssize", "2")] {
                try SysFS.write(audio + "/" + name, value)
            }
            let hid = path + "/functions/hid.ds"
            try SysFS.makeDirectory(hid)
            try SysFS.write(hid + "/protocol", "0")
            try SysFS.write(hid + "/subclass", "0")
            try SysFS.write(hid + "/report_length", "64")
            try SysFS.write(hid + "/report_desc", bytes: descriptor.bytes)
            for function in ["uac2.ds", "hid.ds"] {
                guard symlink(path + "/functions/" + function, path + "/configs/c.1/" + function) == 0 else {
                    throw RigError.errno("symlink", path + "/configs/c.1/" + function)
                }
            }
            try SysFS.write(path + "/UDC", "dummy_udc.0")
            let card = cardID
            usbDevice = try SysFS.wait(for: "the pad's sound card \(card) and its hidraw node", timeout: .seconds(30)) { () -> String? in
                guard let device = Self.soundCardDevice(id: card), Self.hidrawNode(under: device) != nil else { return nil }
                return device
            }
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// The hidraw node (`/dev/hidrawN`) of the pad's HID interface.
    public var hidrawPath: String? { Self.hidrawNode(under: usbDevice) }

    /// The HID device in sysfs behind that node (`…/1-1/1-1:1.1/0003:054C:0CE6.0001`), which the
    /// hid backend names the pad by.
    public var hidDevice: String? {
        hidrawPath.flatMap { Self.realPath("/sys/class/hidraw/\($0.dropFirst("/dev/".count))/device") }
    }

    /// Unbinds the gadget and deletes it from configfs; waits until the host side's card is gone.
    /// Idempotent.
    public func remove() {
        guard !removed else { return }
        removed = true
        try? SysFS.write(path + "/UDC", "\n")
        for function in ["uac2.ds", "hid.ds"] { unlink(path + "/configs/c.1/" + function) }
        for directory in ["/configs/c.1", "/functions/uac2.ds", "/functions/hid.ds", "/strings/0x409", ""] {
            try? SysFS.removeDirectory(path + directory)
        }
        let card = cardID
        _ = try? SysFS.wait(for: "card \(card) to go", timeout: .seconds(10)) { Self.soundCardDevice(id: card) == nil ? true : nil }
        Self.busy.withLock { $0 = false }
    }

    /// The USB device directory of the sound card with id `id`, if one is there.
    static func soundCardDevice(id: String) -> String? {
        for index in 0..<32 where (try? SysFS.value("/proc/asound/card\(index)/id")) == id {
            // The card's device is the USB interface (1-1:1.0); its parent is the USB device.
            guard let interface = Self.realPath("/sys/class/sound/card\(index)/device") else { return nil }
            return String(interface[..<(interface.lastIndex(of: "/") ?? interface.endIndex)])
        }
        return nil
    }

    /// The hidraw node whose device lies under `usbDevice`.
    static func hidrawNode(under usbDevice: String) -> String? {
        for node in (try? SysFS.list("/sys/class/hidraw")) ?? [] {
            if let device = realPath("/sys/class/hidraw/\(node)/device"), device.hasPrefix(usbDevice + "/") {
                return "/dev/" + node
            }
        }
        return nil
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
