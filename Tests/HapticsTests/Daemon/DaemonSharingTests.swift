import Foundation
import Haptics
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several apps on one service: the mixing rule, policy changes while they play, throttling per app,
/// and clients that misbehave.
@Suite("hapticsd: apps sharing devices")
struct DaemonSharingTests {
    static func continuous(_ intensity: Double, duration: Double) throws -> BusValue {
        .string(try HapticPattern.continuous(duration: duration, intensity: intensity, sharpness: 0.5).ahapText(pretty: false))
    }

    @Test("two apps on one device at once: each channel plays the stronger of the two (the engine's per-channel maximum), then the one left")
    func mixing() throws {
        let rig = try DaemonRig()
        let quiet = try TestBusClient(address: rig.address)
        let loud = try TestBusClient(address: rig.address)
        try quiet.call("PlayPattern", [.string("org.example.Quiet"), .string("recording:lra"), try Self.continuous(0.3, duration: 0.6), .double(1), .dictionary([])])
        quiet.pump(for: 0.1)
        let overlapStart = HapticInstant.monotonicNow()
        let loudPath = try #require(
            try loud.call("PlayPattern", [.string("org.example.Loud"), .string("recording:lra"), try Self.continuous(0.8, duration: 0.2), .double(1), .dictionary([])]).first)
        #expect(loud.waitForSignal("Ended") { $0.first == loudPath } != nil)
        let overlapEnd = HapticInstant.monotonicNow()
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let frames = recording.frames(for: "recording:lra")
        let quietAlone = try InProcessReference.pattern(try HapticPattern.continuous(duration: 0.05, intensity: 0.3, sharpness: 0.5))[0]
        let loudAlone = try InProcessReference.pattern(try HapticPattern.continuous(duration: 0.05, intensity: 0.8, sharpness: 0.5))[0]
        let silence = [ChannelDrive](repeating: .off, count: 1)
        // Frames change only when the mix does: the first app, both (the stronger), the first again, silence.
        #expect(frames.map(\.frame.channels) == [quietAlone, loudAlone, quietAlone, silence], "\(frames.map(\.frame.channels))")
        let loudFrame = try #require(frames.first { $0.frame.channels == loudAlone })
        #expect(loudFrame.received >= overlapStart && loudFrame.received < overlapEnd)
    }

    @Test("the policy changed while apps play: the global scale and a per-app mute reach the playing patterns at the next frame")
    func policyWhilePlaying() throws {
        let rig = try DaemonRig()
        let app = try TestBusClient(address: rig.address)
        let admin = try TestBusClient(address: rig.address)
        let path = try #require(
            try app.call("PlayPattern", [.string("org.example.Player"), .string("recording:lra"), try Self.continuous(1, duration: 5), .double(1), .dictionary([])]).first?.stringValue)
        app.pump(for: 0.1)
        var marks: [HapticInstant] = [.monotonicNow()]
        try admin.call("Set", [.string("org.swifthaptics.Haptics1"), .string("IntensityScale"), .variant(.double(0.5))], interface: "org.freedesktop.DBus.Properties")
        admin.pump(for: 0.1)
        marks.append(.monotonicNow())
        try admin.call("SetAppPolicy", [.string("org.example.Player"), .dictionary([("enabled", .bool(false))])])
        admin.pump(for: 0.1)
        marks.append(.monotonicNow())
        try admin.call("SetAppPolicy", [.string("org.example.Player"), .dictionary([("intensity-scale", .double(0.5))])])
        admin.pump(for: 0.1)
        marks.append(.monotonicNow())
        try app.player(path, "Stop", [.uint64(0)])
        let frames = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }.frames(for: "recording:lra")
        func drive(before index: Int) throws -> Double { try #require(frames.last { $0.received < marks[index] }).frame.channels[0].amplitude }
        let full = try drive(before: 0), half = try drive(before: 1), muted = try drive(before: 2), quarter = try drive(before: 3)
        #expect(full > 0.9)
        #expect(abs(half - full / 2) < 0.02, "global scale 0.5: \(full) → \(half)")
        #expect(muted == 0, "the app turned off: silent while it plays on")
        #expect(abs(quarter - full / 4) < 0.02, "global 0.5 × app 0.5: \(quarter)")
    }

    @Test("per-app throttling: one app's flood is coalesced and refused beyond its rate, another app's feedback plays at once")
    func throttling() throws {
        let rig = try DaemonRig(arguments: ["--max-calls-per-second", "200"])
        let flooder = try TestBusClient(address: rig.address)
        let neighbour = try TestBusClient(address: rig.address)
        var dispositions: [String: Int] = [:]
        var refusals: [String] = []
        for _ in 0..<400 {
            do throws(BusError) {
                let reply = try flooder.call("PlayEffect", [.string("org.example.Flood"), .string("recording:lra"), .string("selection"), .double(1)])
                dispositions[reply[1].stringValue ?? "?", default: 0] += 1
            } catch {
                refusals.append(error.name)
            }
        }
        #expect(dispositions["played"] ?? 0 >= 1)
        #expect(dispositions["coalesced"] ?? 0 > dispositions["played"] ?? 0, "\(dispositions)")
        #expect(!refusals.isEmpty && refusals.allSatisfy { $0 == "org.swifthaptics.Haptics1.Error.Throttled" }, "\(Set(refusals))")
        let start = HapticInstant.monotonicNow()
        let reply = try neighbour.call("PlayEffect", [.string("org.example.Neighbour"), .string("recording:lra"), .string("impact.heavy"), .double(1)])
        #expect(reply[1] == .string("played"), "another app's guard and rate are its own")
        #expect(HapticInstant.monotonicNow().seconds(since: start) < 0.5)
        let statistics = try neighbour.call("GetStatistics")[0].entries
        let accounted = ["played", "deferred", "coalesced", "refused"].compactMap { statistics[$0]?.unwrapped.doubleValue }.reduce(0, +)
        #expect(accounted == 401, "every call accounted for: \(statistics)")
    }

    @Test("a stuck client (stopped with SIGSTOP, its players playing) does not block the service for others")
    func stuckClient() throws {
        let rig = try DaemonRig()
        let file = rig.directory + "/long.ahap"
        try HapticPattern.continuous(duration: 5, intensity: 0.5, sharpness: 0.5).writeAHAP(toFile: file)
        let stuck = try rig.launch(["/usr/bin/python3", TestSupport.packageRoot + "/Examples/Python/haptics_play.py", "pattern", file, "--loop", "--device", "recording:gamepad"])
        #expect(stuck.waitForOutput { $0.contains("playing as") }, "\(stuck.output)")
        kill(stuck.pid, SIGSTOP)
        defer { kill(stuck.pid, SIGKILL) }
        let other = try TestBusClient(address: rig.address)
        let start = HapticInstant.monotonicNow()
        for _ in 0..<50 {
            try other.call("PlayEffect", [.string("org.example.Other"), .string("recording:lra"), .string("selection"), .double(1)])
        }
        #expect(HapticInstant.monotonicNow().seconds(since: start) < 5, "50 calls answered while another client is stuck")
        #expect(try other.get("Version") == .string("1.0"))
    }

    @Test("bad input through gdbus: each refusal has a specific error name and a message naming the field, the value and the range; nothing is left driving")
    func badInput() throws {
        let rig = try DaemonRig()
        let cases: [(String, [String], String, String)] = [
            ("PlayEffect", ["org.example.App", "", "impact.enormous", "1"], "UnknownEffect", "no effect 'impact.enormous'"),
            ("PlayEffect", ["org.example.App", "recording:nope", "selection", "1"], "UnknownDevice", "no device 'recording:nope'; devices:"),
            ("PlayEffect", ["org.example.App", "", "selection", "1.5"], "InvalidValue", "intensity: 1.5 is outside 0…1"),
            ("PlayEffect", ["org example", "", "selection", "1"], "InvalidAppId", "app_id: 'org example' is not a valid application id"),
            ("PlayPattern", ["org.example.App", "", "{\"Pattern\": [", "1", "{}"], "InvalidPattern", "ahap: "),
            ("PlayPattern", ["org.example.App", "", "{\"Pattern\": [{\"Event\": {\"Time\": -1, \"EventType\": \"HapticTransient\"}}]}", "1", "{}"], "InvalidPattern", "Time"),
            ("PlayPattern", ["org.example.App", "", "{\"Pattern\": []}", "1", "{'repeat': <true>}"], "InvalidArgument", "unknown option 'repeat'"),
            ("PlayPattern", ["org.example.App", "", "{\"Pattern\": []}", "1", "{'loop': <1>}"], "InvalidArgument", "options.loop: expected a boolean (b), found 'i'"),
            ("PlayPattern", ["org.example.App", "", "{\"Pattern\": []}", "1", "{'loop-end': <7200.0>}"], "InvalidValue", "options.loop-end: 7200.0 is outside 0…3600"),
            ("CreatePlayer", ["org.example.App", "", "not json"], "InvalidPattern", "ahap: "),
            ("SetAppPolicy", ["org.example.App", "{'volume': <1.0>}"], "InvalidArgument", "unknown key 'volume'"),
            ("SetAppPolicy", ["org.example.App", "{'intensity-scale': <2.0>}"], "InvalidValue", "policy.intensity-scale: 2.0 is outside 0…1"),
            ("GetDevice", ["recording:nope"], "UnknownDevice", "no device 'recording:nope'"),
            ("Prepare", ["", "recording:lra"], "InvalidAppId", "app_id: ''"),
        ]
        for (member, arguments, name, message) in cases {
            let (status, output) = try rig.gdbus(member, arguments)
            #expect(status != 0, "\(member) \(arguments) was accepted: \(output)")
            #expect(output.contains("org.swifthaptics.Haptics1.Error." + name), "\(member) \(arguments): \(output)")
            #expect(output.contains(message), "\(member) \(arguments): \(output)")
        }
        let property = try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "IntensityScale", "d", "nan"])
        #expect(property.status != 0 && property.output.contains("IntensityScale: NaN is outside 0…1"), "\(property.output)")
        let unknownDefault = try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "DefaultDevice", "s", "recording:nope"])
        #expect(unknownDefault.status != 0 && unknownDefault.output.contains("no device 'recording:nope'"))
        let readOnly = try rig.busctl(["set-property", "org.swifthaptics.Haptics1", "/org/swifthaptics/Haptics1", "org.swifthaptics.Haptics1", "Version", "s", "2"])
        #expect(readOnly.status != 0)

        // Wrong argument types never reach a handler: sd-bus checks the signature.
        let client = try TestBusClient(address: rig.address)
        do throws(BusError) {
            try client.call("PlayEffect", [.string("org.example.App"), .string(""), .string("selection")])
            Issue.record("a call with a missing argument was accepted")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs" && error.message.contains("expecting 'sssd'"), "\(error)")
        }
        do throws(BusError) {
            try client.call("PlayEffect", [.string("org.example.App"), .string(""), .string("selection"), .string("1")])
            Issue.record("a string intensity was accepted")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
        }
        do throws(BusError) {
            try client.call("PlayEffect", [.string("org.example.App"), .string(""), .string("selection"), .double(.nan)])
            Issue.record("NaN was accepted")
        } catch {
            #expect(error.name == "org.swifthaptics.Haptics1.Error.InvalidValue" && error.message.contains("intensity: NaN"), "\(error)")
        }
        for (app, intensity, name, message) in [
            ("org.example.App", -Double.infinity, "InvalidValue", "intensity: -inf is outside 0…1"),
            ("-app", 1, "InvalidAppId", "not starting with '.', '-' or a digit"),
            (String(repeating: "a", count: 256), 1, "InvalidAppId", "1…255 characters"),
        ] {
            do throws(BusError) {
                try client.call("PlayEffect", [.string(app), .string(""), .string("selection"), .double(intensity)])
                Issue.record("\(app) \(intensity) was accepted")
            } catch {
                #expect(error.name == "org.swifthaptics.Haptics1.Error." + name && error.message.contains(message), "\(error)")
            }
        }
        // One connection speaks for a bounded number of apps, so no client grows the service's state without end.
        var refusedApp: BusError?
        for index in 0..<70 where refusedApp == nil {
            do throws(BusError) {
                try client.call("Prepare", [.string("org.example.Many\(index)"), .string("")])
                try client.call("PlayEffect", [.string("org.example.Many\(index)"), .string(""), .string("selection"), .double(1)])
            } catch {
                refusedApp = error
            }
        }
        #expect(refusedApp?.name == "org.swifthaptics.Haptics1.Error.InvalidArgument" && refusedApp?.message.contains("already spoke for 64 app ids") == true, "\(String(describing: refusedApp))")
        #expect(try client.get("Version") == .string("1.0"), "the service is alive")
        usleep(200_000)
        for device in ["recording:lra", "recording:gamepad"] {
            #expect((try? rig.recording().driveFrames(device).last?.isDriven) ?? false == false, "\(device) is not left driving")
        }
    }
}
