import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// What the alsa backend drives: a PCM opened with a number of channels at a rate, and the
/// actuators on some of them. From a device file (``init(file:)``) or found by itself: a DualSense
/// on USB (``dualSense(card:periodMicroseconds:periods:)``).
public struct ALSAOutput: Sendable, Hashable {
    /// The device id: `alsa:NAME` for a device file, `alsa:054c:0ce6:usb-1-1.2` for a pad.
    public var id: String
    /// The human-readable name.
    public var name: String
    /// The PCM as alsa-lib names it.
    public var pcm: String
    /// Channels the PCM is opened with.
    public var channels: Int
    /// Frames per second.
    public var rate: Int
    /// Frames per period.
    public var periodFrames: Int
    /// Periods in the buffer.
    public var periods: Int
    /// Time from a sample leaving the buffer to the actuator moving, in nanoseconds.
    public var latencyNanoseconds: UInt64
    /// The actuators, in the device's channel order.
    public var actuators: [ALSADeviceFile.Actuator]
    /// The physical device shared with other backends, or nil: for a pad, the sysfs directory of
    /// its HID device, as the hid and evdev backends give it, so the host lists the pad once.
    public var physicalID: String?
    /// A DualSense's sound card (its holder, its hidraw node), or nil.
    public var padCard: SoundCard?
    /// A DualSense's USB product id (0x0CE6, Edge 0x0DF2), or nil.
    public var padProductID: UInt16?
    /// Where it was described (the device file, or `/proc/asound/cardN`), for messages.
    public var source: String

    /// The output a device file describes.
    public init(file: ALSADeviceFile) {
        id = file.deviceID
        name = file.description ?? file.name
        pcm = file.pcm
        channels = file.channels
        rate = file.rate
        periodFrames = file.periodFrames
        periods = file.periods
        latencyNanoseconds = UInt64(file.latencyMicroseconds) * 1_000
        actuators = file.actuators
        physicalID = nil
        source = file.path
    }

    /// Frames the buffer holds.
    public var bufferFrames: Int { periodFrames * periods }

    /// An output as given.
    public init(
        id: String, name: String, pcm: String, channels: Int, rate: Int, periodFrames: Int, periods: Int, latencyNanoseconds: UInt64,
        actuators: [ALSADeviceFile.Actuator], physicalID: String?, source: String
    ) {
        self.id = id
        self.name = name
        self.pcm = pcm
        self.channels = channels
        self.rate = rate
        self.periodFrames = periodFrames
        self.periods = periods
        self.latencyNanoseconds = latencyNanoseconds
        self.actuators = actuators
        self.physicalID = physicalID
        self.source = source
    }
}

/// A sound card as `/proc/asound` shows it.
public struct SoundCard: Sendable, Hashable {
    /// The card number (`hw:N`).
    public var index: Int
    /// The card's id (`hw:CARD=ID`): `DualSense`, or `Controller` for a gadget named after its product string.
    public var id: String
    /// `VVVV:PPPP` of a USB card (`/proc/asound/cardN/usbid`), else nil.
    public var usbID: String?
    /// The USB port path of a USB card (`1-1.2`, from `/proc/asound/cardN/usbbus`'s device), else nil.
    public var usbPort: String?
    /// The card's device directory in sysfs (`/sys/devices/…/1-1.2:1.0`), else nil.
    public var sysfsDevice: String?
    /// The hidraw node (`/dev/hidrawN`) of a HID interface of the same USB device (a DualSense's
    /// controls), else nil.
    public var hidraw: String?
    /// That node's HID device in sysfs (`/sys/devices/…/1-1:1.3/0003:054C:0CE6.0001`), else nil: the
    /// physical id the hid and evdev backends give the pad.
    public var hidDevice: String?

    /// A card.
    public init(
        index: Int, id: String, usbID: String? = nil, usbPort: String? = nil, sysfsDevice: String? = nil, hidraw: String? = nil,
        hidDevice: String? = nil
    ) {
        self.index = index
        self.id = id
        self.usbID = usbID
        self.usbPort = usbPort
        self.sysfsDevice = sysfsDevice
        self.hidraw = hidraw
        self.hidDevice = hidDevice
    }

    /// The cards under `procRoot` (`/proc/asound`), with their sysfs devices under `sysfsRoot`
    /// (`/sys`): every `cardN` directory with an `id`. Reads files only; never opens a card.
    public static func scan(procRoot: String = "/proc/asound", sysfsRoot: String = "/sys") -> [SoundCard] {
        var cards: [SoundCard] = []
        for index in 0..<32 {
            let directory = "\(procRoot)/card\(index)"
            guard let id = Self.firstLine(directory + "/id") else { continue }
            var card = SoundCard(index: index, id: id)
            card.usbID = Self.firstLine(directory + "/usbid")
            if let device = Self.realPath("\(sysfsRoot)/class/sound/card\(index)/device") {
                card.sysfsDevice = device
                // The interface directory is PORT:CONFIG.INTERFACE; the USB device is its parent.
                if let last = device.split(separator: "/").last, let colon = last.firstIndex(of: ":") {
                    card.usbPort = String(last[..<colon])
                    let usbDevice = String(device[..<(device.lastIndex(of: "/") ?? device.endIndex)])
                    if let hid = Self.hidrawNode(under: usbDevice, sysfsRoot: sysfsRoot) {
                        card.hidraw = hid.node
                        card.hidDevice = hid.device
                    }
                }
            }
            cards.append(card)
        }
        return cards
    }

    /// Who holds the card's first playback substream (`owner_pid` in
    /// `PROC/cardN/pcm0p/sub0/status`, the name from `/proc/PID/comm`): `pid 812 (pipewire)`, or nil.
    public func playbackOwner(procRoot: String = "/proc/asound") -> String? {
        playbackOwnerPID(procRoot: procRoot).map(Self.process)
    }

    /// A process as messages name it: `pid 812 (pipewire)` (the name from `/proc/PID/comm`).
    public static func process(_ pid: Int32) -> String { "pid \(pid) (\(firstLine("/proc/\(pid)/comm") ?? "?"))" }

    /// The process id holding the card's first playback substream, or nil when it is closed (the
    /// status file then says only `closed`).
    public func playbackOwnerPID(procRoot: String = "/proc/asound") -> Int32? {
        guard let bytes = try? readFile(atPath: "\(procRoot)/card\(index)/pcm0p/sub0/status", limit: 65_536) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard let line = lines.first(where: { $0.hasPrefix("owner_pid") }), let pid = line.split(separator: ":").last.map(Self.trimmed) else { return nil }
        return Int32(pid)
    }

    /// The hidraw node whose device lies under `usbDevice` (a sysfs directory), as `/dev/hidrawN`,
    /// with that device's directory; the lowest-numbered when there are several.
    static func hidrawNode(under usbDevice: String, sysfsRoot: String) -> (node: String, device: String)? {
        guard let directory = opendir("\(sysfsRoot)/class/hidraw") else { return nil }
        defer { closedir(directory) }
        var nodes: [(node: String, device: String)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("hidraw"), let device = realPath("\(sysfsRoot)/class/hidraw/\(name)/device"), device.hasPrefix(usbDevice + "/") {
                nodes.append(("/dev/" + name, device))
            }
        }
        return nodes.min { $0.node.count != $1.node.count ? $0.node.count < $1.node.count : $0.node < $1.node }
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func firstLine(_ path: String) -> String? {
        guard let bytes = try? readFile(atPath: path, limit: 4_096) else { return nil }
        let line = trimmed(String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)[...])
        return line.isEmpty ? nil : line
    }

    static func trimmed(_ text: Substring) -> String {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\n" { text = text.dropLast() }
        return String(text)
    }
}

extension ALSAOutput {
    /// Whether this is a DualSense's coils found by their card, not a device file.
    public var isDualSense: Bool { padProductID != nil }

    /// A DualSense's hidraw node, through which its rumble emulation is switched off while the
    /// coils play (``padProductID`` says which pad), or nil.
    public var padHidraw: String? { padCard?.hidraw }

    /// A DualSense's default period: 5 ms (240 frames at 48 kHz).
    public static let dualSensePeriodMicroseconds = 5_000
    /// A DualSense's default periods in the buffer: 3 (15 ms queued).
    public static let dualSensePeriods = 3

    /// The USB ids of the pads whose voice coils are a USB audio device: DualSense 054c:0ce6 and
    /// DualSense Edge 054c:0df2.
    public static let dualSenseUSBIDs: Set<String> = ["054c:0ce6", "054c:0df2"]

    /// The voice coils of a DualSense on USB: its card's 4-channel, 48 kHz playback, the coils on
    /// channels 3 (left) and 4 (right), 1–2 (the speaker and headphones) left silent. Nil for a card
    /// that is no DualSense. The coils' resonance is not published: unknown until calibrated, driven
    /// over 20–400 Hz meanwhile. The buffer is `periods` periods of `periodMicroseconds` each.
    public static func dualSense(
        card: SoundCard, periodMicroseconds: Int = dualSensePeriodMicroseconds, periods: Int = dualSensePeriods
    ) -> ALSAOutput? {
        guard let usb = card.usbID, dualSenseUSBIDs.contains(usb) else { return nil }
        let edge = usb == "054c:0df2"
        let coil = { (name: String, channel: Int) in
            ALSADeviceFile.Actuator(name: name, channel: channel, kind: .voiceCoil, resonantFrequency: nil, frequencyRange: 20...400, ratedLevel: 1)
        }
        let place = card.usbPort.map { "usb-" + $0 } ?? "card-" + card.id
        // The pad's HID device, which the hid and evdev backends name it by, so its listings merge;
        // else the USB device (the interface's parent directory), which that HID device hangs off.
        let physical = card.hidDevice ?? card.sysfsDevice.map { device in String(device[..<(device.lastIndex(of: "/") ?? device.endIndex)]) }
        var output = ALSAOutput(
            id: "alsa:\(usb):\(place)", name: (edge ? "DualSense Edge" : "DualSense") + " voice coils (USB)", pcm: "hw:CARD=\(card.id),DEV=0",
            channels: 4, rate: 48_000, periodFrames: 48 * periodMicroseconds / 1_000, periods: periods, latencyNanoseconds: 1_000_000,
            actuators: [coil("left", 3), coil("right", 4)], physicalID: physical, source: "/proc/asound/card\(card.index)")
        output.padCard = card
        output.padProductID = UInt16(usb.suffix(4), radix: 16)
        return output
    }
}
