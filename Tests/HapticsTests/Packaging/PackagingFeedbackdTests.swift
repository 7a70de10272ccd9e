import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The package beside Debian's feedbackd, as on every Linux phone: `dpkg -i` of the `.deb` on this
/// machine (root, with `feedbackd` installed by `Scripts/install-deps`) overwrites none of
/// feedbackd's files; on one bus, feedbackd keeps `org.sigxcpu.Feedback` (hapticsd's
/// `--feedbackd auto` sees feedbackd's activation file and leaves the name to it) while hapticsd
/// serves its own API; removing the package leaves every feedbackd file as its package shipped it
/// (`dpkg --verify`). Runs only as root and when swift-haptics is not installed already (a
/// developer's own installation is never touched).
@Suite("Packaging: the .deb installs, runs and goes beside Debian's feedbackd", .serialized)
struct PackagingFeedbackdTests {
    static let canInstall: Bool = {
        guard getuid() == 0, FileManager.default.fileExists(atPath: "/usr/libexec/feedbackd") else { return false }
        let status = (try? TestSupport.run("/usr/bin/dpkg-query", ["-W", "-f=${Status}", "swift-haptics"]))?.output ?? ""
        return !status.contains("install ok installed")
    }()

    @Test("dpkg -i beside feedbackd, both running on one bus with feedbackd keeping its name, dpkg -r leaves feedbackd intact", .enabled(if: canInstall))
    func besideFeedbackd() throws {
        let verifyBefore = try TestSupport.run("/usr/bin/dpkg", ["--verify", "feedbackd"])
        try #require(verifyBefore.status == 0 && verifyBefore.output.isEmpty, "feedbackd's files differ before the test: \(verifyBefore.output)")
        let package = PackagingTests.package
        try #require(package.status == 0 && package.path.hasSuffix(".deb"), "\(package.output)")

        let installed = try TestSupport.run("/usr/bin/dpkg", ["--install", package.path])
        defer { _ = try? TestSupport.run("/usr/bin/dpkg", ["--purge", "swift-haptics"]) }
        try #require(installed.status == 0, "dpkg --install: \(installed.output)")
        #expect(!installed.output.contains("trying to overwrite"), "\(installed.output)")
        #expect(FileManager.default.fileExists(atPath: "/usr/share/hapticsd/interfaces/org.sigxcpu.Feedback.xml"))

        try Self.runBoth()

        let removed = try TestSupport.run("/usr/bin/dpkg", ["--purge", "swift-haptics"])
        #expect(removed.status == 0, "dpkg --purge: \(removed.output)")
        let verifyAfter = try TestSupport.run("/usr/bin/dpkg", ["--verify", "feedbackd"])
        #expect(verifyAfter.status == 0 && verifyAfter.output.isEmpty, "feedbackd's files changed: \(verifyAfter.output)")
        #expect(FileManager.default.fileExists(atPath: "/usr/share/dbus-1/interfaces/org.sigxcpu.Feedback.xml"), "feedbackd's interface file is gone")
        #expect(!FileManager.default.fileExists(atPath: "/usr/bin/hapticsd"))
    }

    /// A private session bus with the standard service directories (so feedbackd's activation file
    /// is seen), the installed hapticsd on it, and a client of each.
    static func runBoth() throws {
        let directory = TestSupport.makeTemporaryDirectory("beside-feedbackd")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let address = "unix:path=\(directory)/bus"
        let environment = [
            "DBUS_SESSION_BUS_ADDRESS": address, "XDG_CONFIG_HOME": directory, "XDG_DATA_DIRS": "/usr/local/share:/usr/share", "GSETTINGS_BACKEND": "memory",
            "HAPTICS_DAEMON": "off", "PATH": "/usr/bin:/bin",
        ]
        let bus = try DaemonRig.startBus(in: directory, standardServiceDirectories: true)
        defer {
            bus.send(SIGTERM)
            _ = try? bus.wait(timeout: 10)
        }
        let hapticsd = try ChildProcess(
            ["/usr/bin/hapticsd", "--set", "recording.devices=lra", "--set", "recording.output=\(directory)/recording.jsonl", "--log-level", "debug"],
            environment: environment, outputPath: directory + "/hapticsd.log")
        defer {
            hapticsd.send(SIGTERM)
            _ = try? hapticsd.wait(timeout: 20)
        }
        let busctl = { (arguments: [String]) throws -> (status: Int32, output: String) in
            try TestSupport.run("/usr/bin/busctl", ["--user", "--timeout=20"] + arguments, environment: environment)
        }
        let up = ChildProcess.waitUntil(timeout: 30) {
            ((try? busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s", "org.swifthaptics.Haptics1"]))?.output ?? "")
                .contains("true")
        }
        try #require(up, "hapticsd did not take its name: \(hapticsd.output)")
        #expect(hapticsd.output.contains("not serving feedbackd's interface: the bus starts another service"), "\(hapticsd.output)")

        // feedbackd's own client: activates feedbackd, which plays (or ends) the event.
        let fbcli = try TestSupport.run("/usr/bin/fbcli", ["-E", "button-pressed"], environment: environment)
        #expect(fbcli.status == 0, "fbcli: \(fbcli.output)")
        let owner = try busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", "org.sigxcpu.Feedback"])
        let pid = owner.output.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? "?"
        #expect(executable == "/usr/libexec/feedbackd", "org.sigxcpu.Feedback is owned by \(executable) (pid \(pid)): \(owner.output)")
        if let number = Int32(pid) { kill(number, SIGTERM) }

        let devices = try busctl(["call", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "ListDevices"])
        #expect(devices.status == 0 && devices.output.contains("recording:lra"), "\(devices.output)")
    }
}
