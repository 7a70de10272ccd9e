import Foundation
import Haptics
import Testing

/// A profile write killed midway leaves the previous profile intact: `haptic-cal profile import`
/// is killed while it writes, at many points, and the installed profile must parse and be either
/// the old one or the new one, every time.
@Suite("Calibration profiles: writes killed midway")
struct CalibrationProfileWriteKillTests {
    static let deviceID = "test:killed-write"

    struct Fixture {
        let config: String
        let installed: String
        let old: CalibrationProfile
        let new: CalibrationProfile
        let newFile: String
        let newSize: Int
    }

    /// An installed old profile, and a new one large enough (a 6000-point frequency map) that
    /// writing it takes many write calls' worth of bytes.
    static func fixture() throws -> Fixture {
        let config = TestSupport.makeTemporaryDirectory("profile-kill")
        let store = ProfileStore(userDirectory: config + "/haptics/profiles", shippedDirectories: [])
        var old = CalibrationProfileFormatTests.calibratedLRA
        old.deviceID = deviceID
        let installed = try store.save(old)
        var new = old
        new.channels[0].deadZone = 0.1234
        new.channels[0].frequencyResponse = (0..<6000).map { .init(frequency: 80 + Double($0) * 0.037, relativeOutput: Double($0 % 1000) / 1000) }
        new.channels[0].usableBand = 100...200
        let newFile = config + "/new.json"
        try ProfileStore.write(new, toPath: newFile)
        return Fixture(config: config, installed: installed, old: old, new: new, newFile: newFile, newSize: new.encodedJSON().utf8.count)
    }

    /// Starts `haptic-cal profile import` of the new profile under `/bin/sh`, so a file-size limit
    /// (in 512-byte blocks) can be set first (nil: none). Spawned with every signal at its default
    /// action and none blocked, whatever the test runner ignores, so SIGXFSZ kills.
    static func startImport(_ fixture: Fixture, sizeLimitBlocks: Int?) throws -> pid_t {
        let limit = sizeLimitBlocks.map { "ulimit -f \($0); " } ?? ""
        let arguments = ["/bin/sh", "-c", limit + "exec \"$0\" profile import \"$1\" >/dev/null 2>&1", TestSupport.buildDirectory + "/haptic-cal", fixture.newFile]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = fixture.config
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/sh", nil, &attributes, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return pid
    }

    /// Waits for `pid`: the signal that killed it, or nil and its exit status.
    static func wait(_ pid: pid_t) -> (signal: Int32?, status: Int32) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let signal = status & 0x7F
        return signal != 0 ? (signal, 0) : (nil, (status >> 8) & 0xFF)
    }

    /// The installed profile parses and is the old or the new one; which one.
    static func installedProfile(_ fixture: Fixture) throws -> String {
        let profile = try ProfileFormat.read(path: fixture.installed)
        if profile == fixture.old { return "old" }
        if profile == fixture.new { return "new" }
        Issue.record("the installed profile is neither the old nor the new one")
        return "other"
    }

    static func leftovers(_ fixture: Fixture) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fixture.config + "/haptics/profiles").filter { $0.hasSuffix(".tmp") }
    }

    @Test("killed by the kernel at every 4 KiB of the write (a file-size limit raises SIGXFSZ inside write), the old profile stays whole")
    func killedAtEveryOffset() throws {
        let fixture = try Self.fixture()
        var interrupted = 0
        for blocks in stride(from: 0, to: fixture.newSize / 512, by: 8) {
            let outcome = Self.wait(try Self.startImport(fixture, sizeLimitBlocks: blocks))
            #expect(outcome.signal == SIGXFSZ, "limit \(blocks * 512) bytes: \(outcome)")
            #expect(try Self.installedProfile(fixture) == "old", "killed after \(blocks * 512) bytes")
            // The half-written temporary file is there, cut where the kernel stopped it.
            for name in try Self.leftovers(fixture) {
                let size = try FileManager.default.attributesOfItem(atPath: fixture.config + "/haptics/profiles/" + name)[.size] as! Int
                #expect(size == blocks * 512)
                interrupted += 1
                try FileManager.default.removeItem(atPath: fixture.config + "/haptics/profiles/" + name)
            }
        }
        #expect(interrupted >= fixture.newSize / 512 / 8, "every run was stopped inside the write")
        // Without a limit the import completes and the new profile is installed.
        #expect(Self.wait(try Self.startImport(fixture, sizeLimitBlocks: nil)) == (nil, 0))
        #expect(try Self.installedProfile(fixture) == "new")
    }

    @Test("SIGKILL at random moments of an import leaves a profile that parses and is the old or the new one, every time")
    func killedAtRandomMoments() throws {
        let fixture = try Self.fixture()
        // How long an import takes here, to spread the kills over it.
        let started = Date()
        #expect(Self.wait(try Self.startImport(fixture, sizeLimitBlocks: nil)) == (nil, 0))
        let duration = Date().timeIntervalSince(started)
        try ProfileStore.write(fixture.old, toPath: fixture.installed)
        var outcomes: [String: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<30 {
            let pid = try Self.startImport(fixture, sizeLimitBlocks: nil)
            usleep(UInt32(Double.random(in: 0.3...1.2, using: &generator) * duration * 1e6))
            kill(pid, SIGKILL)
            _ = Self.wait(pid)
            let outcome = try Self.installedProfile(fixture)
            outcomes[outcome, default: 0] += 1
            if outcome == "new" { try ProfileStore.write(fixture.old, toPath: fixture.installed) }
        }
        #expect(outcomes["other"] == nil, "\(outcomes)")
        print("SIGKILL outcomes over 30 imports (import takes \(String(format: "%.0f", duration * 1000)) ms): \(outcomes)")
    }
}
