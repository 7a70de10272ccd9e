import Foundation
import Haptics
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// org.swifthaptics.Haptics1 through real command-line clients (busctl, gdbus) on a private bus,
/// the recording backend checked frame by frame against the in-process renderer.
@Suite("hapticsd: the manager interface through busctl and gdbus")
struct DaemonManagerTests {
    @Test("the served interfaces are the ones dist/dbus-1/interfaces and (feedbackd's) dist/hapticsd/interfaces document, member by member")
    func introspection() throws {
        let rig = try DaemonRig()
        for (path, interfaces, file) in [
            ("/org/swifthaptics/Haptics1", ["org.swifthaptics.Haptics1"], "dbus-1/interfaces/org.swifthaptics.Haptics1.xml"),
            ("/org/swifthaptics/Haptics1/player/1", ["org.swifthaptics.Haptics1.Player"], "dbus-1/interfaces/org.swifthaptics.Haptics1.xml"),
            ("/org/sigxcpu/Feedback", ["org.sigxcpu.Feedback", "org.sigxcpu.Feedback.Haptic"], "hapticsd/interfaces/org.sigxcpu.Feedback.xml"),
        ] {
            let destination = path.hasPrefix("/org/sigxcpu") ? "org.sigxcpu.Feedback" : "org.swifthaptics.Haptics1"
            let (status, live) = try rig.run(["/usr/bin/gdbus", "introspect", "--session", "--dest", destination, "--object-path", path, "--xml"])
            #expect(status == 0, "\(live)")
            let documented = try String(contentsOfFile: TestSupport.packageRoot + "/dist/" + file, encoding: .utf8)
            for interface in interfaces {
                let served = InterfaceShape(xml: live, interface: interface)
                let written = InterfaceShape(xml: documented, interface: interface)
                #expect(!served.members.isEmpty, "\(interface) is served at \(path)")
                #expect(served == written, "\(interface): served \(served.members.sorted()) but documented \(written.members.sorted())")
            }
        }
    }

    @Test("ListDevices, GetDevice, ListEffects and the read-only properties describe what the service owns")
    func listing() throws {
        let rig = try DaemonRig()
        let devices = try rig.call("ListDevices")
        let list = try #require(devices.first as? [[Any]])
        let ids = list.compactMap { $0.first as? String }
        #expect(ids.contains("recording:lra") && ids.contains("recording:gamepad"), "\(ids)")
        let lra = try #require(list.first { ($0.first as? String) == "recording:lra" }?.last as? [String: Any])
        func value(_ entry: Any?) -> Any? { (entry as? [String: Any])?["data"] }
        #expect(value(lra["name"]) as? String == "Simulated 175 Hz LRA")
        #expect(value(lra["backend"]) as? String == "recording")
        #expect(value(lra["actuator"]) as? String == "lra")
        #expect(value(lra["available"]) as? Bool == true)
        #expect(value(lra["default"]) as? Bool == true)
        #expect(value(lra["owner"]) as? String == "hapticsd")
        #expect(value(lra["owner-pid"]) as? Int == Int(rig.daemon!.pid))
        #expect(value(lra["minimum-update-interval-us"]) as? Int == 1000)
        let channels = try #require(value(lra["channels"]) as? [[String: Any]])
        #expect(channels.count == 1)
        #expect(value(channels[0]["resonant-frequency-hz"]) as? Double == 175)
        #expect(value(channels[0]["amplitude-steps"]) as? Int == 256)

        let gamepad = try rig.call("GetDevice", "s", ["recording:gamepad"])
        let details = try #require(gamepad.first as? [String: Any])
        #expect(value(details["actuator"]) as? String == "dualRumble")
        #expect((value(details["channels"]) as? [Any])?.count == 2)
        let byDefault = try #require(try rig.call("GetDevice", "s", [""]).first as? [String: Any])
        #expect(value(byDefault["name"]) as? String == "Simulated 175 Hz LRA")

        let effects = try #require(try rig.call("ListEffects").first as? [[String]])
        #expect(effects.map { $0[0] } == FeedbackEffect.vocabulary.map(\.name))
        #expect(effects.first == ["impact.light", "iOS", "impact"])

        #expect(try rig.property("Version") as? String == "1.0")
        #expect((try rig.property("Devices") as? [String])?.contains("recording:lra") == true)
        #expect(try rig.property("DefaultDevice") as? String == "recording:lra")
        #expect(try rig.property("Enabled") as? Bool == true)
        #expect(try rig.property("IntensityScale") as? Double == 1)
        let intervals = try #require(try rig.property("MinimumIntervals") as? [String: Double])
        #expect(intervals["impact"] == 0.03 && intervals["selection"] == 0.02)
    }

    @Test("GetCapabilities states the bounds the service enforces, as its options set them; gdbus reads it too")
    func capabilities() throws {
        let rig = try DaemonRig(arguments: ["--max-players", "7", "--max-calls-per-second", "50"])
        let capabilities = try #require(try rig.call("GetCapabilities").first as? [String: Any])
        func value(_ key: String) -> Any? { (capabilities[key] as? [String: Any])?["data"] }
        #expect(value("version") as? String == "1.0")
        #expect(value("max-players-per-client") as? Int == 7)
        #expect(value("max-calls-per-second") as? Int == 50)
        #expect(value("max-pattern-bytes") as? Int == 4 << 20)
        #expect(value("max-curve-points") as? Int == HapticParameterCurve.maximumControlPoints)
        #expect(value("effects") as? Int == FeedbackEffect.vocabulary.count)
        #expect((value("parameters") as? [String]) == HapticDynamicParameter.ID.allCases.map(\.rawValue))
        #expect(value("vibrate-max-items") as? Int == 10)
        #expect(value("vibrate-max-duration-ms") as? Int == 10_000)
        let (status, output) = try rig.gdbus("GetCapabilities", [])
        #expect(status == 0 && output.contains("'max-players-per-client': <uint32 7>"), "\(output)")
    }

    @Test("PlayEffect from busctl plays exactly the frames the in-process renderer gives, and a tap plays out after busctl exits")
    func playEffect() throws {
        let rig = try DaemonRig()
        let reply = try rig.call("PlayEffect", "sssd", ["org.example.Tap", "recording:lra", "impact.heavy", "1"])
        #expect((reply.first as? String)?.hasPrefix("/org/swifthaptics/Haptics1/player/") == true)
        #expect(reply.last as? String == "played")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let expected = try InProcessReference.effect("impact.heavy")
        #expect(recording.driveFrames("recording:lra").map(\.channels) == expected)
        #expect(expected.count >= 2 && expected.last?.allSatisfy { $0.amplitude == 0 } == true)

        // The gamepad by name, at half intensity: its two motors as in-process.
        _ = try rig.call("PlayEffect", "sssd", ["org.example.Tap", "recording:gamepad", "notification.success", "0.5"])
        let both = try rig.waitForRecording { $0.transitions(for: "recording:gamepad").contains("sleep") }
        #expect(both.driveFrames("recording:gamepad").map(\.channels) == (try InProcessReference.effect("notification.success", device: "gamepad", intensity: 0.5)))
    }

    @Test("PlayEffect on a device with stored effects (a simulated DRV2605L) starts its ROM click and renders no frame; a rhythm renders frames")
    func playEffectFromStoredEffects() throws {
        let rig = try DaemonRig(devices: "drv2605l")
        _ = try rig.call("PlayEffect", "sssd", ["org.example.Tap", "recording:drv2605l", "impact.heavy", "0.5"])
        let tap = try rig.waitForRecording { $0.transitions(for: "recording:drv2605l").contains("sleep") }
        #expect(tap.natives(for: "recording:drv2605l").map(\.sequence) == ["strong-click-60"])
        #expect(tap.natives(for: "recording:drv2605l").allSatisfy { !$0.waited }, "started, not waited for")
        #expect(!tap.driveFrames("recording:drv2605l").contains { $0.channels.contains { $0.amplitude > 0 } })

        _ = try rig.call("PlayEffect", "sssd", ["org.example.Tap", "recording:drv2605l", "notification.success", "1"])
        let rhythm = try rig.waitForRecording { $0.transitions(for: "recording:drv2605l").filter { $0 == "sleep" }.count >= 2 }
        #expect(rhythm.natives(for: "recording:drv2605l").count == 1)
        #expect(rhythm.driveFrames("recording:drv2605l").contains { $0.channels.contains { $0.amplitude > 0 } })
    }

    @Test("PlayPattern takes a .haptic clip as it takes AHAP: the frames are the in-process renderer's; a broken clip is InvalidPattern naming the key")
    func playPatternTakesAClip() throws {
        let rig = try DaemonRig()
        // Steps only (equal times), so the frames do not depend on when the passes fall.
        let clip = #"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":0.7,"emphasis":{"amplitude":1,"frequency":0.9}},{"time":0.06,"amplitude":0.7},{"time":0.06,"amplitude":0.3},{"time":0.12,"amplitude":0.3},{"time":0.12,"amplitude":0}]}}}}"#
        // A client that stays on the bus while it plays (a departed client's patterns stop).
        let client = try TestBusClient(address: rig.address)
        try client.call("PlayPattern", [.string("org.example.Clip"), .string("recording:lra"), .string(clip), .double(1), .dictionary([])])
        client.pump(for: 0.3)
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let reference = try InProcessReference.pattern(try HapticClip(haptic: clip).pattern)
        #expect(recording.driveFrames("recording:lra").map(\.channels) == reference)
        let broken = #"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":2}]}}}}"#
        let (status, output) = try rig.busctl([
            "call", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "PlayPattern", "sssda{sv}", "org.example.Clip",
            "recording:lra", broken, "1", "0",
        ])
        #expect(status != 0 && output.contains("$.signals.continuous.envelopes.amplitude[0].amplitude"), "\(output)")
    }

    @Test("each device renders through its calibration profile: a user profile for the LRA changes its frames exactly as in-process")
    func calibrationProfile() throws {
        let rig = try DaemonRig(startDaemon: false)
        let description = try TestSupport.recordingSystem(devices: "lra").resolve("recording:lra")
        var profile = CalibrationProfile.uncalibrated(for: description)
        profile.deviceID = description.id
        profile.source = .simulated
        profile.channels[0].deadZone = 0.3
        profile.channels[0].responseExponent = 2
        try ProfileStore(userDirectory: rig.directory + "/config/haptics/profiles", shippedDirectories: []).save(profile)
        try rig.start()
        let details = try #require(try rig.call("GetDevice", "s", ["recording:lra"]).first as? [String: Any])
        #expect((details["calibration"] as? [String: Any])?["data"] as? String == "simulated")
        _ = try rig.call("PlayEffect", "sssd", ["org.example.Calibrated", "recording:lra", "impact.medium", "1"])
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let calibrated = try InProcessReference.effect("impact.medium", profile: profile)
        #expect(recording.driveFrames("recording:lra").map(\.channels) == calibrated)
        #expect(calibrated != (try InProcessReference.effect("impact.medium")), "the profile makes a difference")
    }

    @Test("Prepare wakes the device without driving it; it idles after the prepare timeout")
    func prepare() throws {
        let rig = try DaemonRig()
        _ = try rig.call("Prepare", "ss", ["org.example.App", "recording:lra"])
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.transitions(for: "recording:lra") == ["open", "wake", "sleep"])
        #expect(recording.driveFrames("recording:lra").isEmpty)
        let entries = recording.entries(for: "recording:lra")
        let wake = try #require(entries.first { $0.event == .wake }?.time)
        let sleep = try #require(entries.first { $0.event == .sleep }?.time)
        #expect(sleep.seconds(since: wake) >= 1.9, "prepared for 2 s, slept after \(sleep.seconds(since: wake)) s")
    }

    @Test("the writable properties change what plays, and each change is announced with PropertiesChanged")
    func writableProperties() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        #expect(try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "DefaultDevice", "s", "recording:gamepad"]).status == 0)
        #expect(observer.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[1].entries["DefaultDevice"]?.stringValue == "recording:gamepad" } != nil)
        _ = try rig.call("PlayEffect", "sssd", ["org.example.App", "", "impact.medium", "1"])
        _ = try rig.waitForRecording { $0.transitions(for: "recording:gamepad").contains("sleep") }

        #expect(try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "IntensityScale", "d", "0.5"]).status == 0)
        #expect(observer.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[1].entries["IntensityScale"]?.doubleValue == 0.5 } != nil)
        _ = try rig.call("PlayEffect", "sssd", ["org.example.App", "recording:lra", "impact.heavy", "1"])
        let scaled = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(scaled.driveFrames("recording:lra").map(\.channels) == (try InProcessReference.effect("impact.heavy", policy: HapticPolicy(intensityScale: 0.5))))

        #expect(try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "Enabled", "b", "false"]).status == 0)
        #expect(observer.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[1].entries["Enabled"]?.boolValue == false } != nil)
        let before = try rig.recording().driveFrames("recording:lra").count
        _ = try rig.call("PlayEffect", "sssd", ["org.example.App", "recording:lra", "impact.heavy", "1"])
        usleep(300_000)
        #expect(try rig.recording().driveFrames("recording:lra").count == before, "nothing plays while haptics are off")

        #expect(try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "MinimumIntervals", "a{sd}", "1", "impact", "0.25"]).status == 0)
        #expect(observer.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[1].entries["MinimumIntervals"] != nil } != nil)
        let intervals = try #require(try rig.property("MinimumIntervals") as? [String: Double])
        #expect(intervals["impact"] == 0.25 && intervals["selection"] == 0.02)
    }

    @Test("per-app policy: SetAppPolicy scales and mutes one app, GetAppPolicy and AppPolicies report it, PropertiesChanged announces it")
    func appPolicy() throws {
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        _ = try rig.call("SetAppPolicy", "sa{sv}", ["org.example.Quiet", "2", "intensity-scale", "d", "0.5", "profile", "s", "quiet"])
        #expect(observer.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[2].invalidates("AppPolicies") } != nil)
        let effective = try #require(try rig.call("GetAppPolicy", "s", ["org.example.Quiet"]).first as? [String: Any])
        func value(_ key: String) -> Any? { (effective[key] as? [String: Any])?["data"] }
        #expect(value("intensity-scale") as? Double == 0.5)
        #expect(value("profile") as? String == "quiet")
        #expect(value("enabled") as? Bool == true)
        let policies = try #require(try rig.property("AppPolicies") as? [String: [String: Any]])
        #expect(policies.keys.sorted() == ["org.example.Quiet"])

        _ = try rig.call("PlayEffect", "sssd", ["org.example.Quiet", "recording:lra", "impact.heavy", "1"])
        let quiet = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(quiet.driveFrames("recording:lra").map(\.channels) == (try InProcessReference.effect("impact.heavy", intensity: 0.5)))

        _ = try rig.call("SetAppPolicy", "sa{sv}", ["org.example.Off", "1", "enabled", "b", "false"])
        #expect((try rig.call("GetAppPolicy", "s", ["org.example.Off"]).first as? [String: Any]).flatMap { ($0["enabled"] as? [String: Any])?["data"] as? Bool } == false)
        let count = try rig.recording().driveFrames("recording:lra").count
        _ = try rig.call("PlayEffect", "sssd", ["org.example.Off", "recording:lra", "impact.heavy", "1"])
        usleep(300_000)
        #expect(try rig.recording().driveFrames("recording:lra").count == count, "a disabled app plays nothing")

        _ = try rig.call("SetAppPolicy", "sa{sv}", ["org.example.Quiet", "0"])
        #expect((try rig.property("AppPolicies") as? [String: Any])?.keys.sorted() == ["org.example.Off"], "an empty policy resets the app")
    }

    @Test("GetStatistics accounts for every call: played, refused by reason")
    func statistics() throws {
        let rig = try DaemonRig()
        _ = try rig.call("PlayEffect", "sssd", ["org.example.App", "recording:lra", "selection", "1"])
        _ = try? rig.call("PlayEffect", "sssd", ["org.example.App", "recording:lra", "no.such.effect", "1"])
        _ = try? rig.call("PlayEffect", "sssd", ["org.example.App", "recording:nope", "selection", "1"])
        let statistics = try #require(try rig.call("GetStatistics").first as? [String: Any])
        func count(_ key: String) -> Int? { (statistics[key] as? [String: Any])?["data"] as? Int }
        #expect(count("calls") == 3)
        #expect(count("played") == 1)
        #expect(count("refused") == 2)
        #expect(count("refused.UnknownEffect") == 1)
        #expect(count("refused.UnknownDevice") == 1)
    }

    @Test("a device that goes and comes back: DeviceRemoved, DeviceAdded, the Devices property, and the service owns it again")
    func hotplug() throws {
        let device = #"[{"id":"recording:hot","name":"Hotplugged LRA","actuator":"lra","channels":[{"name":"main","actuator":"lra"}],"unplug_after_frames":1,"replug_after_ms":400}]"#
        let rig = try DaemonRig(devices: device)
        let observer = try TestBusClient(address: rig.address)
        let idle = try #require(
            try observer.call("CreatePlayer", [.string("org.example.App"), .string("recording:hot"), .string(try HapticPattern.transient(intensity: 1, sharpness: 1).ahapText(pretty: false))]).first?.stringValue)
        _ = try rig.call("PlayEffect", "sssd", ["org.example.App", "recording:hot", "impact.medium", "1"])
        #expect(observer.waitForSignal("DeviceRemoved") { $0.first?.stringValue == "recording:hot" } != nil)
        #expect(observer.waitForSignal("Ended") { $0.first?.stringValue == idle }?.last == .string("device-lost"), "its players go with the device")
        let added = try #require(observer.waitForSignal("DeviceAdded") { $0.first?.stringValue == "recording:hot" })
        #expect(added.count == 2 && added[1].entries["name"]?.stringValue == "Hotplugged LRA")
        #expect(observer.signals.contains { $0.member == "PropertiesChanged" && $0.arguments.count == 3 && $0.arguments[1].entries["Devices"] != nil })
        #expect((try rig.property("Devices") as? [String])?.contains("recording:hot") == true)
        _ = try rig.call("PlayEffect", "sssd", ["org.example.App", "recording:hot", "impact.medium", "1"])
        let recording = try rig.waitForRecording { $0.entries(for: "recording:hot").filter { $0.event == .open }.count == 2 && $0.transitions(for: "recording:hot").filter { $0 == "unplug" }.count == 2 }
        #expect(recording.transitions(for: "recording:hot").filter { $0 == "replug" }.count >= 1)
    }
}

/// The members of one interface in introspection XML: methods with their argument types,
/// properties with type and access, signals with their argument types (names and comments aside).
struct InterfaceShape: Equatable {
    var members: Set<String> = []

    init(xml: String, interface: String) {
        guard let start = xml.firstRange(of: "<interface name=\"\(interface)\">") else { return }
        let body = xml[start.upperBound...]
        let end = body.firstRange(of: "</interface>")?.lowerBound ?? body.endIndex
        var current: String?
        for rawLine in body[..<end].split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            func attribute(_ name: String) -> String? {
                guard let range = line.firstRange(of: "\(name)=\"") else { return nil }
                let rest = line[range.upperBound...]
                return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
            }
            if line.hasPrefix("<method ") || line.hasPrefix("<signal ") {
                current = (line.hasPrefix("<method") ? "method " : "signal ") + (attribute("name") ?? "?")
                members.insert(current!)
                if line.hasSuffix("/>") { current = nil }
            } else if line.hasPrefix("<arg "), let owner = current {
                members.insert("\(owner) \(attribute("direction") ?? "out") \(attribute("type") ?? "?")#\(members.filter { $0.hasPrefix(owner + " ") }.count)")
            } else if line.hasPrefix("<property ") {
                members.insert("property \(attribute("name") ?? "?") \(attribute("type") ?? "?") \(attribute("access") ?? "?")")
            } else if line.hasPrefix("</method") || line.hasPrefix("</signal") {
                current = nil
            }
        }
    }
}
