import Foundation
import Haptics
import HapticsTools
import Synchronization
import Testing

@Suite("Engine")
struct EngineTests {
    @Test("currentTime is the monotonic clock, in seconds")
    func currentTime() throws {
        let system = TestSupport.recordingSystem(devices: "lra")
        let engine = try HapticEngine(devices: [try system.openDevice("recording:lra")], profileStore: nil, policy: HapticPolicy())
        let before = HapticInstant.monotonicNow().seconds
        let now = engine.currentTime
        let after = HapticInstant.monotonicNow().seconds
        #expect(before <= now && now <= after)
    }

    @Test("the engine triggers the power model: wake before the first frame, stop and sleep after the last")
    func powerTransitions() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makePlayer(with: .transient(intensity: 1, sharpness: 0.5))
        try player.start(atTime: 0)
        rig.advance(to: 0.5)
        let recording = try rig.recording()
        let events = recording.entries(for: "recording:lra").map(\.event.name)
        #expect(events == ["open", "wake", "frame", "frame", "stop", "sleep", "close"])
    }

    @Test("an idle device is woken ahead of a scheduled start by its wake latency")
    func wakeAhead() throws {
        let rig = try EngineRig(devices: ["recording:gamepad"])
        let player = try rig.engine.makePlayer(with: .transient(intensity: 1, sharpness: 0))
        try player.start(atTime: rig.time(0.1))
        rig.advance(to: 0.0905)
        #expect(rig.devices[0].powerState == .idle)
        // Wake latency 8 ms + 1 ms margin: the engine wakes the device 9 ms before the start.
        rig.advance(to: 0.091)
        #expect(rig.devices[0].powerState == .active)
        rig.advance(to: 0.5)
        let recording = try rig.recording()
        let entries = recording.entries(for: "recording:gamepad")
        // Wake latency 8 ms: the engine's wake-up for it comes 9 ms (8 + 1 ms margin) before the start.
        #expect(entries.map(\.event.name).prefix(3) == ["open", "wake", "frame"])
        let frames = recording.frames(for: "recording:gamepad")
        #expect(frames.first?.frame.time == rig.start.advanced(bySeconds: 0.1))
    }

    @Test("frames on a device are never closer than its update interval: changes in between are coalesced")
    func coalescing() throws {
        let rig = try EngineRig(devices: ["recording:gamepad"])
        // Two taps 3 ms apart on a device that takes a frame every 10 ms.
        let pattern = try HapticPattern(events: [
            HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 0.5), .init(parameterID: .hapticSharpness, value: 0)], relativeTime: 0),
            HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 1)], relativeTime: 0.003),
        ])
        try rig.engine.makePlayer(with: pattern).start(atTime: 0)
        rig.advance(to: 0.5)
        let frames = try rig.frames("recording:gamepad")
        let gaps = zip(frames, frames.dropFirst()).map { $1.milliseconds - $0.milliseconds }
        #expect(gaps.allSatisfy { $0 >= 10 }, "\(frames)")
        // The second tap's state arrives at the first moment the device accepts a frame.
        #expect(frames.map(\.milliseconds).prefix(2) == [0, 10])
        #expect(frames[1].amplitudes[1] > frames[1].amplitudes[0], "sharpness 1 moved the energy to the weak motor")
        #expect(frames.last?.amplitudes == [0, 0])
    }

    @Test("gamepad transients kick the strong motor and mix by sharpness (uncalibrated profile)")
    func gamepadTransient() throws {
        let rig = try EngineRig(devices: ["recording:gamepad"])
        try rig.engine.makePlayer(with: .transient(intensity: 0.5, sharpness: 0)).start(atTime: 0)
        rig.advance(to: 0.5)
        // 40 ms tap, 15 ms kick at 1.4×, sharpness 0 → all on the strong motor; 256 steps:
        // 0.7 × 255 = 178.5 → 179/255, 0.5 × 255 = 127.5 → 128/255.
        #expect(try rig.frames("recording:gamepad") == [
            .init(milliseconds: 0, amplitudes: [0.702, 0], frequencies: [0, 0]),
            .init(milliseconds: 15, amplitudes: [0.502, 0], frequencies: [0, 0]),
            .init(milliseconds: 40, amplitudes: [0, 0], frequencies: [0, 0]),
        ])
    }

    @Test("policy: haptics off renders nothing but players still complete; the intensity scale multiplies")
    func policy() throws {
        let off = try EngineRig(policy: HapticPolicy(isEnabled: false))
        let player = try off.engine.makeAdvancedPlayer(with: .continuous(duration: 0.05, intensity: 1, sharpness: 0))
        let done = Mutex(false)
        player.completionHandler = { _ in done.withLock { $0 = true } }
        try player.start(atTime: 0)
        off.advance(to: 0.2)
        #expect(done.withLock { $0 })
        #expect(try off.frames().isEmpty)

        let scaled = try EngineRig(policy: HapticPolicy(intensityScale: 0.5))
        try scaled.engine.makePlayer(with: .continuous(duration: 0.05, intensity: 0.8, sharpness: 0)).start(atTime: 0)
        scaled.advance(to: 0.2)
        #expect(try scaled.frames().map { $0.amplitudes[0] } == [0.4, 0])
    }

    @Test("auto shutdown after the idle timeout calls the stopped handler; the next start restarts transparently")
    func autoShutdown() throws {
        let rig = try EngineRig()
        let reasons = Mutex<[HapticEngine.StoppedReason]>([])
        rig.engine.stoppedHandler = { reason in reasons.withLock { $0.append(reason) } }
        rig.engine.autoShutdownTimeout = 5
        try rig.engine.start()
        #expect(rig.engine.isRunning)
        rig.devices[0].prepare()
        rig.advance(to: 4.9)
        #expect(reasons.withLock { $0 }.isEmpty)
        rig.advance(to: 5)
        #expect(reasons.withLock { $0 } == [.idleTimeout])
        #expect(!rig.engine.isRunning)
        #expect(rig.devices[0].powerState == .idle)
        try rig.engine.makePlayer(with: .transient(intensity: 1, sharpness: 0)).start(atTime: 0)
        #expect(rig.engine.isRunning)
        rig.advance(to: 6)
        #expect(try rig.frames().count == 2)
    }

    @Test("an explicit stop silences the device and does not call the stopped handler")
    func explicitStop() throws {
        let rig = try EngineRig()
        let reasons = Mutex<[HapticEngine.StoppedReason]>([])
        rig.engine.stoppedHandler = { reason in reasons.withLock { $0.append(reason) } }
        try rig.engine.makePlayer(with: .continuous(duration: 1, intensity: 1, sharpness: 0)).start(atTime: 0)
        rig.advance(to: 0.1)
        rig.engine.stop()
        #expect(try rig.frames().map { $0.amplitudes[0] } == [1, 0])
        #expect(reasons.withLock { $0 }.isEmpty)
        #expect(rig.devices[0].powerState == .idle)
    }

    @Test("a device unplugged mid-pattern reaches the stopped handler as lost; the other device keeps playing")
    func deviceLost() throws {
        let output = TestSupport.makeTemporaryDirectory("lost") + "/rec.jsonl"
        let clock = ManualClock()
        let devices = #"[{"id":"recording:flaky","actuator":"lra","unplug_after_frames":3,"#
            + #""channels":[{"name":"main","actuator":"lra","frequency_min_hz":100,"frequency_max_hz":300,"resonant_frequency_hz":175}]}]"#
        let system = TestSupport.recordingSystem(devices: devices, output: output, clock: clock)
        let steady = HapticSystem(configuration: .init(
            searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
            settings: ["recording.devices": "erm", "recording.output": output + ".erm", "recording.simulate-wake": "0"], clock: clock, daemon: .never))
        let flaky = try system.openDevice("recording:flaky")
        let erm = try steady.openDevice("recording:erm")
        let engine = try HapticEngine(devices: [flaky, erm], clock: clock, profileStore: nil, policy: HapticPolicy())
        let reasons = Mutex<[HapticEngine.StoppedReason]>([])
        engine.stoppedHandler = { reason in reasons.withLock { $0.append(reason) } }
        let start = clock.now()
        // Taps every 50 ms; the flaky device unplugs after its third frame.
        let taps = (0..<6).map { index in
            HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 1)], relativeTime: Double(index) * 0.05)
        }
        try engine.makePlayer(with: HapticPattern(events: taps)).start(atTime: 0)
        clock.advance(to: start.advanced(bySeconds: 1))
        #expect(reasons.withLock { $0 } == [.deviceLost(deviceID: "recording:flaky")])
        #expect(flaky.isLost)
        engine.stop()
        erm.close()
        flaky.close()
        let flakyFrames = try Recording(contentsOf: output).frames(for: "recording:flaky")
        #expect(flakyFrames.count == 3)
        let ermFrames = try Recording(contentsOf: output + ".erm").frames(for: "recording:erm")
        #expect(ermFrames.filter { $0.frame.channels[0].amplitude > 0 }.count >= 6, "the ERM played every tap: \(ermFrames.count) frames")
    }

    @Test("an idle engine's scheduler thread makes zero wake-ups, before and after playing")
    func zeroWakeUpsWhenIdle() throws {
        let system = TestSupport.recordingSystem(devices: "lra")
        let clock = SystemClock(name: "idle-test")
        let engine = try HapticEngine(devices: [try system.openDevice("recording:lra")], clock: clock, profileStore: nil, policy: HapticPolicy())
        engine.isAutoShutdownEnabled = false
        try engine.start()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(clock.wakeUps == 0)
        let player = try engine.makeAdvancedPlayer(with: .continuous(duration: 0.05, intensity: 1, sharpness: 0))
        let done = Mutex(false)
        player.completionHandler = { _ in done.withLock { $0 = true } }
        try player.start(atTime: 0)
        let deadline = Date().addingTimeInterval(2)
        while !done.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(done.withLock { $0 })
        let afterPlaying = clock.wakeUps
        #expect(afterPlaying > 0)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(clock.wakeUps == afterPlaying, "no wake-ups while nothing plays")
    }
}

@Suite("Engine: stopped reasons")
struct EngineStoppedReasonTests {
    @Test("a device failing with an I/O error reports a system error once and is retried by the next start")
    func systemError() throws {
        let devices = #"[{"id":"recording:broken","actuator":"erm","fail_after_frames":1,"channels":[{"name":"main","actuator":"erm"}]}]"#
        let rig = try EngineRig(devices: ["recording:broken"], presets: devices)
        let reasons = Mutex<[String]>([])
        rig.engine.stoppedHandler = { reason in reasons.withLock { $0.append("\(reason)") } }
        // The first frame goes through; the second (the tap's end) fails, and nothing more is tried.
        try rig.engine.makePlayer(with: .continuous(duration: 0.1, intensity: 1, sharpness: 0)).start(atTime: 0)
        rig.advance(to: 0.5)
        #expect(reasons.withLock { $0.count } == 1)
        #expect(reasons.withLock { $0.first }?.hasPrefix("system error: recording:broken: submit failed: recording:broken: simulated transport failure") == true)
        #expect(rig.devices[0].powerState == .idle, "the failed device was left stopped and idle")
        // A new start tries the device again (and fails again: one more report, not a stream).
        try rig.engine.makePlayer(with: .transient(intensity: 1, sharpness: 0)).start(atTime: 0)
        rig.advance(to: 1)
        #expect(reasons.withLock { $0.count } == 2)
    }

    @Test("releasing a running engine stops its devices and reports engineDestroyed")
    func engineDestroyed() throws {
        let output = TestSupport.makeTemporaryDirectory("destroyed") + "/rec.jsonl"
        let clock = ManualClock()
        let system = TestSupport.recordingSystem(devices: "lra", output: output, clock: clock)
        let device = try system.openDevice("recording:lra")
        let reasons = Mutex<[HapticEngine.StoppedReason]>([])
        do {
            let engine = try HapticEngine(devices: [device], clock: clock, profileStore: nil, policy: HapticPolicy())
            engine.stoppedHandler = { reason in reasons.withLock { $0.append(reason) } }
            try engine.makePlayer(with: .continuous(duration: 5, intensity: 1, sharpness: 0)).start(atTime: 0)
            clock.advance(bySeconds: 0.1)
        }
        #expect(reasons.withLock { $0 } == [.engineDestroyed])
        #expect(device.powerState == .idle)
        device.close()
        let amplitudes = try Recording(contentsOf: output).frames(for: "recording:lra").map { $0.frame.channels[0].amplitude }
        #expect(amplitudes == [1, 0], "the device was silenced when the engine went away")
    }

    @Test("a start on a silent device arms the engine's next pass for its first change, not for now; its frames are those of a full pass")
    func startArmsItsFirstChange() throws {
        let rig = try EngineRig()
        rig.engine.isAutoShutdownEnabled = false
        let shape = try #require(rig.engine.profile(forDevice: "recording:lra")).transient
        // The tap's first change: its kick's end, or its end.
        let firstChange = shape.overdriveDuration > 0 ? shape.overdriveDuration : shape.duration
        let player = try rig.engine.makePlayer(with: .transient(intensity: 1, sharpness: 0.5))
        for round in 0..<2 {
            // The second round plays the first frame the device remembered from the first.
            let started = Double(round) * 0.5
            rig.advance(to: started)
            try player.start(atTime: 0)
            let armed = try #require(rig.clock.nextDeadline)
            #expect(abs(armed.seconds(since: rig.start) - (started + firstChange)) < 1e-6, "round \(round)")
            rig.advance(to: started + 0.25)
            #expect(rig.clock.nextDeadline == nil, "nothing armed once the tap ended (round \(round))")
            #expect(rig.devices[0].powerState == .idle)
        }
        let frames = try rig.frames()
        // Each tap: its frame at the start, (its body after the kick), silence at its end.
        let perTap = shape.overdriveDuration > 0 ? 3 : 2
        #expect(frames.count == 2 * perTap, "\(frames)")
        #expect(frames.map(\.milliseconds).first == 0)
        #expect(abs((frames.dropFirst(perTap).first?.milliseconds ?? 0) - 500) < 1e-3, "\(frames)")
        #expect(frames[perTap - 1].amplitudes.allSatisfy { $0 == 0 } && abs(frames[perTap - 1].milliseconds - shape.duration * 1000) < 1e-3, "\(frames)")
        #expect(Array(frames.prefix(perTap).map(\.amplitudes)) == Array(frames.suffix(perTap).map(\.amplitudes)), "both taps alike")
    }

    @Test("a start on a device that sounds already hands a full pass to the scheduler at once")
    func startOverSoundHandsOver() throws {
        let rig = try EngineRig()
        rig.engine.isAutoShutdownEnabled = false
        try rig.engine.makePlayer(with: .continuous(duration: 0.2, intensity: 0.5, sharpness: 0.5)).start(atTime: 0)
        rig.advance(to: 0.05)
        try rig.engine.makePlayer(with: .transient(intensity: 1, sharpness: 0.5)).start(atTime: 0)
        #expect(rig.clock.nextDeadline == rig.clock.now())
        rig.advance(to: 0.5)
        #expect(rig.devices[0].powerState == .idle)
    }
}
