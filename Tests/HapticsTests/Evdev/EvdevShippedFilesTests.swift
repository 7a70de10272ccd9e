import EvdevEffects
import Foundation
import Haptics
import Testing

/// The files the evdev backend ships: default profiles for pads whose driver maps magnitudes badly,
/// and the udev rule for vibrators.
@Suite("evdev: shipped profiles and udev rule")
struct EvdevShippedFilesTests {
    /// A USB Xbox pad as the evdev backend lists it behind xpad.
    static func xbox(_ product: String) -> DeviceDescription {
        DeviceDescription(
            id: "evdev:xpad:045e:\(product):usb:3039373130303637", name: "Microsoft X-Box pad", backend: "evdev", actuator: .dualRumble,
            channels: [
                ChannelDescription(name: "strong", actuator: .erm, amplitudeSteps: 256, nominalFrequency: 55),
                ChannelDescription(name: "weak", actuator: .erm, amplitudeSteps: 256, nominalFrequency: 160),
            ], minimumUpdateInterval: 0.01, wakeLatency: 0.001, preference: 100)
    }

    /// What an Xbox One or Series pad receives from xpad (Linux 6.1, XTYPE_XBOXONE): the 16-bit
    /// magnitude / 512, of which the motors take 0…100.
    static func padLevel(_ amplitude: Double) -> Int {
        min(Int((Float(amplitude) * 0xFFFF).rounded()) / 512, 100)
    }

    static let store = ProfileStore(userDirectory: nil, shippedDirectories: [TestSupport.packageRoot + "/Hardware/profiles"])

    @Test(
        "xpad's GIP pads: intensity 1 reaches the motors' 100 exactly (not the saturated 127), half intensity half of it; the Xbox 360 pad keeps its full scale",
        arguments: ["02d1", "02dd", "02e3", "02ea", "0b00", "0b12"])
    func xpadSaturation(_ product: String) throws {
        let device = Self.xbox(product)
        let profile = try #require(Self.store.profile(for: device), "no shipped profile for \(device.id)")
        #expect(profile.source == .shipped)
        let mapper = DriveMapper(device: device, profile: profile)
        for (intensity, level) in [(1.0, 100), (0.5, 50), (0.25, 25)] {
            let strong = mapper.drives(intensity: intensity, sharpness: 0)[0].amplitude
            #expect(abs(Self.padLevel(strong) - level) <= 1, "intensity \(intensity): drive \(strong) → level \(Self.padLevel(strong)), want \(level)")
        }
        // A kick cannot go past the point where the motor stops responding.
        let kicked = mapper.drives(intensity: 1, sharpness: 0, gain: 2)[0].amplitude
        #expect(Self.padLevel(kicked) == 100, "kicked drive \(kicked)")
        let uncalibrated = DriveMapper(device: device)
        #expect(Self.padLevel(uncalibrated.drives(intensity: 0.8, sharpness: 0)[0].amplitude) == 100, "without the profile 0.8 already saturates")
        #expect(Self.store.profile(for: Self.xbox("028e")) == nil, "the Xbox 360 pad takes xpad's full 0–255")
    }

    /// The `DRIVERS=="…"` names of a rule file.
    static func ruleDrivers(_ path: String) throws -> Set<String> {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var drivers = Set<String>()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let range = line.range(of: "DRIVERS==\"") else { continue }
            let rest = line[range.upperBound...]
            drivers.insert(String(rest.prefix { $0 != "\"" }))
        }
        return drivers
    }

    @Test("the vibrator rule names every vibrator driver the backend knows, tags only event nodes, and adds uaccess")
    func vibratorRule() throws {
        let path = TestSupport.packageRoot + "/Hardware/udev/70-haptics-vibrators.rules"
        let drivers = try Self.ruleDrivers(path)
        let pads: Set<String> = ["xpad", "playstation", "sony", "microsoft", "nintendo"]
        let known = Set(DriverTraits.known.keys).subtracting(pads)
        #expect(drivers == known, "rule: \(drivers.sorted()), backend: \(known.sorted())")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#"SUBSYSTEM!="input", GOTO="haptics_vibrators_end""#))
        #expect(text.contains(#"KERNEL!="event*", GOTO="haptics_vibrators_end""#))
        let rules = text.split(separator: "\n").filter { !$0.hasPrefix("#") && ($0.contains("DRIVERS==") || $0.contains("ATTRS{name}") || $0.contains("ID_PATH")) }
        #expect(rules.allSatisfy { $0.hasSuffix(#"TAG+="uaccess""#) }, "\(rules)")
        #expect(!text.contains("MODE=\"0666\""))
    }
}
