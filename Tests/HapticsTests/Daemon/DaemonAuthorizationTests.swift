import Foundation
import Haptics
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Authorization as on the system bus (`hapticsd --authorization polkit`): a bus every user may
/// connect to, a polkit authority on it (a small dbus-python service that answers
/// `CheckAuthorization` as told and writes down every question), and `busctl` run as a second user
/// (nobody, 65534) through `setpriv`. Root (the tests' user, hapticsd's own) is never asked about.
@Suite("hapticsd: settings changed only by whom they belong to (polkit)", .enabled(if: getuid() == 0))
struct DaemonAuthorizationTests {
    static let nobody: UInt32 = 65534

    /// A polkit authority answering yes for the users in `allowed`.
    static let authority = """
        import sys, dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        allowed = set(int(u) for u in sys.argv[3].split(',') if u)
        log = open(sys.argv[2], 'a', buffering=1)
        class Authority(dbus.service.Object):
            @dbus.service.method('org.freedesktop.PolicyKit1.Authority', in_signature='(sa{sv})sa{ss}us', out_signature='(bba{ss})')
            def CheckAuthorization(self, subject, action, details, flags, cancellation):
                uid = int(bus.get_unix_user(str(subject[1]['name'])))
                log.write('%s %d %s %d %s\\n' % (subject[0], uid, action, int(flags), uid in allowed))
                return (uid in allowed, False, {})
        name = dbus.service.BusName('org.freedesktop.PolicyKit1', bus)
        Authority(bus, '/org/freedesktop/PolicyKit1/Authority')
        print('ready', flush=True)
        GLib.MainLoop().run()
        """

    final class Setting {
        let rig: DaemonRig
        let log: String
        private var authority: ChildProcess?

        init() throws {
            rig = try DaemonRig(arguments: ["--authorization", "polkit"], allUsers: true)
            log = rig.directory + "/polkit.log"
            try DaemonAuthorizationTests.authority.write(toFile: rig.directory + "/authority.py", atomically: true, encoding: .utf8)
        }

        deinit { stopAuthority() }

        /// Starts the authority, allowing `allowed`.
        func startAuthority(allowing allowed: [UInt32]) throws {
            stopAuthority()
            let child = try ChildProcess(
                ["/usr/bin/python3", rig.directory + "/authority.py", rig.address, log, allowed.map(String.init).joined(separator: ",")],
                environment: ["PYTHONDONTWRITEBYTECODE": "1"], outputPath: rig.directory + "/authority-\(allowed.count).out")
            authority = child
            #expect(ChildProcess.waitUntil(timeout: 20) { child.output.contains("ready") }, "the polkit authority did not start: \(child.output)")
        }

        func stopAuthority() {
            guard let authority else { return }
            authority.send(SIGTERM)
            _ = try? authority.wait(timeout: 10)
            self.authority = nil
        }

        /// `busctl` on the rig's bus as user `uid`.
        func busctl(as uid: UInt32, _ arguments: [String]) throws -> (status: Int32, output: String) {
            try run(as: uid, ["/usr/bin/busctl", "--address=\(rig.address)"] + arguments)
        }

        /// `gdbus call` on the rig's bus as user `uid` (it prints an error's name and message; busctl
        /// prints only the errno an AccessDenied maps to).
        func gdbus(as uid: UInt32, _ destination: String, _ path: String, _ method: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
            try run(as: uid, ["/usr/bin/gdbus", "call", "--address", rig.address, "--dest", destination, "--object-path", path, "--method", method] + arguments)
        }

        private func run(as uid: UInt32, _ command: [String]) throws -> (status: Int32, output: String) {
            if uid == getuid() { return try TestSupport.run(command[0], Array(command.dropFirst()), environment: ["PATH": "/usr/bin:/bin"]) }
            return try TestSupport.run(
                "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--"] + command, environment: ["PATH": "/usr/bin:/bin"])
        }

        func setEnabled(as uid: UInt32, _ value: Bool) throws -> (status: Int32, output: String) {
            try gdbus(
                as: uid, "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.freedesktop.DBus.Properties.Set",
                ["org.swifthaptics.Haptics1", "Enabled", "<\(value)>"])
        }

        func setAppPolicy(as uid: UInt32, _ app: String) throws -> (status: Int32, output: String) {
            try gdbus(as: uid, "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1.SetAppPolicy", [app, "{'intensity-scale': <0.5>}"])
        }

        var enabled: String {
            (try? busctl(as: getuid(), ["get-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "Enabled"]).output) ?? ""
        }

        var questions: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    @Test("another user may not switch haptics off for the machine or change the feedback profile unless polkit says so; root is never asked")
    func globalSettings() throws {
        let setting = try Setting()
        try setting.startAuthority(allowing: [])
        #expect(try setting.setEnabled(as: getuid(), false).status == 0)
        #expect(setting.questions.isEmpty, "root was asked about: \(setting.questions)")

        let refused = try setting.setEnabled(as: Self.nobody, true)
        #expect(refused.status != 0 && refused.output.contains("may not do org.swifthaptics.Haptics1.set-settings"), "\(refused.output)")
        #expect(setting.enabled.contains("false"), "nobody switched haptics back on: \(setting.enabled)")
        #expect(setting.questions == ["system-bus-name \(Self.nobody) org.swifthaptics.Haptics1.set-settings 0 False"], "\(setting.questions)")
        #expect(refused.output.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(refused.output)")
        let profile = try setting.busctl(as: Self.nobody, ["set-property", "org.sigxcpu.Feedback", "/org/sigxcpu/Feedback", "org.sigxcpu.Feedback", "Profile", "s", "silent"])
        #expect(profile.status != 0 && profile.output.contains("Access denied"), "\(profile.output)")

        // Playing needs nothing: every user may ask for feedback.
        let play = try setting.busctl(as: Self.nobody, ["call", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "PlayEffect", "sssd", "org.example.Nobody", "", "impact.light", "1"])
        #expect(play.status == 0, "\(play.output)")

        try setting.startAuthority(allowing: [Self.nobody])
        #expect(try setting.setEnabled(as: Self.nobody, true).status == 0)
        #expect(setting.enabled.contains("true"))

        setting.stopAuthority()
        let unreachable = try setting.setEnabled(as: Self.nobody, false)
        #expect(unreachable.status != 0 && unreachable.output.contains("polkit could not be asked"), "without polkit nothing passes: \(unreachable.output)")
    }

    @Test("an app's settings are its user's: another user's SetAppPolicy for it needs polkit; a user's own new app does not")
    func appSettings() throws {
        let setting = try Setting()
        try setting.startAuthority(allowing: [])
        #expect(try setting.setAppPolicy(as: getuid(), "org.example.Root").status == 0)
        let refused = try setting.setAppPolicy(as: Self.nobody, "org.example.Root")
        #expect(refused.status != 0 && refused.output.contains("set-app-policy"), "\(refused.output)")
        #expect(try setting.setAppPolicy(as: Self.nobody, "org.example.Nobody").status == 0)
        #expect(setting.questions == ["system-bus-name \(Self.nobody) org.swifthaptics.Haptics1.set-app-policy 0 False"], "\(setting.questions)")
    }

    @Test(
        "Debian's own polkitd, given the shipped actions and one administrator's rule, refuses another user the machine's settings and grants what the rule says",
        .enabled(if: FileManager.default.isExecutableFile(atPath: polkitd)))
    func realPolkit() throws {
        let setting = try Setting()
        let polkit = try RealPolkit(rig: setting.rig, rule: """
            polkit.addRule(function (action, subject) {
                if (action.id == "org.swifthaptics.Haptics1.set-app-policy" && subject.user == "nobody") { return polkit.Result.YES; }
            });
            """)
        defer { polkit.stop() }
        #expect(try setting.setAppPolicy(as: getuid(), "org.example.Root").status == 0)
        // Not in an active local session (no logind here): set-settings needs an administrator, and
        // hapticsd asks without interaction, so polkitd's answer is a challenge, taken as no.
        let refused = try setting.setEnabled(as: Self.nobody, false)
        #expect(
            refused.status != 0 && refused.output.contains("org.freedesktop.DBus.Error.AccessDenied")
                && refused.output.contains("may not do org.swifthaptics.Haptics1.set-settings"), "\(refused.output)\n\(polkit.output)")
        #expect(setting.enabled.contains("true"), "nobody switched haptics off: \(setting.enabled)")
        // The rule grants another user's app's settings: polkitd found the action and ran the rule.
        let granted = try setting.setAppPolicy(as: Self.nobody, "org.example.Root")
        #expect(granted.status == 0, "\(granted.output)\n\(polkit.output)")
    }

    static let polkitd = "/usr/lib/polkit-1/polkitd"

    /// Debian's polkitd on a rig's bus, in a mount namespace of its own where the shipped actions
    /// file is the only action directory's content and `rule` the only administrator's rule
    /// (bind mounts over `/usr/share/polkit-1/actions` and `/etc/polkit-1/rules.d`: the machine's
    /// own files are never touched). polkitd changes to its own user, `polkitd`, once started.
    final class RealPolkit {
        let process: ChildProcess

        init(rig: DaemonRig, rule: String) throws {
            let actions = rig.directory + "/polkit-actions", rules = rig.directory + "/polkit-rules"
            for directory in [actions, rules] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                chmod(directory, 0o755)
            }
            let policy = TestSupport.packageRoot + "/dist/polkit-1/actions/org.swifthaptics.Haptics1.policy"
            try FileManager.default.copyItem(atPath: policy, toPath: actions + "/org.swifthaptics.Haptics1.policy")
            try rule.write(toFile: rules + "/50-haptics-test.rules", atomically: true, encoding: .utf8)
            for file in [actions + "/org.swifthaptics.Haptics1.policy", rules + "/50-haptics-test.rules"] { chmod(file, 0o644) }
            process = try ChildProcess(
                [
                    "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                    "mount --bind \"$1\" /usr/share/polkit-1/actions && mount --bind \"$2\" /etc/polkit-1/rules.d && exec \"$3\"", "polkit",
                    actions, rules, DaemonAuthorizationTests.polkitd,
                ], environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address], outputPath: rig.directory + "/polkitd.out")
            let started = ChildProcess.waitUntil(timeout: 20) { [process] in process.output.contains("Acquired the name org.freedesktop.PolicyKit1") }
            if !started { stop() }
            try #require(started, "polkitd did not start: \(process.output)")
        }

        var output: String { process.output }

        func stop() {
            process.send(SIGTERM)
            _ = try? process.wait(timeout: 10)
        }
    }

    @Test("on a session bus (authorization auto) nobody is asked: the settings are the user's")
    func sessionBus() throws {
        let rig = try DaemonRig()
        #expect(try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "Enabled", "b", "false"]).status == 0)
    }
}
