import ALSADevices
import Foundation
import Haptics
import HapticsSupport
import Testing

@Suite("ALSA device files: every key checked, errors name the file, the key and the fix")
struct ALSADeviceFileTests {
    func parse(_ text: String) throws(ConfigFileError) -> ALSADeviceFile {
        try ALSADeviceFile.parse(Array(text.utf8), path: "/etc/haptics/alsa.d/seat.json")
    }

    func error(_ text: String) -> ConfigFileError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("the shipped example reads back as written; defaults fill what is left out")
    func shippedExample() throws {
        let file = try ALSADeviceFile.load(path: TestSupport.packageRoot + "/Hardware/alsa/bass-shakers.json")
        #expect(file.deviceID == "alsa:bass-shakers")
        #expect(file.channels == 4 && file.rate == 48_000 && file.periodFrames == 240 && file.periods == 3)
        #expect(file.actuators.map(\.channel) == [3, 4])
        #expect(file.actuators[0].resonantFrequency == 40 && file.actuators[0].frequencyRange == 20...120 && file.actuators[0].ratedLevel == 0.7)

        let minimal = try parse(#"{"format": 1, "name": "coil", "pcm": "hw:1,0", "channels": 2, "actuators": [{"name": "main", "channel": 1, "resonant_frequency_hz": 170}]}"#)
        #expect(minimal.rate == 48_000 && minimal.periodMicroseconds == 5_000 && minimal.periods == 3 && minimal.latencyMicroseconds == 0)
        #expect(minimal.actuators[0].kind == .voiceCoil && minimal.actuators[0].frequencyRange == 85...340 && minimal.actuators[0].ratedLevel == 1)
    }

    @Test("bad values: each error names the key, the value and what is expected", arguments: [
        (#"{"format": 1, "name": "x", "pcm": "hw:1", "channels": 2, "actuators": [{"name": "a", "channel": 3}]}"#, "$.actuators[0].channel", "beyond the 2 channels"),
        (#"{"format": 1, "name": "x", "pcm": "hw:1", "channels": 2, "rate_hz": 8000, "actuators": [{"name": "a", "channel": 1, "frequency_max_hz": 4500}]}"#, "$.actuators[0].frequency_max_hz", "below half the rate"),
        (#"{"format": 1, "name": "x", "pcm": "hw:1", "channels": 2, "actuators": [{"name": "a", "channel": 1}, {"name": "b", "channel": 1}]}"#, "$.actuators[1].channel", "already drives"),
        (#"{"format": 1, "name": "x", "pcm": "hw:1", "channels": 2, "actuators": [{"name": "a", "channel": 1, "resonant_frequency_hz": 500, "frequency_max_hz": 300}]}"#, "$.actuators[0].resonant_frequency_hz", "outside"),
        (#"{"format": 1, "name": "x", "pcm": "hw:1", "channels": 2, "period_us": 100, "actuators": [{"name": "a", "channel": 1}]}"#, "$.period_us", "500 ... 100000"),
        (#"{"format": 1, "name": "x", "pcm": "hw:1", "channels": 2, "actuators": [{"name": "a", "channel": 1, "rated_leve": 1}]}"#, "$.actuators[0]", "Hardware/alsa/README.md lists every key"),
        (#"{"format": 2, "name": "x", "pcm": "hw:1", "channels": 2, "actuators": []}"#, "$.format", "format 2"),
        (#"{"format": 1, "name": "X Y", "pcm": "hw:1", "channels": 2, "actuators": [{"name": "a", "channel": 1}]}"#, "$.name", "lowercase letters"),
    ])
    func badValues(text: String, key: String, words: String) throws {
        let failure = try #require(error(text))
        #expect(failure.file == "/etc/haptics/alsa.d/seat.json")
        #expect(failure.key?.hasPrefix(key) == true, "\(failure)")
        #expect(failure.description.contains(words), "\(failure)")
    }
}

@Suite("ALSA: a DualSense on USB is found by its card's USB ids, its coils on channels 3 and 4")
struct DualSenseCardTests {
    /// A fake `/proc/asound` and `/sys` with card 0 a laptop's codec and card 1 a DualSense gadget
    /// whose playback `owner` holds, its HID interface's node `hidraw2`.
    func tree(usbID: String = "054c:0ce6", owner: pid_t = getpid()) throws -> (proc: String, sys: String) {
        let root = TestSupport.makeTemporaryDirectory("asound")
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/proc/card0", withIntermediateDirectories: true)
        try "PCH\n".write(toFile: root + "/proc/card0/id", atomically: true, encoding: .utf8)
        try fm.createDirectory(atPath: root + "/proc/card1/pcm0p/sub0", withIntermediateDirectories: true)
        try "Controller\n".write(toFile: root + "/proc/card1/id", atomically: true, encoding: .utf8)
        try "\(usbID)\n".write(toFile: root + "/proc/card1/usbid", atomically: true, encoding: .utf8)
        try "state: RUNNING\nowner_pid   : \(owner)\n".write(toFile: root + "/proc/card1/pcm0p/sub0/status", atomically: true, encoding: .utf8)
        let interface = root + "/sys/devices/pci0000:00/dummy_hcd.0/usb1/1-1/1-1:1.0"
        try fm.createDirectory(atPath: interface, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/sys/class/sound/card1", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: root + "/sys/class/sound/card1/device", withDestinationPath: interface)
        let hid = root + "/sys/devices/pci0000:00/dummy_hcd.0/usb1/1-1/1-1:1.3/0003:054C:0CE6.0001"
        try fm.createDirectory(atPath: hid, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/sys/class/hidraw/hidraw2", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: root + "/sys/class/hidraw/hidraw2/device", withDestinationPath: hid)
        return (root + "/proc", root + "/sys")
    }

    @Test("the scan reads ids, USB ids and the port; the pad's output has 4 channels at 48 kHz, coils on 3 and 4; its holder is named")
    func scan() throws {
        let (proc, sys) = try tree()
        let cards = SoundCard.scan(procRoot: proc, sysfsRoot: sys)
        #expect(cards.map(\.id) == ["PCH", "Controller"])
        #expect(cards[0].usbID == nil && ALSAOutput.dualSense(card: cards[0]) == nil)
        let pad = try #require(ALSAOutput.dualSense(card: cards[1]))
        #expect(pad.id == "alsa:054c:0ce6:usb-1-1")
        #expect(pad.pcm == "hw:CARD=Controller,DEV=0" && pad.channels == 4 && pad.rate == 48_000)
        #expect(pad.actuators.map(\.name) == ["left", "right"] && pad.actuators.map(\.channel) == [3, 4])
        // The pad's HID device, as the hid and evdev backends name the pad.
        #expect(pad.physicalID?.hasSuffix("/usb1/1-1/1-1:1.3/0003:054C:0CE6.0001") == true, "\(pad.physicalID ?? "nil")")
        #expect(pad.padHidraw == "/dev/hidraw2")
        let owner = try #require(cards[1].playbackOwner(procRoot: proc))
        #expect(owner.hasPrefix("pid \(getpid()) ("), "\(owner)")
    }

    @Test("through the plugin: the pad is listed with its two coils and its sample stream; the Edge too; alsa.dualsense off hides it")
    func listed() throws {
        for (usb, name) in [("054c:0ce6", "DualSense"), ("054c:0df2", "DualSense Edge")] {
            let (proc, sys) = try tree(usbID: usb)
            func system(_ extra: [String: String]) -> HapticSystem {
                HapticSystem(
                    configuration: .init(
                        searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                        settings: ["alsa.proc-root": proc, "alsa.sysfs-root": sys, "alsa.devices": TestSupport.makeTemporaryDirectory("none"), "recording.devices": "none"]
                            .merging(extra) { $1 },
                        logger: TestSupport.quietLogger, daemon: .never))
            }
            let pad = try #require(system([:]).devices().first { $0.backend == "alsa" })
            #expect(pad.id == "alsa:\(usb):usb-1-1")
            #expect(pad.name == "\(name) voice coils (USB)")
            #expect(pad.channels.map(\.name) == ["left", "right"] && pad.channels.allSatisfy { $0.actuator == .voiceCoil })
            #expect(pad.sampleStream == SampleStreamFormat(rate: 48_000, periodFrames: 240, bufferFrames: 720, latency: 0.001))
            #expect(!system(["alsa.dualsense": "off"]).devices().contains { $0.backend == "alsa" })
            let deeper = try #require(system(["alsa.dualsense-periods": "8", "alsa.dualsense-period-us": "10000"]).devices().first { $0.backend == "alsa" })
            #expect(deeper.sampleStream?.periodFrames == 480 && deeper.sampleStream?.bufferFrames == 3_840 && deeper.isAvailable)
            let refusals = [
                ("alsa.dualsense-periods", "1", "periods from 2 to 16 (default 3)"), ("alsa.dualsense-periods", "three", "periods from 2 to 16 (default 3)"),
                ("alsa.dualsense-periods", "", "periods from 2 to 16 (default 3)"),
                ("alsa.dualsense-period-us", "999", "microseconds from 1000 to 100000 (default 5000)"),
            ]
            for (key, bad, expected) in refusals {
                let system = system([key: bad])
                let refused = try #require(system.devices().first { $0.backend == "alsa" })
                #expect(refused.unavailableReason == "setting \(key) is \(bad.debugDescription): expected a whole number of \(expected); fix or unset it")
                #expect(throws: DeviceError.self) { try system.openDevice(refused.id) }
            }
        }
    }

    @Test("the pad's coils and its rumble are one device: the coils serve it, its rumble while a sound server holds the card")
    func oneDevice() throws {
        func listing(owner: pid_t) throws -> DeviceDescription {
            let (proc, sys) = try tree(owner: owner)
            let system = HapticSystem(
                configuration: .init(
                    searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                    settings: ["alsa.proc-root": proc, "alsa.sysfs-root": sys, "alsa.devices": TestSupport.makeTemporaryDirectory("none"), "recording.devices": "none"],
                    logger: TestSupport.quietLogger, daemon: .never))
            return try #require(system.devices().first { $0.backend == "alsa" })
        }
        // The hid backend's listing of the same pad, as `describe` gives it (a uhid pad in the VM
        // rig's suites shows the same physical id from the kernel's side).
        func rumble(_ coils: DeviceDescription) -> DeviceDescription {
            DeviceDescription(
                id: "hid:054c:0ce6:usb:a0b1c2d3e4f5", name: "DualSense", backend: "hid", actuator: .dualRumble,
                channels: [.init(name: "strong", actuator: .dualRumble), .init(name: "weak", actuator: .dualRumble)],
                minimumUpdateInterval: 0.004, wakeLatency: 0.01, physicalID: coils.physicalID, preference: 200)
        }
        // Held by this process (it plays on the coils): the coils serve the pad.
        let free = try listing(owner: getpid())
        #expect(free.isAvailable && free.preference == 300)
        #expect(HapticSystem.merged([rumble(free), free]).map(\.id) == [free.id])
        #expect(HapticSystem.merged([rumble(free), free]).first?.alternatives == ["hid:054c:0ce6:usb:a0b1c2d3e4f5"])
        // Held by another process (pid 1 stands for a sound server): listed unavailable, naming it
        // and the fix, and the rumble serves the pad.
        let held = try listing(owner: 1)
        let reason = try #require(held.unavailableReason)
        #expect(reason.contains("card Controller is in use by pid 1 (") && reason.contains("Direct profile"), "\(reason)")
        let merged = HapticSystem.merged([held, rumble(held)])
        #expect(merged.map(\.id) == ["hid:054c:0ce6:usb:a0b1c2d3e4f5"] && merged[0].alternatives == [held.id])
    }
}
