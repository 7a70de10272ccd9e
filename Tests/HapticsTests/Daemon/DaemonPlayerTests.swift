import Foundation
import Haptics
import HapticsBus
import HapticsSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// org.swifthaptics.Haptics1.Player and the play methods through an sd-bus client that keeps its
/// connection (players belong to the connection that made them), every frame read back.
@Suite("hapticsd: players through a D-Bus client")
struct DaemonPlayerTests {
    static let app = BusValue.string("org.example.Players")

    static func ahap(_ pattern: HapticPattern) -> BusValue { .string(pattern.ahapText(pretty: false)) }

    @Test("CreatePlayer, Start: the pattern's frames as in-process, State and Position, and Ended(finished) for its owner only")
    func createAndStart() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        let other = try TestBusClient(address: rig.address)
        let pattern = try HapticPattern.continuous(duration: 0.2, intensity: 0.8, sharpness: 0.5)
        let path = try #require(try client.call("CreatePlayer", [Self.app, .string("recording:lra"), Self.ahap(pattern)]).first?.stringValue)
        #expect(try client.get("OneShot", path: path, interface: "org.swifthaptics.Haptics1.Player") == .bool(false))
        #expect(try client.get("Duration", path: path, interface: "org.swifthaptics.Haptics1.Player") == .double(0.2))
        #expect(try client.get("Device", path: path, interface: "org.swifthaptics.Haptics1.Player") == .string("recording:lra"))
        #expect(try client.get("AppId", path: path, interface: "org.swifthaptics.Haptics1.Player") == Self.app)
        #expect(try client.get("State", path: path, interface: "org.swifthaptics.Haptics1.Player") == .string("idle"))
        try client.player(path, "Start", [.uint64(0)])
        #expect(try client.get("State", path: path, interface: "org.swifthaptics.Haptics1.Player") == .string("playing"))
        let position = try client.get("Position", path: path, interface: "org.swifthaptics.Haptics1.Player").doubleValue ?? -1
        #expect((0..<0.2).contains(position), "position \(position)")
        let ended = try #require(client.waitForSignal("Ended") { $0.first?.stringValue == path })
        #expect(ended.last == .string("finished"))
        other.pump(for: 0.1)
        #expect(!other.signals.contains { $0.member == "Ended" }, "Ended goes to the player's owner only")
        #expect(try client.get("State", path: path, interface: "org.swifthaptics.Haptics1.Player") == .string("finished"))
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").map(\.channels) == (try InProcessReference.pattern(pattern)))
    }

    @Test("Loop, Intensity, Muted, Pause, Seek, Resume, SendParameters, ScheduleParameterCurve, Rate, LoopEnd and Stop change what the device gets")
    func controls() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        let pattern = try HapticPattern.continuous(duration: 1, intensity: 1, sharpness: 0.5)
        let path = try #require(try client.call("CreatePlayer", [Self.app, .string("recording:lra"), Self.ahap(pattern)]).first?.stringValue)
        let player = "org.swifthaptics.Haptics1.Player"
        var marks: [String: HapticInstant] = [:]
        func step(_ name: String, _ body: () throws -> Void) rethrows {
            try body()
            client.pump(for: 0.12)
            marks[name] = .monotonicNow()
        }
        try client.setPlayer(path, "Loop", .bool(true))
        #expect(try client.get("Loop", path: path, interface: player) == .bool(true))
        try step("full") { try client.player(path, "Start", [.uint64(0)]) }
        try step("half") { try client.setPlayer(path, "Intensity", .double(0.5)) }
        #expect(try client.get("Intensity", path: path, interface: player) == .double(0.5))
        try step("muted") { try client.setPlayer(path, "Muted", .bool(true)) }
        #expect(try client.get("Muted", path: path, interface: player) == .bool(true))
        try step("unmuted") { try client.setPlayer(path, "Muted", .bool(false)) }
        try step("paused") { try client.player(path, "Pause", [.uint64(0)]) }
        #expect(try client.get("State", path: path, interface: player) == .string("paused"))
        let frozen = try client.get("Position", path: path, interface: player)
        client.pump(for: 0.05)
        #expect(try client.get("Position", path: path, interface: player) == frozen, "a paused player keeps its place")
        try client.player(path, "Seek", [.double(0.5)])
        #expect(abs((try client.get("Position", path: path, interface: player).doubleValue ?? 0) - 0.5) < 1e-6)
        try step("resumed") { try client.player(path, "Resume", [.uint64(0)]) }
        try step("quarter") {
            try client.player(path, "SendParameters", [.array(element: "(sdd)", [.structure([.string("HapticIntensityControl"), .double(0.5), .double(0)])]), .uint64(0)])
        }
        try step("curve") {
            try client.player(
                path, "ScheduleParameterCurve",
                [.string("HapticIntensityControl"), .array(element: "(dd)", [.structure([.double(0), .double(1)]), .structure([.double(0.05), .double(0.1)])]), .uint64(0)])
        }
        try client.setPlayer(path, "Rate", .double(2))
        #expect(try client.get("Rate", path: path, interface: player) == .double(2))
        try client.setPlayer(path, "LoopEnd", .double(0.5))
        #expect(try client.get("LoopEnd", path: path, interface: player) == .double(0.5))
        try step("stopped") { try client.player(path, "Stop", [.uint64(0)]) }
        #expect(client.waitForSignal("Ended") { $0.first?.stringValue == path }?.last == .string("stopped"))

        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let frames = recording.frames(for: "recording:lra")
        /// The drive once the step `mark` had taken effect (the last frame before the next step).
        func amplitude(after mark: String) throws -> Double {
            let instant = try #require(marks[mark])
            return try #require(frames.last { $0.received < instant }).frame.channels[0].amplitude
        }
        let full = try amplitude(after: "full"), half = try amplitude(after: "half")
        #expect(full > 0.5 && half > 0 && half < full * 0.75, "full \(full), half \(half)")
        #expect(try amplitude(after: "muted") == 0, "muted: silent")
        #expect(try amplitude(after: "unmuted") == half, "unmuted: back to the same drive")
        #expect(try amplitude(after: "paused") == 0, "paused: silent")
        #expect(try amplitude(after: "resumed") == half)
        let quarter = try amplitude(after: "quarter")
        #expect(quarter > 0 && quarter < half * 0.75, "half \(half), with HapticIntensityControl 0.5: \(quarter)")
        let curved = try amplitude(after: "curve")
        #expect(curved > 0 && curved < quarter, "the curve ends at 0.1 of the intensity: \(curved)")
        #expect(frames.filter { $0.received > marks["quarter"]! && $0.received < marks["curve"]! }.count >= 5, "the curve ramps frame by frame")
        #expect(frames.last?.frame.isDriven == false, "stopped: the last frame is silence")
    }

    @Test("PlayPattern: a one-shot player that starts at at-usec and goes when it ends; loop until StopAll")
    func playPattern() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        let tap = try HapticPattern.transient(intensity: 1, sharpness: 0.5)
        let at = HapticInstant.monotonicNow().advanced(bySeconds: 0.3)
        let path = try #require(
            try client.call(
                "PlayPattern", [Self.app, .string("recording:lra"), Self.ahap(tap), .double(1), .dictionary([("at-usec", .uint64(at.nanoseconds / 1000))])]
            ).first?.stringValue)
        #expect(client.waitForSignal("Ended") { $0.first?.stringValue == path }?.last == .string("finished"))
        do throws(BusError) {
            _ = try client.get("State", path: path, interface: "org.swifthaptics.Haptics1.Player")
            Issue.record("a one-shot player that ended is gone")
        } catch {
            #expect(error.name == "org.swifthaptics.Haptics1.Error.UnknownPlayer", "\(error)")
        }
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let first = try #require(recording.frames(for: "recording:lra").first { $0.frame.isDriven })
        #expect(first.received >= HapticInstant(nanoseconds: at.nanoseconds / 1000 * 1000), "not before at-usec")
        #expect(first.received.seconds(since: at) < 0.1, "started \(first.received.seconds(since: at)) s after at-usec")

        let looping = try #require(
            try client.call(
                "PlayPattern",
                [Self.app, .string("recording:gamepad"), Self.ahap(try HapticPattern.continuous(duration: 0.1, intensity: 1, sharpness: 0)), .double(1), .dictionary([("loop", .bool(true))])]
            ).first?.stringValue)
        client.pump(for: 0.3)
        #expect(try client.get("State", path: looping, interface: "org.swifthaptics.Haptics1.Player") == .string("playing"), "still looping after 3 runs")
        try client.call("StopAll")
        #expect(client.waitForSignal("Ended") { $0.first?.stringValue == looping }?.last == .string("stopped"))
    }

    @Test("admission before work: PlayPattern and CreatePlayer check the app id and the caller's rate before they parse the document")
    func admissionBeforeParsing() throws {
        let rig = try DaemonRig(arguments: ["--max-calls-per-second", "5"])
        let client = try TestBusClient(address: rig.address)
        let broken = String(repeating: "{", count: 100_000)
        for call in ["PlayPattern", "CreatePlayer"] {
            let arguments: [BusValue] = call == "PlayPattern"
                ? [.string("not an app id"), .string(""), .string(broken), .double(1), .dictionary([])]
                : [.string("not an app id"), .string(""), .string(broken)]
            do throws(BusError) {
                try client.call(call, arguments)
                Issue.record("\(call) was accepted")
            } catch {
                #expect(error.name == "org.swifthaptics.Haptics1.Error.InvalidAppId", "\(call): \(error)")
            }
        }
        // Broken documents count against the caller's rate like any call: the limiter refuses them.
        var names: [String] = []
        for _ in 0..<12 {
            do throws(BusError) {
                try client.call("CreatePlayer", [Self.app, .string(""), .string(broken)])
            } catch {
                names.append(error.name)
            }
        }
        #expect(names.contains("org.swifthaptics.Haptics1.Error.Throttled"), "\(names)")
    }

    @Test("players belong to their connection: NotOwner for another client, UnknownPlayer once released or never made")
    func ownership() throws {
        let rig = try DaemonRig()
        let owner = try TestBusClient(address: rig.address)
        let stranger = try TestBusClient(address: rig.address)
        let path = try #require(
            try owner.call("CreatePlayer", [Self.app, .string(""), Self.ahap(try HapticPattern.transient(intensity: 1, sharpness: 1))]).first?.stringValue)
        let attempts: [(String, () throws(BusError) -> Void)] = [
            ("Start", { () throws(BusError) in try stranger.player(path, "Start", [.uint64(0)]) }),
            ("Muted", { () throws(BusError) in try stranger.setPlayer(path, "Muted", .bool(true)) }),
        ]
        for (label, attempt) in attempts {
            do throws(BusError) {
                try attempt()
                Issue.record("another client's \(label) controlled the player")
            } catch {
                #expect(error.name == "org.swifthaptics.Haptics1.Error.NotOwner")
                #expect(error.message.contains(path))
            }
        }
        try owner.player(path, "Release")
        do throws(BusError) {
            try owner.player(path, "Start", [.uint64(0)])
            Issue.record("a released player started")
        } catch {
            #expect(error.name == "org.swifthaptics.Haptics1.Error.UnknownPlayer")
        }
        do throws(BusError) {
            try owner.player("/org/swifthaptics/Haptics1/player/999999", "Stop", [.uint64(0)])
            Issue.record("a player that never existed stopped")
        } catch {
            #expect(error.name == "org.swifthaptics.Haptics1.Error.UnknownPlayer")
            #expect(error.message.contains("/org/swifthaptics/Haptics1/player/999999"))
        }
    }

    @Test("the overuse guard: effects of one kind closer than its interval are deferred, then coalesced (the newest plays), every call counted")
    func overuseGuard() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        try client.call(
            "Set", [.string("org.swifthaptics.Haptics1"), .string("MinimumIntervals"), .variant(.array(element: "{sd}", [.structure([.string("impact"), .double(0.2)])]))],
            interface: "org.freedesktop.DBus.Properties")
        func play(_ effect: String) throws -> (String, String) {
            let reply = try client.call("PlayEffect", [Self.app, .string("recording:lra"), .string(effect), .double(1)])
            return (reply[0].stringValue ?? "", reply[1].stringValue ?? "")
        }
        let first = try play("impact.light"), second = try play("impact.heavy"), third = try play("impact.medium")
        #expect(first.1 == "played")
        #expect(second.1 == "deferred")
        #expect(third.1 == "coalesced")
        #expect(third.0 == second.0, "a coalesced call answers with the handle of the play it joined")
        #expect(client.waitForSignal("Ended") { $0.first?.stringValue == second.0 }?.last == .string("finished"))
        let recording = try rig.waitForRecording { $0.frames(for: "recording:lra").filter(\.frame.isDriven).count >= 2 && $0.transitions(for: "recording:lra").last == "sleep" }
        let taps = recording.frames(for: "recording:lra").filter(\.frame.isDriven)
        #expect(taps.map(\.frame.channels) == [try InProcessReference.effect("impact.light")[0], try InProcessReference.effect("impact.medium")[0]], "the newest request wins")
        #expect(taps[1].received.seconds(since: taps[0].received) >= 0.19)
        let statistics = try client.call("GetStatistics")[0].entries
        #expect(statistics["played"]?.unwrapped == .uint64(1))
        #expect(statistics["deferred"]?.unwrapped == .uint64(1))
        #expect(statistics["coalesced"]?.unwrapped == .uint64(1))
        #expect(statistics["calls"]?.unwrapped == .uint64(3))
    }
}
