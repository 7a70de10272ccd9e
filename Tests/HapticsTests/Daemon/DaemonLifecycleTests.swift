import Foundation
import Haptics
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a service owes the hardware: a client that dies has what it started stopped at once, the
/// service stops every actuator before it exits, reports readiness, and documents its options.
@Suite("hapticsd: lifecycle and safety")
struct DaemonLifecycleTests {
    /// A pattern whose drive changes on every frame (a repeating ramp), so frames keep flowing.
    static func ramp() throws -> HapticPattern {
        try HapticPattern(
            events: [
                HapticEvent(
                    eventType: .hapticContinuous,
                    parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0.5)], relativeTime: 0,
                    duration: 1)
            ],
            parameterCurves: [
                HapticParameterCurve(parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: 0.2), .init(relativeTime: 1, value: 1)])
            ])
    }

    @Test("a client SIGKILLed mid-pattern: its pattern stops within one frame interval of the bus announcing its end")
    func clientKilled() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        let file = rig.directory + "/ramp.ahap"
        try Self.ramp().writeAHAP(toFile: file)
        let client = try rig.launch(["/usr/bin/python3", TestSupport.packageRoot + "/Examples/Python/haptics_play.py", "pattern", file, "--loop", "--device", "recording:lra"])
        #expect(client.waitForOutput { $0.contains("playing as") }, "\(client.output)")
        usleep(300_000)
        observer.pump(for: 0)
        observer.clearSignals()
        let killed = HapticInstant.monotonicNow()
        kill(client.pid, SIGKILL)
        // The kernel tears the process down and closes its socket; dbus-daemon announces it gone.
        let gone = try #require(observer.receivedSignal("NameOwnerChanged") { $0.count == 3 && $0[0].stringValue?.hasPrefix(":") == true && $0[2] == .string("") })
        #expect(try client.wait(timeout: 10).status == -SIGKILL)
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let frames = recording.frames(for: "recording:lra")
        let interval = 0.004  // the engine's frame interval while a ramp plays (the lra takes one every 1 ms at most)
        #expect(frames.filter { $0.received < killed && $0.frame.isDriven }.count > 20, "frames flowed before the kill")
        let stop = try #require(frames.first { $0.received >= killed && !$0.frame.isDriven }, "a silence frame after the kill")
        let notice = min(gone.received, stop.received)
        #expect(stop.received.seconds(since: notice) <= interval, "silent \(stop.received.seconds(since: notice) * 1000) ms after the client's end was announced")
        #expect(frames.filter { $0.received > notice && $0.frame.isDriven }.count <= 1, "at most the frame already due was sent")
        #expect(stop.received.seconds(since: killed) < 1, "silent \(stop.received.seconds(since: killed) * 1000) ms after the kill")
        #expect(recording.transitions(for: "recording:lra").suffix(2) == ["stop", "sleep"])
    }

    @Test("a client that leaves right after sending (busctl --expect-reply=no) has its looping pattern stopped, not left running")
    func clientGoneBeforeServed() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        let loop = try HapticPattern.continuous(duration: 0.2, intensity: 1, sharpness: 0.5).ahapText(pretty: false)
        for _ in 0..<5 {
            let sent = try rig.busctl(["--expect-reply=no", "call", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1",
                                       "PlayPattern", "sssda{sv}", "org.example.Gone", "recording:lra", loop, "1", "1", "loop", "b", "true"])
            #expect(sent.status == 0, "\(sent.output)")
        }
        let stopped = ChildProcess.waitUntil(timeout: 10) {
            (try? observer.call("GetStatistics"))?.first?.entries["players"]?.unwrapped == .uint32(0)
        }
        #expect(stopped, "every looping pattern of a client that left was stopped")
        // Whether a pattern got to play before its client was found gone depends on timing; either
        // way the device ends stopped and asleep (the backend writes its records at every sleep).
        usleep(300_000)
        let transitions = try rig.recording().transitions(for: "recording:lra")
        #expect(transitions.filter { $0 == "wake" }.count == transitions.filter { $0 == "sleep" }.count, "\(transitions)")
        #expect(try rig.recording().driveFrames("recording:lra").last?.isDriven != true)
    }

    @Test("SIGTERM or SIGINT to hapticsd mid-drive: every actuator stopped and closed, clients told, exit status 0", arguments: [SIGTERM, SIGINT])
    func stopped(by signal: Int32) throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        let long = try HapticPattern.continuous(duration: 10, intensity: 1, sharpness: 0.2)
        for device in ["recording:lra", "recording:gamepad"] {
            try client.call("PlayPattern", [.string("org.example.Long"), .string(device), .string(long.ahapText(pretty: false)), .double(1), .dictionary([])])
        }
        client.pump(for: 0.2)
        #expect(try rig.stopDaemon(signal) == .exited(0), "\(rig.daemonLog)")
        let recording = try rig.recording()
        for device in ["recording:lra", "recording:gamepad"] {
            let frames = recording.driveFrames(device)
            #expect(frames.first?.isDriven == true, "\(device) was driven")
            #expect(frames.last?.isDriven == false, "\(device)'s last frame is silence")
            #expect(recording.transitions(for: device).suffix(2) == ["stop", "close"] || recording.transitions(for: device).suffix(3) == ["stop", "sleep", "close"], "\(recording.transitions(for: device))")
        }
        #expect(client.waitForSignal("Ended") { $0.last == .string("daemon-stopping") } != nil)
        #expect(rig.daemonLog.contains("stopping every actuator"))
    }

    @Test("hapticsd --help documents every option")
    func help() throws {
        let (status, output) = try TestSupport.run(DaemonRig.hapticsd, ["--help"])
        #expect(status == 0)
        for option in [
            "--system", "--address", "--plugin-path", "--set", "--no-feedbackd", "--theme", "--theme-name", "--theme-dir", "--profile",
            "--default-device", "--max-calls-per-second", "--max-players", "--apps-file", "--no-realtime", "--log-level", "SIGTERM", "SIGHUP",
            "sd_notify", "org.swifthaptics.Haptics1", "org.sigxcpu.Feedback",
        ] {
            #expect(output.contains(option), "--help does not mention \(option)")
        }
        let bad = try TestSupport.run(DaemonRig.hapticsd, ["--profile", "loud"])
        #expect(bad.status != 0 && bad.output.contains("--profile 'loud' is not full, quiet or silent"), "\(bad.output)")
    }

    @Test("a second hapticsd on the same bus says one is already running; a broken theme or settings file names itself")
    func startFailures() throws {
        let rig = try DaemonRig()
        var environment = rig.clientEnvironment
        environment["NOTIFY_SOCKET"] = nil
        let second = try rig.run([DaemonRig.hapticsd, "--theme-dir", DaemonRig.themes, "--set", "recording.devices=lra"], timeout: 60)
        #expect(second.status == 1 && second.output.contains("cannot own org.swifthaptics.Haptics1") && second.output.contains("already running"), "\(second.output)")
        let theme = rig.directory + "/broken.json"
        try #"{"name": "broken", "profiles": [{"name": "quiet", "feedbacks": [{"event-name": "button-pressed", "type": "VibraRumble", "duration": -5}]}]}"#
            .write(toFile: theme, atomically: false, encoding: .utf8)
        let broken = try rig.run([DaemonRig.hapticsd, "--theme", theme, "--address", "unix:path=\(rig.directory)/elsewhere"], timeout: 60)
        #expect(broken.status == 1 && broken.output.contains("broken.json") && broken.output.contains("$.profiles[0].feedbacks[0].duration"), "\(broken.output)")
        try FileManager.default.createDirectory(atPath: rig.directory + "/config/haptics", withIntermediateDirectories: true)
        try #"{"org.example.App": {"intensity_scale": 3}}"#.write(toFile: rig.directory + "/config/haptics/apps.json", atomically: false, encoding: .utf8)
        let ignored = try rig.run([DaemonRig.hapticsd, "--theme-dir", DaemonRig.themes, "--address", "unix:path=\(rig.directory)/elsewhere"], timeout: 60)
        #expect(ignored.output.contains("ignoring the per-app settings") && ignored.output.contains("apps.json") && ignored.output.contains("intensity_scale"), "\(ignored.output)")
    }

    @Test("SIGHUP reads the settings files again: a per-app setting written meanwhile applies, and AppPolicies announces it")
    func reload() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        try FileManager.default.createDirectory(atPath: rig.directory + "/config/haptics", withIntermediateDirectories: true)
        try #"{"org.example.Game": {"intensity_scale": 0.25, "profile": "quiet"}}"#.write(toFile: rig.directory + "/config/haptics/apps.json", atomically: false, encoding: .utf8)
        rig.daemon?.send(SIGHUP)
        #expect(observer.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[2].invalidates("AppPolicies") } != nil)
        let policies = try #require(try rig.property("AppPolicies") as? [String: [String: Any]])
        #expect(((policies["org.example.Game"]?["intensity-scale"] as? [String: Any])?["data"] as? Double) == 0.25)
    }
}
