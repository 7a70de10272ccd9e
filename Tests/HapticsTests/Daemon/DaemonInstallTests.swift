import Foundation
import Haptics
import HapticsBus
import Testing
import VMRig

#if canImport(Glibc)
import Glibc
#endif

/// What Scripts/install lays out works as installed: the units and activation files name the
/// installed hapticsd, which finds its plugins and theme beside it; `--system` with the shipped
/// bus policy serves every user and lets only root own the name.
@Suite("hapticsd: installed, and on the system bus")
struct DaemonInstallTests {
    @Test("Scripts/install --destdir: executables, plugins, theme, units and D-Bus files in place, @bindir@ replaced; the installed hapticsd serves")
    func install() throws {
        let stage = TestSupport.makeTemporaryDirectory("install")
        defer { try? FileManager.default.removeItem(atPath: stage) }
        chmod(stage, 0o755)
        let (status, output) = try TestSupport.run(
            TestSupport.packageRoot + "/Scripts/install", ["--prefix", "/usr", "--destdir", stage, "--build-dir", TestSupport.buildDirectory])
        #expect(status == 0, "\(output)")
        let root = stage + "/usr"
        for file in [
            "bin/hapticsd", "bin/haptic-cal", "lib/haptics/libhapticsd-client.so", "lib/haptics/libhaptics-recording.so", "share/hapticsd/themes/default.json",
            "lib/systemd/user/hapticsd.service", "lib/systemd/system/hapticsd.service", "share/dbus-1/services/org.swifthaptics.Haptics1.service",
            "share/dbus-1/system-services/org.swifthaptics.Haptics1.service", "share/dbus-1/system.d/org.swifthaptics.Haptics1.conf",
            "share/dbus-1/interfaces/org.swifthaptics.Haptics1.xml", "share/hapticsd/interfaces/org.sigxcpu.Feedback.xml", "share/polkit-1/actions/org.swifthaptics.Haptics1.policy",
        ] {
            #expect(FileManager.default.fileExists(atPath: root + "/" + file), "\(file) was not installed")
        }
        // feedbackd's package owns its interface file: ours lives under hapticsd's own directory.
        #expect(!FileManager.default.fileExists(atPath: root + "/share/dbus-1/interfaces/org.sigxcpu.Feedback.xml"))
        let unit = try String(contentsOfFile: root + "/lib/systemd/user/hapticsd.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/hapticsd\n") && unit.contains("Type=notify") && unit.contains("BusName=org.swifthaptics.Haptics1"))
        let systemUnit = try String(contentsOfFile: root + "/lib/systemd/system/hapticsd.service", encoding: .utf8)
        #expect(systemUnit.contains("ExecStart=/usr/bin/hapticsd --system"))
        let activation = try String(contentsOfFile: root + "/share/dbus-1/services/org.swifthaptics.Haptics1.service", encoding: .utf8)
        #expect(activation.contains("Exec=/usr/bin/hapticsd\n") && activation.contains("SystemdService=hapticsd.service"))
        #expect(!unit.contains("@bindir@") && !activation.contains("@bindir@"))

        // The installed daemon, without --theme-dir or --plugin-path: its theme and plugins are beside it.
        let rig = try DaemonRig(startDaemon: false)
        let daemon = try ChildProcess(
            [root + "/bin/hapticsd", "--address", rig.address, "--set", "recording.devices=lra", "--set", "recording.output=\(rig.recordingPath)", "--no-realtime"],
            environment: rig.clientEnvironment, outputPath: rig.directory + "/installed.log")
        let client = try TestBusClient(address: rig.address)
        let serving = ChildProcess.waitUntil(timeout: 60) { (try? client.bus.owner(of: "org.swifthaptics.Haptics1")) != nil }
        #expect(serving, "\(daemon.output)")
        #expect(daemon.output.contains(root + "/share/hapticsd/themes/default.json"), "\(daemon.output)")
        let reply = try client.call("PlayEffect", [.string("org.example.Installed"), .string("recording:lra"), .string("selection"), .double(1)])
        #expect(reply.last == .string("played"))
        daemon.send(SIGTERM)
        #expect(try daemon.wait(timeout: 30) == .exited(0))
    }

    @Test("hapticsd --system with the shipped bus policy: root owns the name, any user calls it, a user cannot own it", .enabled(if: getuid() == 0, "needs root to switch users"))
    func systemBus() throws {
        let directory = TestSupport.makeTemporaryDirectory("system-bus")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o755)
        // Installed under the temporary directory, so another user can run it wherever the checkout is.
        let installed = try TestSupport.run(
            TestSupport.packageRoot + "/Scripts/install", ["--prefix", "/usr", "--destdir", directory, "--build-dir", TestSupport.buildDirectory])
        try #require(installed.status == 0, "\(installed.output)")
        let hapticsd = directory + "/usr/bin/hapticsd"
        let socket = directory + "/system_bus_socket"
        // The shape of Debian's /usr/share/dbus-1/system.conf: deny by default, then the shipped policy.
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
              </policy>
              <include>\(TestSupport.packageRoot)/dist/dbus-1/system.d/org.swifthaptics.Haptics1.conf</include>
            </busconfig>
            """
        try configuration.write(toFile: directory + "/system.conf", atomically: false, encoding: .utf8)
        let bus = try ChildProcess(["/usr/bin/dbus-daemon", "--nofork", "--nopidfile", "--config-file=\(directory)/system.conf"], outputPath: directory + "/dbus.log")
        defer {
            bus.send(SIGTERM)
            _ = try? bus.wait(timeout: 5)
        }
        #expect(ChildProcess.waitUntil(timeout: 20) { access(socket, F_OK) == 0 }, "\(bus.output)")
        let environment = [
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(socket)", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory)/no-session-bus",
            "XDG_CONFIG_HOME": directory, "HAPTICS_DAEMON": "auto",
        ]
        let daemon = try ChildProcess(
            [hapticsd, "--system", "--set", "recording.devices=lra", "--no-realtime"], environment: environment,
            outputPath: directory + "/hapticsd.log")
        defer {
            daemon.send(SIGTERM)
            _ = try? daemon.wait(timeout: 30)
        }
        let client = try TestBusClient(address: "unix:path=\(socket)")
        #expect(ChildProcess.waitUntil(timeout: 60) { (try? client.bus.owner(of: "org.swifthaptics.Haptics1")) != nil }, "\(daemon.output)")
        #expect(ChildProcess.waitUntil(timeout: 10) { (try? client.bus.owner(of: "org.sigxcpu.Feedback")) != nil })

        // An unprivileged user: calls are allowed (busctl on the system bus), owning the name is not.
        let call = try UnprivilegedProcess.run(
            "/usr/bin/env", ["DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(socket)", "/usr/bin/busctl", "--system", "call", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "PlayEffect", "sssd", "org.example.Nobody", "", "selection", "1"])
        #expect(call.status == 0 && call.output.contains("played"), "\(call.output)")
        let squat = try UnprivilegedProcess.run(
            "/usr/bin/env", ["DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(socket)", "XDG_CONFIG_HOME=/tmp", hapticsd, "--system", "--set", "recording.devices=none", "--no-realtime"])
        #expect(squat.status == 1 && squat.output.contains("the bus policy does not allow this process to own org.swifthaptics.Haptics1"), "\(squat.output)")

        // The Swift library on the system bus (HAPTICS_DAEMON_BUS=system), as a user.
        let example = try UnprivilegedProcess.run(
            "/usr/bin/env", ["DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(socket)", "HAPTICS_DAEMON_BUS=system", "HAPTICS_DAEMON=auto", directory + "/usr/bin/haptic-cal", "list"])
        #expect(example.status == 0 && example.output.contains("Mode: through hapticsd") && example.output.contains("on the system bus"), "\(example.output)")
    }
}
