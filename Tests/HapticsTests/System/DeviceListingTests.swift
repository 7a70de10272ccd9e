import Haptics
import Testing

@Suite("Device listing: one entry per physical device")
struct DeviceListingTests {
    func listing(_ id: String, physical: String?, preference: Int, unavailable: String? = nil) -> DeviceDescription {
        DeviceDescription(
            id: id, name: id, backend: String(id.prefix { $0 != ":" }), actuator: .dualRumble,
            channels: [ChannelDescription(name: "strong", actuator: .erm)], minimumUpdateInterval: 0.01, wakeLatency: 0.001,
            physicalID: physical, preference: preference, unavailableReason: unavailable)
    }

    @Test("two backends reaching one pad: the higher preference serves it, the other becomes an alternative, in the first one's place")
    func preferenceWins() {
        let merged = HapticSystem.merged([
            listing("evdev:pad", physical: "/sys/devices/x/0003:054C:0CE6.0001", preference: 100),
            listing("recording:lra", physical: nil, preference: 0),
            listing("hid:054c:0ce6:usb:aa", physical: "/sys/devices/x/0003:054C:0CE6.0001", preference: 200),
        ])
        #expect(merged.map(\.id) == ["hid:054c:0ce6:usb:aa", "recording:lra"])
        #expect(merged[0].alternatives == ["evdev:pad"])
        #expect(merged[1].alternatives.isEmpty)
    }

    @Test("an available listing beats a preferred one the user cannot open (hidraw without the udev rule: evdev serves)")
    func availabilityFirst() {
        let merged = HapticSystem.merged([
            listing("hid:pad", physical: "/sys/p", preference: 200, unavailable: "permission denied opening /dev/hidraw0"),
            listing("evdev:pad", physical: "/sys/p", preference: 100),
        ])
        #expect(merged.map(\.id) == ["evdev:pad"])
        #expect(merged[0].alternatives == ["hid:pad"])
    }

    @Test("equal preference: the backend found first keeps it; listings without a physical id are never merged")
    func ties() {
        let merged = HapticSystem.merged([
            listing("a:1", physical: "/sys/p", preference: 5), listing("b:1", physical: "/sys/p", preference: 5),
            listing("c:1", physical: nil, preference: 5), listing("d:1", physical: nil, preference: 5),
        ])
        #expect(merged.map(\.id) == ["a:1", "c:1", "d:1"])
        #expect(merged[0].alternatives == ["b:1"])
    }
}
