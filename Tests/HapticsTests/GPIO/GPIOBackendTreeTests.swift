import Foundation
import GPIOBoards
import Haptics
import Testing

/// `libhaptics-gpio.so` through `dlopen`, on a sysfs directory tree (`gpio.sysfs-root`), with the
/// shipped coin-ERM board (no GPIO lines, so no chip is needed).
@Suite("GPIO backend on a directory tree: listing touches nothing; the envelope is described; bad board files stay visible")
struct GPIOBackendTreeTests {
    /// A tree with pwmchip0 and the shipped coin-ERM board file in a boards directory.
    func rig() throws -> (tree: PWMTree, boards: String) {
        let tree = try PWMTree(channels: 2)
        let boards = TestSupport.makeTemporaryDirectory("gpio-boards")
        try FileManager.default.copyItem(atPath: TestSupport.packageRoot + "/Hardware/boards/rpi-coin-erm.json", toPath: boards + "/rpi-coin-erm.json")
        return (tree, boards)
    }

    func system(_ tree: PWMTree, boards: String) -> HapticSystem {
        HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                settings: ["gpio.boards": boards, "gpio.sysfs-root": tree.root, "gpio.chip-path": tree.root + "/dev", "recording.devices": "none"],
                logger: TestSupport.quietLogger, daemon: .never))
    }

    /// Every file under the tree with its contents.
    func snapshot(_ tree: PWMTree) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: tree.root)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = tree.root + "/" + relative
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try String(contentsOfFile: path, encoding: .utf8)
            }
        }
        return files
    }

    @Test("listing writes nothing (no export, no duty, no enable) and reports the documented wake latency; the first open measures it")
    func listingTouchesNothing() throws {
        let (tree, boards) = try rig()
        try tree.export(0, PWMState(periodNanoseconds: 50_000, dutyNanoseconds: 0, enabled: false))
        let before = try snapshot(tree)
        let system = system(tree, boards: boards)
        for _ in 0..<3 { _ = system.devices() }
        let listed = try #require(system.devices().first { $0.id == "gpio:rpi-coin-erm:erm" })
        #expect(try snapshot(tree) == before, "listing changed the hardware")
        #expect(listed.wakeLatency == 0.0005, "the documented estimate: the wake writes, no driver IC")

        let device = try system.openDevice(listed.id)
        defer { device.close() }
        let measured = try #require(system.devices().first { $0.id == listed.id }).wakeLatency
        #expect(measured > 0 && measured != 0.0005, "the open measured the wake: \(measured)")
    }

    @Test("the description carries the board's drive envelope (dead-zone offset, rated and kick levels, kick window, continuous limit)")
    func envelope() throws {
        let (tree, boards) = try rig()
        let listed = try #require(system(tree, boards: boards).devices().first { $0.id == "gpio:rpi-coin-erm:erm" })
        let envelope = try #require(listed.envelope)
        #expect(
            envelope
                == DriveEnvelope(
                    amplitudeOffset: 0.25, ratedLevel: 0.6, kickLevel: 1, kickDuration: 0.04, maxContinuousDuration: 10, restDuration: 0.05, acceptsLevels: true))
        #expect(abs(envelope.steadyAmplitudeLimit - 0.35 / 0.75) < 1e-6)
        #expect(envelope.steadyLevel(forAmplitude: 1) == 0.6)
        #expect(envelope.level(forAmplitude: 0) == 0)
    }

    @Test("a frame of levels reaches the PWM as it is, under the board's dead zone; a frame of amplitudes is lifted over it")
    func framesOfLevels() throws {
        let (tree, boards) = try rig()
        try tree.export(0)
        let device = try system(tree, boards: boards).openDevice("gpio:rpi-coin-erm:erm")
        defer { device.close() }
        try device.beginActivity()
        /// The duty cycle once the backend has written it (its writes may trail the call), ns.
        func duty(becomes expected: String) throws -> String {
            var value = ""
            for _ in 0..<200 {
                value = try tree.read("pwm0/duty_cycle").trimmingCharacters(in: .whitespacesAndNewlines)
                if value == expected { break }
                usleep(5_000)
            }
            return value
        }
        // 20 kHz: a 50 000 ns period; an ERM on a transistor takes the level as its duty cycle.
        try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.1)], levels: true))
        #expect(try duty(becomes: "5000") == "5000", "level 0.1, under the 0.25 dead zone")
        try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.1)]))
        #expect(try duty(becomes: "16250") == "16250", "amplitude 0.1 → level 0.25 + 0.1 × 0.75")
        // The rated limit holds for levels too, once the kick window is over.
        try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.9)], levels: true))
        #expect(try duty(becomes: "30000") == "30000", "level 0.9 held at the rated 0.6")
        device.endActivity()
        #expect(try duty(becomes: "0") == "0", "the activity's end stops it")
    }

    @Test("a bad board file is listed as unavailable with its error; the good board beside it still lists and opens")
    func badBoardFile() throws {
        let (tree, boards) = try rig()
        try tree.export(0)
        try #"{"format": 1, "name": "broken", "actuators": [{"name": "x", "topology": "erm-transistor", "pwm": {"channel": 0}, "limits": {"rated_level": 7}}]}"#
            .write(toFile: boards + "/broken.json", atomically: true, encoding: .utf8)
        let system = system(tree, boards: boards)
        let devices = system.devices()
        let broken = try #require(devices.first { $0.id == "gpio:broken" })
        #expect(!broken.isAvailable)
        #expect(broken.unavailableReason?.hasPrefix(boards + "/broken.json: $.actuators[0]") == true, "\(String(describing: broken.unavailableReason))")
        #expect(devices.contains { $0.id == "gpio:rpi-coin-erm:erm" && $0.isAvailable })
        let error = #expect(throws: DeviceError.self) { try system.openDevice("gpio:broken") }
        #expect("\(String(describing: error))".contains("broken.json"))
        let good = try system.openDevice("gpio:rpi-coin-erm:erm")
        good.close()
    }
}
