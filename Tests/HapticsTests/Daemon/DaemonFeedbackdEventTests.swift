import Foundation
import Haptics
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The lifetime of feedbackd events as feedbackd gives it (`fbd-event.c`, `fbd-feedback-dummy.c`):
/// silent `Dummy` feedbacks that last their duration, timeouts that let the run under way finish,
/// `FeedbackEnded` before the `EndFeedback` reply; events and vibrations that belong to the
/// connection that started them; and a service that ends with its bus.
@Suite("hapticsd: feedbackd events' lifetime and ownership")
struct DaemonFeedbackdEventTests {
    /// A theme in the shape of feedbackd's own test theme (its `tests/data/test.json`), plus a sound
    /// only event and a short dummy.
    static let theme = """
        {
          "name": "default",
          "profiles": [
            {"name": "full", "feedbacks": [
              {"type": "Dummy", "event-name": "test-dummy-0"},
              {"type": "Dummy", "event-name": "test-dummy-10", "duration": 10000},
              {"type": "Dummy", "event-name": "test-dummy-300ms", "duration": 300},
              {"type": "Sound", "event-name": "test-sound", "effect": "bell"},
              {"type": "Dummy", "event-name": "test-mixed", "duration": 600}
            ]},
            {"name": "quiet", "feedbacks": [
              {"type": "VibraRumble", "event-name": "test-mixed", "duration": 100, "magnitude": 0.8}
            ]},
            {"name": "silent"}
          ]
        }
        """

    static func rig() throws -> DaemonRig {
        let directory = TestSupport.makeTemporaryDirectory("feedback-theme")
        try theme.write(toFile: directory + "/test.json", atomically: true, encoding: .utf8)
        return try DaemonRig(arguments: ["--theme", directory + "/test.json"])
    }

    static func trigger(_ client: TestBusClient, _ event: String, timeout: Int32 = -1, app: String = "org.example.Events") throws(BusError) -> BusValue {
        try client.call(
            "TriggerFeedback", [.string(app), .string(event), .dictionary([]), .int32(timeout)], path: "/org/sigxcpu/Feedback",
            interface: "org.sigxcpu.Feedback", destination: "org.sigxcpu.Feedback")[0]
    }

    static func end(_ client: TestBusClient, _ id: BusValue) throws(BusError) {
        try client.call("EndFeedback", [id], path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback", destination: "org.sigxcpu.Feedback")
    }

    @Test("a Dummy of no length ends at once, naturally (0); a 10 s Dummy runs until EndFeedback, whose reply comes after FeedbackEnded(id, 2)")
    func dummies() throws {
        let rig = try Self.rig()
        let client = try TestBusClient(address: rig.address)
        let zero = try Self.trigger(client, "test-dummy-0")
        #expect(client.waitForSignal("FeedbackEnded") { $0.first == zero }?.last == .uint32(0))

        let ten = try Self.trigger(client, "test-dummy-10")
        client.pump(for: 0.5)
        #expect(client.waitForSignal("FeedbackEnded", timeout: 0) { $0.first == ten } == nil, "a 10 s dummy is still running")
        try Self.end(client, ten)
        // The call returned and processed what arrived with its reply: the signal came first.
        #expect(client.waitForSignal("FeedbackEnded", timeout: 0) { $0.first == ten }?.last == .uint32(2))
        #expect(try rig.recording().driveFrames("recording:lra").isEmpty, "a dummy drives nothing")
    }

    @Test("a timeout lets the run under way finish: a 300 ms Dummy with timeout 1 s ends naturally after 4 runs (1.2 s)")
    func timeoutFinishesTheRun() throws {
        let rig = try Self.rig()
        let client = try TestBusClient(address: rig.address)
        let start = HapticInstant.monotonicNow()
        let id = try Self.trigger(client, "test-dummy-300ms", timeout: 1)
        let ended = try #require(client.receivedSignal("FeedbackEnded", timeout: 10) { $0.first == id })
        #expect(ended.arguments.last == .uint32(0))
        let elapsed = ended.received.seconds(since: start)
        #expect(elapsed >= 1.19 && elapsed < 3, "ended after \(elapsed) s")
    }

    @Test("an event with a Dummy and a haptic feedback lasts the longer of the two; a Sound-only event is not found (hapticsd has no speaker)")
    func mixedAndSound() throws {
        let rig = try Self.rig()
        let client = try TestBusClient(address: rig.address)
        let start = HapticInstant.monotonicNow()
        let mixed = try Self.trigger(client, "test-mixed")
        let ended = try #require(client.receivedSignal("FeedbackEnded", timeout: 10) { $0.first == mixed })
        #expect(ended.arguments.last == .uint32(0))
        #expect(ended.received.seconds(since: start) >= 0.59, "the 600 ms dummy outlasts the 100 ms rumble")
        #expect(try rig.recording().driveFrames("recording:lra").contains { $0.isDriven }, "the rumble played")

        let sound = try Self.trigger(client, "test-sound")
        #expect(client.waitForSignal("FeedbackEnded") { $0.first == sound }?.last == .uint32(4_294_967_295))
    }

    @Test("EndFeedback from another connection leaves the event running; the client that triggered it ends it")
    func endFeedbackIsTheOwners() throws {
        let rig = try Self.rig()
        let owner = try TestBusClient(address: rig.address)
        let other = try TestBusClient(address: rig.address)
        let id = try Self.trigger(owner, "test-dummy-10")
        try Self.end(other, id)
        owner.pump(for: 0.3)
        #expect(owner.waitForSignal("FeedbackEnded", timeout: 0) { $0.first == id } == nil, "another connection ended it")
        try Self.end(owner, id)
        #expect(owner.waitForSignal("FeedbackEnded", timeout: 0) { $0.first == id }?.last == .uint32(2))
    }

    @Test("Vibrate with the same app id from another connection neither stops nor replaces a vibration")
    func vibrationIsTheConnections() throws {
        let rig = try DaemonRig()
        let owner = try TestBusClient(address: rig.address)
        let other = try TestBusClient(address: rig.address)
        func vibrate(_ client: TestBusClient, _ steps: [(Double, UInt32)]) throws(BusError) {
            try client.call(
                "Vibrate", [.string("org.example.Vibrate"), .array(element: "(du)", steps.map { .structure([.double($0.0), .uint32($0.1)]) })],
                path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback.Haptic", destination: "org.sigxcpu.Feedback")
        }
        try vibrate(owner, [(1, 10_000)])
        try vibrate(other, [])
        owner.pump(for: 0.3)
        #expect(try owner.call("GetStatistics").first?.entries.first { $0.key == "players" }?.value.unwrapped == .uint32(1))
        #expect(owner.waitForSignal("Ended", timeout: 0) == nil)
        #expect(!(try rig.recording().transitions(for: "recording:lra").contains("sleep")), "the vibration was stopped")
        try vibrate(owner, [])
        _ = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
    }

    @Test("players made with CreatePlayer go when their connection closes; events end with it")
    func nothingOutlivesItsClient() throws {
        let rig = try Self.rig()
        let observer = try TestBusClient(address: rig.address)
        do {
            let client = try TestBusClient(address: rig.address)
            let ahap = try HapticPattern.transient(intensity: 1, sharpness: 1).ahapText(pretty: false)
            for _ in 0..<20 { try client.call("CreatePlayer", [.string("org.example.Gone"), .string(""), .string(ahap)]) }
            _ = try Self.trigger(client, "test-dummy-10")
            #expect(try observer.call("GetStatistics").first?.entries.first { $0.key == "players" }?.value.unwrapped == .uint32(20))
        }
        #expect(observer.waitForSignal("FeedbackEnded") != nil, "the departed client's event ended")
        let gone = ChildProcess.waitUntil(timeout: 10) {
            (try? observer.call("GetStatistics"))?.first?.entries.first { $0.key == "players" }?.value.unwrapped == .uint32(0)
        }
        #expect(gone, "players stayed after their client left")
    }

    @Test("the bus going away ends hapticsd (status 1) with every actuator stopped and closed")
    func busLost() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        let long = try HapticPattern.continuous(duration: 10, intensity: 1, sharpness: 0.2)
        try client.call("PlayPattern", [.string("org.example.Long"), .string("recording:lra"), .string(long.ahapText(pretty: false)), .double(1), .dictionary([])])
        client.pump(for: 0.2)
        try rig.killBus()
        #expect(try rig.waitForDaemonExit(timeout: 20) == .exited(1), "\(rig.daemonLog)")
        let recording = try rig.recording()
        #expect(recording.driveFrames("recording:lra").first?.isDriven == true)
        #expect(recording.driveFrames("recording:lra").last?.isDriven == false)
        #expect(recording.transitions(for: "recording:lra").last == "close", "\(recording.transitions(for: "recording:lra"))")
        #expect(rig.daemonLog.contains("lost the connection"), "\(rig.daemonLog)")
    }
}
