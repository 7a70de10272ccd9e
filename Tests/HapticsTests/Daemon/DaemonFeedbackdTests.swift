import Foundation
import Haptics
import HapticsBus
import HapticsDaemon
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// feedbackd's interface served by hapticsd, driven by clients nobody on this project wrote:
/// Debian 12's `fbcli` (package feedbackd 0.0.3) and Python's libfeedback (`gi.repository.Lfb`).
@Suite("hapticsd: feedbackd's clients, unchanged")
struct DaemonFeedbackdTests {
    static let fbcli = "/usr/bin/fbcli"
    static let python = "/usr/bin/python3"

    /// The frames the default theme's feedback for `event` gives in-process.
    static func themed(_ event: String, device: String = "lra") throws -> [[ChannelDrive]] {
        let theme = try FeedbackThemeTests.search().load(file: nil, name: "default").theme
        let feedback = try #require(theme.hapticFeedback(for: event, at: .full)?.feedback)
        return try InProcessReference.pattern(try #require(feedback.hapticPattern()), device: device)
    }

    @Test("fbcli -E button-pressed plays the theme's feedback and exits when FeedbackEnded arrives")
    func buttonPressed() throws {
        let rig = try DaemonRig()
        let fbcli = try rig.launch([Self.fbcli, "-E", "button-pressed"])
        let (status, output) = try fbcli.wait(timeout: 20)
        #expect(status == 0, "\(output)")
        #expect(output.contains("Triggering feedback for event 'button-pressed'"))
        #expect(!output.contains("Ending feedback"), "it ended by itself, not by fbcli's EndFeedback: \(output)")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").map(\.channels) == (try Self.themed("button-pressed")))
    }

    @Test("fbcli -E phone-incoming-call -t 0 rings until fbcli's EndFeedback; FeedbackEnded(id, 2) is broadcast and the motor stops")
    func endFeedback() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        let fbcli = try rig.launch([Self.fbcli, "-E", "phone-incoming-call", "-t", "0"])
        let ringing = ChildProcess.waitUntil(timeout: 20) {
            (try? observer.call("GetStatistics"))?.first?.entries["players"]?.unwrapped == .uint32(1)
        }
        #expect(ringing, "\(fbcli.output)")
        observer.pump(for: 2.2)
        #expect(observer.signals.filter { $0.member == "FeedbackEnded" }.isEmpty, "timeout 0 loops: still ringing after a full ring")
        fbcli.write("\n")
        let ended = try #require(observer.waitForSignal("FeedbackEnded"))
        #expect(ended.last == .uint32(2), "explicit end: \(ended)")
        let (status, output) = try fbcli.wait(timeout: 20)
        #expect(status == 0 && output.contains("Ending feedback"), "\(output)")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let frames = recording.driveFrames("recording:lra")
        let ring = try Self.themed("phone-incoming-call").filter { $0.contains { $0.amplitude > 0 } }
        #expect(frames.filter(\.isDriven).count >= 2, "rang at least twice")
        #expect(Set(frames.filter(\.isDriven).map(\.channels)) == Set(ring), "every ring is the theme's")
        #expect(frames.last?.isDriven == false)
    }

    @Test("fbcli -P quiet sets the Profile (PropertiesChanged), silent plays no haptics: FeedbackEnded(id, 4294967295), as feedbackd")
    func profiles() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        let quiet = try rig.run([Self.fbcli, "-P", "quiet"], timeout: 20)
        #expect(quiet.status == 0 && quiet.output.contains("Current feedback profile is: 'quiet'"), "\(quiet.output)")
        #expect(try rig.property("Profile", interface: "org.sigxcpu.Feedback", path: "/org/sigxcpu/Feedback", destination: "org.sigxcpu.Feedback") as? String == "quiet")
        #expect(observer.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[1].entries["Profile"]?.stringValue == "quiet" } != nil)

        #expect(try rig.run([Self.fbcli, "-P", "silent"], timeout: 20).status == 0)
        let silent = try rig.launch([Self.fbcli, "-E", "button-pressed"])
        #expect(try silent.wait(timeout: 20).status == 0)
        #expect(observer.waitForSignal("FeedbackEnded") { $0.last == .uint32(4_294_967_295) } != nil)
        usleep(200_000)
        #expect((try? rig.recording().driveFrames("recording:lra").count) ?? 0 == 0, "silent: the motor stays still")

        let loud = try rig.busctl(["set-property", "org.sigxcpu.Feedback", "/org/sigxcpu/Feedback", "org.sigxcpu.Feedback", "Profile", "s", "loud"])
        #expect(loud.status != 0 && loud.output.contains("'loud' is not a profile"), "\(loud.output)")
        do throws(BusError) {
            try observer.call(
                "Set", [.string("org.sigxcpu.Feedback"), .string("Profile"), .variant(.string("loud"))], path: "/org/sigxcpu/Feedback",
                interface: "org.freedesktop.DBus.Properties", destination: "org.sigxcpu.Feedback")
            Issue.record("Profile 'loud' was accepted")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "feedbackd's error name: \(error)")
        }
    }

    @Test("an event that rings ends when the profile drops below its theme section (feedbackd's rule), with reason 2")
    func profileDropEndsEvents() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        let fbcli = try rig.launch([Self.fbcli, "-E", "alarm-clock-elapsed", "-t", "0"])
        #expect(ChildProcess.waitUntil(timeout: 20) { (try? observer.call("GetStatistics"))?.first?.entries["players"]?.unwrapped == .uint32(1) })
        #expect(try rig.busctl(["set-property", "org.sigxcpu.Feedback", "/org/sigxcpu/Feedback", "org.sigxcpu.Feedback", "Profile", "s", "silent"]).status == 0)
        #expect(observer.waitForSignal("FeedbackEnded")?.last == .uint32(2))
        #expect(try fbcli.wait(timeout: 20).status == 0)
    }

    @Test("fbcli -E phone-incoming-call -t 1 ends by itself after the timeout, its last run played out: FeedbackEnded(id, 0), as feedbackd (it never sends 1)")
    func timeout() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        let start = HapticInstant.monotonicNow()
        let fbcli = try rig.launch([Self.fbcli, "-E", "phone-incoming-call", "-t", "1"])
        #expect(observer.waitForSignal("FeedbackEnded", timeout: 20)?.last == .uint32(0))
        let elapsed = HapticInstant.monotonicNow().seconds(since: start)
        #expect(elapsed >= 0.95 && elapsed < 10, "ended after \(elapsed) s")
        #expect(try fbcli.wait(timeout: 20).status == 0)
    }

    @Test("Python's libfeedback (gi.repository.Lfb) triggers an event and sees it end naturally")
    func pythonLibfeedback() throws {
        let rig = try DaemonRig()
        let script = """
            import gi
            gi.require_version('Lfb', '0.0')
            from gi.repository import Lfb, GLib
            Lfb.init('org.example.PythonFeedback')
            print('profile', Lfb.get_feedback_profile())
            event = Lfb.Event.new('message-new-instant')
            loop = GLib.MainLoop()
            def ended(e):
                print('ended', e.get_end_reason().value_nick, e.get_state().value_nick)
                loop.quit()
            event.connect('feedback-ended', ended)
            print('triggered', event.trigger_feedback())
            GLib.timeout_add_seconds(20, loop.quit)
            loop.run()
            Lfb.uninit()
            """
        let (status, output) = try rig.run([Self.python, "-c", script], timeout: 60)
        #expect(status == 0, "\(output)")
        #expect(output.contains("profile full"), "\(output)")
        #expect(output.contains("triggered True"), "\(output)")
        #expect(output.contains("ended natural ended"), "\(output)")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").map(\.channels) == (try Self.themed("message-new-instant")))
    }

    @Test("org.sigxcpu.Feedback.Haptic.Vibrate: steps of amplitude and duration; an empty pattern stops; bad steps are named errors")
    func vibrate() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        func vibrate(_ steps: [(Double, UInt32)]) throws(BusError) -> [BusValue] {
            try client.call(
                "Vibrate", [.string("org.example.Vibrate"), .array(element: "(du)", steps.map { .structure([.double($0.0), .uint32($0.1)]) })],
                path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback.Haptic", destination: "org.sigxcpu.Feedback")
        }
        #expect(try vibrate([(0.5, 100), (0, 50), (1, 100)]) == [.bool(true)])
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let expected = try InProcessReference.pattern(try #require(ThemeFeedback.vibraPattern(magnitudes: [0.5, 0, 1], durationsMs: [100, 50, 100]).hapticPattern()))
        #expect(recording.driveFrames("recording:lra").map(\.channels) == expected)

        #expect(try vibrate([(1, 10_000)]) == [.bool(true)])
        client.pump(for: 0.1)
        #expect(try vibrate([]) == [.bool(true)], "an empty pattern stops the app's vibration")
        let stopped = try rig.waitForRecording { $0.transitions(for: "recording:lra").filter { $0 == "sleep" }.count == 2 }
        let last = try #require(stopped.frames(for: "recording:lra").last)
        #expect(!last.frame.isDriven)

        let bad: [([(Double, UInt32)], String)] = [
            (Array(repeating: (0.5, 10), count: 11), "11 steps; at most 10"),
            ([(2, 100)], "pattern[0].amplitude: 2.0 is outside 0…1"),
            ([(0.5, 100), (0.5, 10_001)], "pattern[1].duration: 10001.0 is outside 0…10000 ms"),
            ([(Double.nan, 100)], "pattern[0].amplitude: NaN"),
        ]
        for (steps, message) in bad {
            do throws(BusError) {
                _ = try vibrate(steps)
                Issue.record("\(steps) was accepted")
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(error)")
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
    }

    @Test("a feedbackd device theme as is (Debian's default.json with --theme): its VibraRumble plays as feedbackd's arithmetic says")
    func feedbackdThemeFile() throws {
        let rig = try DaemonRig(arguments: ["--theme", "/usr/share/feedbackd/themes/default.json"])
        let fbcli = try rig.launch([Self.fbcli, "-E", "button-pressed"])
        #expect(try fbcli.wait(timeout: 20).status == 0)
        let theme = try FeedbackThemeTests.search().load(file: "/usr/share/feedbackd/themes/default.json", name: "default").theme
        let rumble = try #require(theme.hapticFeedback(for: "button-pressed", at: .full)?.feedback.hapticPattern())
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").map(\.channels) == (try InProcessReference.pattern(rumble)))
    }

    @Test("when another process owns org.sigxcpu.Feedback (feedbackd itself), hapticsd leaves it and serves its own API")
    func feedbackdAlreadyRunning() throws {
        let rig = try DaemonRig(startDaemon: false)
        let squatter = try TestBusClient(address: rig.address)
        try squatter.bus.requestName("org.sigxcpu.Feedback")
        try rig.start()
        #expect(rig.daemonLog.contains("not serving feedbackd's interface"), "\(rig.daemonLog)")
        #expect(try rig.property("Version") as? String == "1.0")
    }

    @Test("--feedbackd auto leaves org.sigxcpu.Feedback to the service the bus can start for it (feedbackd installed); always takes it; never leaves it")
    func whoServesFeedbackd() throws {
        let services = TestSupport.makeTemporaryDirectory("feedbackd-activation")
        defer { try? FileManager.default.removeItem(atPath: services) }
        try "[D-BUS Service]\nName=org.sigxcpu.Feedback\nExec=/bin/false\n".write(toFile: services + "/org.sigxcpu.Feedback.service", atomically: true, encoding: .utf8)
        func owner(_ rig: DaemonRig) throws -> String {
            try rig.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s", "org.sigxcpu.Feedback"]).output
        }
        let auto = try DaemonRig(serviceDirectories: [services])
        #expect(try owner(auto).contains("false"), "\(auto.daemonLog)")
        #expect(auto.daemonLog.contains("the bus starts another service for org.sigxcpu.Feedback"), "\(auto.daemonLog)")
        let always = try DaemonRig(arguments: ["--feedbackd", "always"], serviceDirectories: [services])
        #expect(try owner(always).contains("true"), "\(always.daemonLog)")
        let unopposed = try DaemonRig()
        #expect(try owner(unopposed).contains("true"), "auto serves it where nothing else can: \(unopposed.daemonLog)")
        let never = try DaemonRig(arguments: ["--feedbackd", "never"])
        #expect(try owner(never).contains("false"), "\(never.daemonLog)")
    }

    @Test("bad input to TriggerFeedback: an app id or event name that is not a name, a hint of the wrong type, each InvalidArgs as feedbackd names it; an unknown event is not an error (FeedbackEnded says so)")
    func triggerBadInput() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        func trigger(_ app: String, _ event: String, hints: [(key: String, value: BusValue)] = [], timeout: Int32 = -1) throws(BusError) -> [BusValue] {
            try client.call(
                "TriggerFeedback", [.string(app), .string(event), .dictionary(hints), .int32(timeout)], path: "/org/sigxcpu/Feedback",
                interface: "org.sigxcpu.Feedback", destination: "org.sigxcpu.Feedback")
        }
        let cases: [(String, String, [(key: String, value: BusValue)], String)] = [
            ("", "button-pressed", [], "app_id: '' is not a valid application id"),
            ("org.example.App", "", [], "event: '' is not an event name"),
            ("org.example.App", "Button Pressed", [], "event: 'Button Pressed' is not an event name"),
            ("org.example.App", "button-pressed", [("profile", .uint32(1))], "hints.profile: expected a string (s), found 'u'"),
            ("org.example.App", "button-pressed", [("profile", .string("loud"))], "hints.profile: 'loud' is not a profile"),
        ]
        for (app, event, hints, message) in cases {
            do throws(BusError) {
                _ = try trigger(app, event, hints: hints)
                Issue.record("\(app) \(event) \(hints) was accepted")
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(error)")
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        let id = try #require(try trigger("org.example.App", "x-not-in-any-theme").first)
        #expect(client.waitForSignal("FeedbackEnded") { $0.first == id }?.last == .uint32(4_294_967_295))
        try client.call("EndFeedback", [.uint32(987_654)], path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback", destination: "org.sigxcpu.Feedback")
    }
}
