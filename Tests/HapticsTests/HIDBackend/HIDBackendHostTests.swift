import Foundation
import HIDReports
import Haptics
import Testing

/// Host side: the HID plugin loads through dlopen like any backend and lists what hidraw nodes
/// exist (none on a machine without uhid), and the udev rule covers every controller the backend
/// drives, on every bus. The guest-side suites (`GuestKernelTests.HIDBackend*`) test the rest on
/// real kernel devices.
@Suite struct HIDBackendHostTests {
    static let rulesPath = TestSupport.packageRoot + "/Hardware/udev/70-haptics-gamepads.rules"

    @Test("libhaptics-hid.so loads through dlopen and enumerates without failing")
    func pluginLoads() throws {
        let system = HapticSystem(configuration: .init(searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), daemon: .never))
        let backend = try #require(system.backends.first { $0.name == "hid" }, "plugins: \(system.plugins)")
        #expect(backend.path.hasSuffix("/libhaptics-hid.so"))
        let devices = try backend.devices()
        for device in devices {
            #expect(device.id.hasPrefix("hid:"))
            #expect(device.backend == "hid")
        }
        #expect(system.deviceListing().failures.allSatisfy { !"\($0)".contains("backend 'hid'") })
    }

    /// The `KERNELS` glob patterns of the rule file (`*:054C:05C4.*`).
    static func rulePatterns() throws -> [String] {
        let text = try String(contentsOfFile: rulesPath, encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("KERNELS==") }.map {
            String($0.split(separator: "\"")[1])
        }
    }

    /// The `KERNELS` patterns of the rule file: (vendor, product) pairs, upper-case hex as the kernel
    /// names HID devices.
    static func rulePairs() throws -> [(vendor: UInt16, product: UInt16)] {
        let text = try String(contentsOfFile: rulesPath, encoding: .utf8)
        var pairs: [(UInt16, UInt16)] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && line.contains("KERNELS==") {
            #expect(line.contains("TAG+=\"uaccess\""), "\(line)")
            #expect(!line.contains("0666"), "\(line) makes the node world-writable")
            let pattern = line.split(separator: "\"")[1]  // *:054C:05C4.*
            #expect(pattern.hasPrefix("*:") && pattern.hasSuffix(".*"), "\(pattern) does not match every bus")
            let fields = pattern.dropFirst(2).dropLast(2).split(separator: ":")
            let vendor = try #require(UInt16(fields[0], radix: 16)), product = try #require(UInt16(fields[1], radix: 16))
            #expect(fields[0] == fields[0].uppercased() && fields[1] == fields[1].uppercased(), "the kernel names HID devices in upper-case hex: \(pattern)")
            pairs.append((vendor, product))
        }
        return pairs
    }

    @Test("the udev rule covers every controller in ControllerTable, on USB and Bluetooth")
    func ruleCoversEveryController() throws {
        let pairs = try Self.rulePairs()
        let inRule = Set(pairs.map { UInt32($0.vendor) << 16 | UInt32($0.product) })
        #expect(inRule.count == pairs.count, "a controller is listed twice")
        let models = ControllerTable.families.flatMap { $0.models }
        let supported = Set(models.map { UInt32($0.vendorID) << 16 | UInt32($0.productID) })
        #expect(inRule == supported, "missing: \(supported.subtracting(inRule).map { String($0, radix: 16) }), extra: \(inRule.subtracting(supported).map { String($0, radix: 16) })")
        // Sorted before 73-seat-late.rules, which applies uaccess.
        let name = (Self.rulesPath as NSString).lastPathComponent
        #expect(Int(name.prefix(2))! < 73)
        let text = try String(contentsOfFile: Self.rulesPath, encoding: .utf8)
        #expect(text.contains("SUBSYSTEM!=\"hidraw\", GOTO=\"haptics_gamepads_end\""))
        #expect(text.contains("LABEL=\"haptics_gamepads_end\""))
    }

    @Test("the udev README gives the install steps the backend's error message names")
    func readmeMatchesTheMessage() throws {
        let readme = try String(contentsOfFile: TestSupport.packageRoot + "/Hardware/udev/README.md", encoding: .utf8)
        for step in [
            "sudo install -m 0644 Hardware/udev/70-haptics-gamepads.rules /etc/udev/rules.d/", "sudo udevadm control --reload-rules",
            "sudo udevadm trigger --subsystem-match=hidraw",
        ] {
            #expect(readme.contains(step), "README lacks: \(step)")
        }
    }
}
