import Foundation
import Haptics
import HapticsTools
import Testing

/// Each rule of the power model, pinned on the manual clock against the real recording backend:
/// the state the core reports, and the wake/sleep calls the backend actually received.
@Suite("Power model")
struct PowerModelTests {
    let policy = PowerPolicy(prepareTimeout: 2, preparedCap: 5)

    /// A recording LRA under the power model on a manual clock, and a way to read its transitions.
    final class Rig {
        let clock = ManualClock()
        let output: String
        let system: HapticSystem
        let device: HapticDevice

        init(policy: PowerPolicy) throws {
            output = TestSupport.makeTemporaryDirectory("power") + "/rec.jsonl"
            system = TestSupport.recordingSystem(devices: "lra", output: output, clock: clock, policy: policy)
            device = try system.openDevice("recording:lra")
        }

        /// The backend's wake/sleep/stop calls so far (flushes by closing when `finish`).
        func transitions(finish: Bool = true) throws -> [String] {
            if finish { device.close() }
            return try Recording(contentsOf: output).transitions(for: "recording:lra").filter { $0 != "open" && $0 != "close" }
        }

        func trigger(for seconds: Double = 0.05) throws {
            try device.beginActivity()
            try device.submit(DriveFrame(time: clock.now(), channels: [ChannelDrive(amplitude: 1)]))
            clock.advance(bySeconds: seconds)
            device.endActivity()
        }
    }

    @Test("an opened device starts idle and the backend sees no wake")
    func startsIdle() throws {
        let rig = try Rig(policy: policy)
        #expect(rig.device.powerState == .idle)
        #expect(try rig.transitions() == [])
    }

    @Test("prepare wakes the device, which idles when the timeout passes")
    func prepareTimesOut() throws {
        let rig = try Rig(policy: policy)
        let hold = rig.device.hold()
        hold.prepare()
        #expect(rig.device.powerState == .prepared)
        rig.clock.advance(bySeconds: 1.999)
        #expect(rig.device.powerState == .prepared)
        rig.clock.advance(bySeconds: 0.001)
        #expect(rig.device.powerState == .idle)
        #expect(try rig.transitions() == ["wake", "sleep"])
        _ = hold
    }

    @Test("a trigger on a prepared device does not wake it again, and it idles after the trigger")
    func idleAfterTrigger() throws {
        let rig = try Rig(policy: policy)
        let hold = rig.device.hold()
        hold.prepare()
        rig.clock.advance(bySeconds: 0.5)
        try rig.trigger()
        #expect(rig.device.powerState == .idle)
        #expect(try rig.transitions() == ["wake", "stop", "sleep"])
    }

    @Test("a trigger on an idle device wakes it first (the slow path)")
    func triggerFromIdle() throws {
        let rig = try Rig(policy: policy)
        try rig.device.beginActivity()
        #expect(rig.device.powerState == .active)
        rig.device.endActivity()
        #expect(rig.device.powerState == .idle)
        #expect(try rig.transitions() == ["wake", "stop", "sleep"])
    }

    @Test("prepare during a trigger keeps the device prepared afterwards, for a timeout from that prepare")
    func prepareDuringTrigger() throws {
        let rig = try Rig(policy: policy)
        let hold = rig.device.hold()
        try rig.device.beginActivity()
        hold.prepare()
        rig.clock.advance(bySeconds: 0.5)
        rig.device.endActivity()
        #expect(rig.device.powerState == .prepared)
        rig.clock.advance(bySeconds: 1.499)
        #expect(rig.device.powerState == .prepared)
        rig.clock.advance(bySeconds: 0.001)
        #expect(rig.device.powerState == .idle)
        #expect(try rig.transitions() == ["wake", "stop", "sleep"])
    }

    @Test("repeated prepares extend the prepared state only up to the cap; later prepares are ignored until a trigger")
    func capOnRepeatedPrepares() throws {
        let rig = try Rig(policy: policy)
        let hold = rig.device.hold()
        // Prepare every second: without the cap this would keep the device awake forever.
        for _ in 0..<7 {
            hold.prepare()
            rig.clock.advance(bySeconds: 1)
        }
        #expect(rig.device.powerState == .idle)
        #expect(rig.device.powerModel.preparesSuspended)
        hold.prepare()
        #expect(rig.device.powerState == .idle, "prepares after the cap are ignored")
        #expect(try rig.transitions(finish: false) == ["wake", "sleep"])

        // A trigger re-enables prepare.
        try rig.trigger()
        hold.prepare()
        #expect(rig.device.powerState == .prepared)
        // Closing a prepared device stops it and puts it to sleep.
        #expect(try rig.transitions() == ["wake", "sleep", "wake", "stop", "sleep", "wake", "stop", "sleep"])
    }

    @Test("the cap ends the prepared state at exactly cap seconds after the first prepare")
    func capDeadlineIsExact() throws {
        let rig = try Rig(policy: policy)
        let hold = rig.device.hold()
        let start = rig.clock.now()
        hold.prepare()
        rig.clock.advance(bySeconds: 1.5)
        hold.prepare()
        rig.clock.advance(bySeconds: 1.5)
        hold.prepare()
        rig.clock.advance(bySeconds: 1.5)
        hold.prepare()  // at 4.5 s: the deadline would be 6.5 s, the cap holds it to 5 s
        #expect(rig.device.powerModel.preparedUntil == start.advanced(bySeconds: 5))
        rig.clock.advance(bySeconds: 0.499)
        #expect(rig.device.powerState == .prepared)
        rig.clock.advance(bySeconds: 0.001)
        #expect(rig.device.powerState == .idle)
    }

    @Test("a prepare after a plain timeout (cap not reached) starts a new run")
    func newRunAfterTimeout() throws {
        let rig = try Rig(policy: policy)
        let hold = rig.device.hold()
        hold.prepare()
        rig.clock.advance(bySeconds: 3)
        #expect(rig.device.powerState == .idle)
        rig.clock.advance(bySeconds: 30)
        hold.prepare()
        #expect(rig.device.powerState == .prepared)
        #expect(try rig.transitions() == ["wake", "sleep", "wake", "stop", "sleep"])
    }

    @Test("releasing the last holder idles a prepared device at once; other holders keep it")
    func lastHolderReleased() throws {
        let rig = try Rig(policy: policy)
        let first = rig.device.hold()
        let second = rig.device.hold()
        first.prepare()
        #expect(rig.device.powerModel.holders == 2)
        first.release()
        #expect(rig.device.powerState == .prepared, "another holder still holds it")
        second.prepare()
        second.release()
        #expect(rig.device.powerState == .idle)
        #expect(rig.device.powerModel.holders == 0)
        #expect(try rig.transitions() == ["wake", "sleep"])
    }

    @Test("a hold released by deinitialisation counts as a release")
    func holdDeinit() throws {
        let rig = try Rig(policy: policy)
        do {
            let hold = rig.device.hold()
            hold.prepare()
            #expect(rig.device.powerState == .prepared)
        }
        #expect(rig.device.powerState == .idle)
    }

    @Test("releasing the last holder during playback idles the device when the playback ends")
    func releaseWhileActive() throws {
        let rig = try Rig(policy: policy)
        let hold = rig.device.hold()
        try rig.device.beginActivity()
        hold.prepare()
        hold.release()
        #expect(rig.device.powerState == .active)
        rig.device.endActivity()
        #expect(rig.device.powerState == .idle, "the preparation went with the last holder")
    }

    @Test("several holders share one device and one power model")
    func sharedDevice() throws {
        let rig = try Rig(policy: policy)
        let again = try rig.system.openDevice("recording:lra")
        #expect(again === rig.device)
        let a = rig.device.hold()
        let b = again.hold()
        a.prepare()
        b.prepare()
        rig.clock.advance(bySeconds: 2)
        #expect(try rig.transitions(finish: false) == ["wake", "sleep"], "one wake and one sleep for both holders")
        _ = (a, b)
    }

    @Test("overlapping playbacks keep the device active until the last ends")
    func overlappingPlaybacks() throws {
        let rig = try Rig(policy: policy)
        try rig.device.beginActivity()
        try rig.device.beginActivity()
        rig.device.endActivity()
        #expect(rig.device.powerState == .active)
        rig.device.endActivity()
        #expect(rig.device.powerState == .idle)
        #expect(try rig.transitions() == ["wake", "stop", "stop", "sleep"])
    }

    @Test("the model alone: each transition's effects")
    func pureModel() {
        var model = PowerModel(policy: policy)
        let t0 = HapticInstant(seconds: 100)
        #expect(model.prepare(at: t0) == [.wake, .setDeadline(t0.advanced(bySeconds: 2))])
        #expect(model.prepare(at: t0.advanced(bySeconds: 1)) == [.setDeadline(t0.advanced(bySeconds: 3))])
        #expect(model.beginActivity(at: t0.advanced(bySeconds: 1.5)) == [.setDeadline(nil)])
        #expect(model.endActivity(at: t0.advanced(bySeconds: 1.6)) == [.setDeadline(nil), .sleep])
        #expect(model.deadlineReached(at: t0.advanced(bySeconds: 3)) == [], "a stale deadline does nothing")
        #expect(model.state == .idle)
    }
}
