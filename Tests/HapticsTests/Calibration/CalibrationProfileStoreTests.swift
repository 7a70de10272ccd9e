import Foundation
import Haptics
import HapticsTools
import Testing

/// Where profiles live, which one a device gets, and that the engine uses it.
@Suite("Calibration profiles: store and lookup")
struct CalibrationProfileStoreTests {
    static func profile(for id: String?, deadZone: Double) -> CalibrationProfile {
        var profile = CalibrationProfileFormatTests.calibratedLRA
        profile.deviceID = id
        profile.channels[0].deadZone = deadZone
        return profile
    }

    @Test("file names: ':' becomes '_', other unsafe bytes %XX; one-to-one")
    func fileNames() {
        #expect(ProfileStore.fileName(for: "recording:lra") == "recording_lra.json")
        #expect(ProfileStore.fileName(for: "gpio:drv2603-lra:lra") == "gpio_drv2603-lra_lra.json")
        #expect(ProfileStore.fileName(for: "hid:054c:0ce6:usb/1-2") == "hid_054c_0ce6_usb%2F1-2.json")
        #expect(ProfileStore.fileName(for: "a_b:c") == "a%5Fb_c.json")
        #expect(ProfileStore.fileName(for: ".hidden") == "%2Ehidden.json")
        #expect(ProfileStore.fileName(for: "ü") == "%C3%BC.json")
        #expect(ProfileStore.candidateIDs(for: "hid:054c:0ce6:SERIAL") == ["hid:054c:0ce6:SERIAL", "hid:054c:0ce6", "hid:054c"])
        #expect(ProfileStore.candidateIDs(for: "recording:lra") == ["recording:lra"])
    }

    @Test("the user directory follows XDG: $XDG_CONFIG_HOME if absolute, else ~/.config")
    func userDirectory() {
        #expect(ProfileStore.userDirectory(xdgConfigHome: "/x/config", home: "/home/u") == "/x/config/haptics/profiles")
        #expect(ProfileStore.userDirectory(xdgConfigHome: "relative", home: "/home/u") == "/home/u/.config/haptics/profiles")
        #expect(ProfileStore.userDirectory(xdgConfigHome: nil, home: "/home/u") == "/home/u/.config/haptics/profiles")
        #expect(ProfileStore.userDirectory(xdgConfigHome: nil, home: nil) == nil)
    }

    @Test("shipped directories: $HAPTICS_PROFILE_PATH, then ../share/haptics/profiles, then a build directory's source tree")
    func shippedDirectories() throws {
        let root = TestSupport.makeTemporaryDirectory("profile-tree")
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/pkg/.build/x86_64-unknown-linux-gnu/debug", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/pkg/Hardware/profiles", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/prefix/bin", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/prefix/share/haptics/profiles", withIntermediateDirectories: true)
        // A build directory without Package.swift above it is not a source tree.
        #expect(ProfileStore.shippedDirectories(profilePath: nil, executablePath: root + "/pkg/.build/x86_64-unknown-linux-gnu/debug/haptic-cal") == [])
        _ = fm.createFile(atPath: root + "/pkg/Package.swift", contents: Data())
        #expect(
            ProfileStore.shippedDirectories(profilePath: "/a:/b", executablePath: root + "/pkg/.build/x86_64-unknown-linux-gnu/debug/haptic-cal")
                == ["/a", "/b", root + "/pkg/Hardware/profiles"])
        #expect(ProfileStore.shippedDirectories(profilePath: nil, executablePath: root + "/prefix/bin/haptic-cal") == [root + "/prefix/share/haptics/profiles"])
        // The test runner itself runs from this package's build directory.
        #expect(ProfileStore.standard.shippedDirectories.contains(TestSupport.packageRoot + "/Hardware/profiles"))
    }

    @Test("lookup: the user's profile over a shipped one, an exact id over a model-wide prefix; broken files are skipped with the reason")
    func lookupOrder() throws {
        let user = TestSupport.makeTemporaryDirectory("profiles-user")
        let shipped = TestSupport.makeTemporaryDirectory("profiles-shipped")
        let store = ProfileStore(userDirectory: user, shippedDirectories: [shipped])
        var device = CalibrationProfileFormatTests.lra
        #expect(store.lookup(for: device).entry == nil)

        try ProfileStore.write(Self.profile(for: "recording:lra", deadZone: 0.3), toPath: shipped + "/recording_lra.json")
        #expect(store.lookup(for: device).entry?.origin == .shipped)
        #expect(store.profile(for: device)?.channels[0].deadZone == 0.3)
        try store.save(Self.profile(for: "recording:lra", deadZone: 0.1))
        #expect(store.lookup(for: device).entry?.origin == .user)
        #expect(store.profile(for: device)?.channels[0].deadZone == 0.1)

        // A broken user file: skipped, reported, and the shipped one is used.
        try "{\"format_version\": 1, \"source\": \"simulated\", \"channels\": [{\"name\": \"main\", \"dead_zone\": 7}]}"
            .write(toFile: user + "/recording_lra.json", atomically: true, encoding: .utf8)
        let (entry, problems) = store.lookup(for: device)
        #expect(entry?.origin == .shipped)
        #expect(problems.map(\.description) == ["\(user)/recording_lra.json: $.channels[0].dead_zone: 7 is outside the allowed range 0...0.9"])

        // Model-wide defaults by id prefix; the unit's own profile wins.
        device.id = "hid:054c:0ce6:SERIAL1"
        try ProfileStore.write(Self.profile(for: "hid:054c:0ce6", deadZone: 0.2), toPath: shipped + "/hid_054c_0ce6.json")
        #expect(store.profile(for: device)?.channels[0].deadZone == 0.2)
        try store.save(Self.profile(for: "hid:054c:0ce6:SERIAL1", deadZone: 0.05))
        #expect(store.profile(for: device)?.channels[0].deadZone == 0.05)
        // A profile for another device, filed under this device's name, is refused.
        try ProfileStore.write(Self.profile(for: "recording:lra", deadZone: 0.2), toPath: shipped + "/recording_erm.json")
        device.id = "recording:erm"
        #expect(store.profile(for: device) == nil)
        #expect(store.lookup(for: device).problems.map(\.problem) == ["the profile is for 'recording:lra', but its file name is for 'recording:erm'"])
    }

    @Test("a profile whose format_version is beyond any Int is skipped with its error; an engine for the device still builds and plays")
    func hugeFormatVersion() throws {
        // Each of these files once ended every process that built an engine for recording:lra.
        let user = TestSupport.makeTemporaryDirectory("profiles-huge-user")
        let shipped = TestSupport.makeTemporaryDirectory("profiles-huge-shipped")
        let fixtures = TestSupport.packageRoot + "/Tests/Fixtures/fuzz/profile/"
        try FileManager.default.copyItem(atPath: fixtures + "format-version-1e300.json", toPath: user + "/recording_lra.json")
        try FileManager.default.copyItem(atPath: fixtures + "format-version-2e63.json", toPath: shipped + "/recording_lra.json")
        let store = ProfileStore(userDirectory: user, shippedDirectories: [shipped])
        let (entry, problems) = store.lookup(for: CalibrationProfileFormatTests.lra)
        #expect(entry == nil)
        #expect(problems.map(\.description) == [
            "\(user)/recording_lra.json: $.format_version: format version 1e+300 is newer than this build reads (5); update swift-haptics",
            "\(shipped)/recording_lra.json: $.format_version: format version 9.223372036854776e+18 is newer than this build reads (5); update swift-haptics",
        ])

        let clock = ManualClock()
        let output = TestSupport.makeTemporaryDirectory("profiles-huge") + "/rec.jsonl"
        let system = TestSupport.recordingSystem(devices: "lra", output: output, clock: clock)
        let device = try system.openDevice("recording:lra")
        let engine = try HapticEngine(devices: [device], clock: clock, profileStore: store, policy: HapticPolicy())
        try engine.makePlayer(with: .transient(intensity: 1, sharpness: 1)).start(atTime: 0)
        clock.advance(bySeconds: 0.1)
        engine.stop()
        device.close()
        let frames = try Recording(contentsOf: output).frames(for: "recording:lra")
        #expect(frames.map { $0.frame.channels[0].amplitude } == [1, 0], "the uncalibrated default's full-scale tap")
    }

    @Test("save creates the directory and writes atomically, leaving no temporary file")
    func save() throws {
        let home = TestSupport.makeTemporaryDirectory("profiles-home")
        let store = ProfileStore(userDirectory: home + "/deep/er/profiles", shippedDirectories: [])
        let path = try store.save(Self.profile(for: "recording:lra", deadZone: 0.1))
        #expect(path == home + "/deep/er/profiles/recording_lra.json")
        #expect(try ProfileFormat.read(path: path) == Self.profile(for: "recording:lra", deadZone: 0.1))
        #expect(try FileManager.default.contentsOfDirectory(atPath: home + "/deep/er/profiles") == ["recording_lra.json"])
        let anonymous = try #require(throws: ProfileError.self) { try store.save(Self.profile(for: nil, deadZone: 0.1)) }
        #expect(anonymous.location == "$.device_id")
    }

    @Test("the engine renders through the device's profile when one exists (haptic-cal play, isolated config)")
    func engineUsesStoredProfile() throws {
        let config = TestSupport.makeTemporaryDirectory("profiles-engine")
        func play() throws -> [DriveFrame] {
            let recording = config + "/recording.jsonl"
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CONFIG_HOME"] = config
            environment["HAPTICS_PROFILE_PATH"] = nil
            let (status, output) = try TestSupport.run(
                TestSupport.buildDirectory + "/haptic-cal",
                ["play", "recording:lra", "--intensity", "1", "--sharpness", "0.5", "--duration", "0.05", "--record", recording],
                environment: environment)
            #expect(status == 0, "\(output)")
            return try Recording(contentsOf: recording).frames(for: "recording:lra").map(\.frame)
        }
        // Uncalibrated: full drive at the middle of the default band (131.25…262.5 Hz).
        let before = try #require(try play().first)
        #expect(before.channels[0].amplitude == 1)
        #expect(abs(before.channels[0].frequency - (131.25 * 262.5).squareRoot()) < 0.01)

        var profile = CalibrationProfileFormatTests.calibratedLRA
        profile.channels[0] = ChannelCalibration(name: "main", deadZone: 0.2, fullScaleOutput: 4, usableBand: 150...200)
        try ProfileStore(userDirectory: config + "/haptics/profiles", shippedDirectories: []).save(profile)
        let after = try #require(try play().first)
        // Intensity 1 asks 1 g of a 4 g channel above a 0.2 dead zone: 0.2 + 0.8 × 0.25.
        #expect(abs(after.channels[0].amplitude - 0.4) < 0.003, "\(after)")
        #expect(abs(after.channels[0].frequency - (150.0 * 200).squareRoot()) < 0.01)
    }
}
