import Foundation
import Haptics
import HapticsTools
import Synchronization
import Testing

/// Player behaviours on the recording backend (through dlopen), with exact frame times from the
/// manual clock. The uncalibrated 175 Hz LRA maps sharpness 0…1 onto 131.25…262.5 Hz.
@Suite("Players on the recording backend")
struct PlayerTests {
    @Test("a transient for now renders at once, then stops after the LRA's 12 ms tap")
    func transientNow() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makePlayer(with: .transient(intensity: 0.8, sharpness: 1))
        try player.start(atTime: 0)
        rig.advance(to: 0.1)
        #expect(try rig.frames() == [
            .init(milliseconds: 0, amplitudes: [0.8], frequencies: [262.5]),
            .init(milliseconds: 12, amplitudes: [0], frequencies: [0]),
        ])
    }

    @Test("start at a given engine time")
    func startAtTime() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makePlayer(with: .continuous(duration: 0.1, intensity: 0.6, sharpness: 0))
        try player.start(atTime: rig.time(0.05))
        rig.advance(to: 0.049)
        #expect(try Recording(contentsOf: rig.output).frames(for: "recording:lra").isEmpty)
        rig.advance(to: 0.3)
        #expect(try rig.frames() == [
            .init(milliseconds: 50, amplitudes: [0.6], frequencies: [131.3]),
            .init(milliseconds: 150, amplitudes: [0], frequencies: [0]),
        ])
    }

    @Test("stop at a given time, with the completion handler told it was stopped")
    func stopAtTime() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makeAdvancedPlayer(with: .continuous(duration: 1, intensity: 0.4, sharpness: 0.5))
        let outcome = Mutex<String?>(nil)
        player.completionHandler = { error in outcome.withLock { $0 = error.map { "\($0)" } ?? "finished" } }
        try player.start(atTime: 0)
        try player.stop(atTime: rig.time(0.03))
        rig.advance(to: 0.5)
        #expect(try rig.frames() == [
            .init(milliseconds: 0, amplitudes: [0.4], frequencies: [185.6]),
            .init(milliseconds: 30, amplitudes: [0], frequencies: [0]),
        ])
        #expect(outcome.withLock { $0 } == "\(HapticEngineError.playerStopped)")
    }

    @Test("the completion handler gets nil when the pattern plays to its end")
    func completion() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makeAdvancedPlayer(with: .continuous(duration: 0.02, intensity: 1, sharpness: 0))
        let finishedAt = Mutex<Double?>(nil)
        let clock = rig.clock
        player.completionHandler = { error in
            #expect(error == nil)
            finishedAt.withLock { $0 = clock.now().seconds }
        }
        try player.start(atTime: 0)
        rig.advance(to: 1)
        #expect(finishedAt.withLock { $0 } == rig.time(0.02))
    }

    @Test("playback rate 2 halves every time")
    func rate() throws {
        let rig = try EngineRig()
        let pattern = try HapticPattern(events: [
            HapticEvent(eventType: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 0.2)], relativeTime: 0.02, duration: 0.04),
            HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 1)], relativeTime: 0.1),
        ])
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        player.playbackRate = 2
        try player.start(atTime: 0)
        rig.advance(to: 0.2)
        #expect(try rig.frames() == [
            .init(milliseconds: 10, amplitudes: [0.2], frequencies: [185.6]),
            .init(milliseconds: 30, amplitudes: [0], frequencies: [0]),
            .init(milliseconds: 50, amplitudes: [1], frequencies: [185.6]),
            // The tap keeps its device-tuned length: 12 ms of engine time, i.e. 24 ms of pattern time.
            .init(milliseconds: 56, amplitudes: [0], frequencies: [0]),
        ])
    }

    @Test("loop with loop end repeats until stopped")
    func loop() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makeAdvancedPlayer(with: .continuous(duration: 0.03, intensity: 0.6, sharpness: 0))
        player.loopEnabled = true
        player.loopEnd = 0.05
        try player.start(atTime: 0)
        try player.stop(atTime: rig.time(0.12))
        rig.advance(to: 0.3)
        #expect(try rig.frames().map(\.milliseconds) == [0, 30, 50, 80, 100, 120])
        #expect(try rig.frames().map { $0.amplitudes[0] } == [0.6, 0, 0.6, 0, 0.6, 0])
    }

    @Test("seek moves the start point; seek while playing jumps")
    func seek() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makeAdvancedPlayer(with: .continuous(duration: 0.1, intensity: 0.2, sharpness: 0))
        try player.seek(toOffset: 0.04)
        try player.start(atTime: 0)
        rig.advance(to: 0.02)
        #expect(abs(player.currentTime - 0.06) < 1e-9)
        try player.seek(toOffset: 0.09)
        rig.advance(to: 0.5)
        #expect(try rig.frames() == [
            .init(milliseconds: 0, amplitudes: [0.2], frequencies: [131.3]),
            .init(milliseconds: 30, amplitudes: [0], frequencies: [0]),
        ])
    }

    @Test("pause silences and keeps the position; resume continues from it")
    func pauseResume() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makeAdvancedPlayer(with: .continuous(duration: 0.1, intensity: 0.4, sharpness: 0))
        try player.start(atTime: 0)
        try player.pause(atTime: rig.time(0.03))
        try player.resume(atTime: rig.time(0.05))
        rig.advance(to: 0.04)
        #expect(abs(player.currentTime - 0.03) < 1e-9)
        rig.advance(to: 0.5)
        #expect(try rig.frames() == [
            .init(milliseconds: 0, amplitudes: [0.4], frequencies: [131.3]),
            .init(milliseconds: 30, amplitudes: [0], frequencies: [0]),
            .init(milliseconds: 50, amplitudes: [0.4], frequencies: [131.3]),
            .init(milliseconds: 120, amplitudes: [0], frequencies: [0]),
        ])
    }

    @Test("dynamic parameters sent while playing change the frames")
    func dynamicParameters() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makePlayer(with: .continuous(duration: 0.1, intensity: 0.8, sharpness: 0))
        try player.start(atTime: 0)
        try player.sendParameters(
            [.init(parameterID: .hapticIntensityControl, value: 0.5), .init(parameterID: .hapticSharpnessControl, value: 1, relativeTime: 0.02)],
            atTime: rig.time(0.02))
        rig.advance(to: 0.5)
        #expect(try rig.frames() == [
            .init(milliseconds: 0, amplitudes: [0.8], frequencies: [131.3]),
            .init(milliseconds: 20, amplitudes: [0.4], frequencies: [131.3]),
            .init(milliseconds: 40, amplitudes: [0.4], frequencies: [262.5]),
            .init(milliseconds: 100, amplitudes: [0], frequencies: [0]),
        ])
    }

    @Test("a parameter curve ramps the output in steps of the update interval")
    func curve() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makePlayer(with: .continuous(duration: 0.1, intensity: 1, sharpness: 0))
        try player.start(atTime: 0)
        try player.scheduleParameterCurve(
            HapticParameterCurve(parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: 1), .init(relativeTime: 0.02, value: 0.2)]),
            atTime: rig.time(0.01))
        rig.advance(to: 0.5)
        let frames = try rig.frames()
        #expect(frames.map(\.milliseconds) == [0, 14, 18, 22, 26, 30, 100])
        #expect(frames.map { $0.amplitudes[0] } == [1, 0.8392, 0.6784, 0.5216, 0.3608, 0.2, 0])
    }

    @Test("an attack envelope ramps up from zero over AttackTime")
    func attack() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makePlayer(
            with: .continuous(duration: 0.2, intensity: 1, sharpness: 0, extra: [.init(parameterID: .attackTime, value: 0.5)]))
        try player.start(atTime: 0)
        rig.advance(to: 0.5)
        let frames = try rig.frames()
        let attack = (pow(1001, 0.5) - 1) / 1000
        #expect(frames.first?.milliseconds == 4)
        let quantized: Double = ((0.004 / attack) * 255).rounded() / 255
        #expect(frames.first?.amplitudes[0] == (quantized * 1e4).rounded() / 1e4)
        let rising = frames.prefix { $0.amplitudes[0] < 1 }.map { $0.amplitudes[0] }
        #expect(rising == rising.sorted())
        #expect(frames.last == .init(milliseconds: 200, amplitudes: [0], frequencies: [0]))
        #expect(frames.contains { $0.amplitudes[0] == 1 })
    }

    @Test("two players mix: the stronger voice wins each channel")
    func mixing() throws {
        let rig = try EngineRig()
        let hum = try rig.engine.makePlayer(with: .continuous(duration: 0.1, intensity: 0.2, sharpness: 0))
        let tap = try rig.engine.makePlayer(with: .transient(at: 0.03, intensity: 1, sharpness: 1))
        try hum.start(atTime: 0)
        try tap.start(atTime: 0)
        rig.advance(to: 0.5)
        #expect(try rig.frames() == [
            .init(milliseconds: 0, amplitudes: [0.2], frequencies: [131.3]),
            .init(milliseconds: 30, amplitudes: [1], frequencies: [262.5]),
            .init(milliseconds: 42, amplitudes: [0.2], frequencies: [131.3]),
            .init(milliseconds: 100, amplitudes: [0], frequencies: [0]),
        ])
    }

    @Test("a tap at the latest pattern time plays; far times from the API are clamped, refused or wait, never trap")
    func farTimes() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makeAdvancedPlayer(with: .transient(at: HapticPattern.maximumTime, intensity: 1, sharpness: 1))
        let finished = Mutex<Int>(0)
        player.completionHandler = { error in
            #expect(error == nil)
            finished.withLock { $0 += 1 }
        }
        try player.seek(toOffset: HapticPattern.maximumTime - 0.01)
        try player.start(atTime: 0)
        rig.advance(to: 0.5)
        #expect(try rig.frames() == [
            .init(milliseconds: 10, amplitudes: [1], frequencies: [262.5]),
            .init(milliseconds: 22, amplitudes: [0], frequencies: [0]),
        ])
        #expect(finished.withLock { $0 } == 1)

        let other = try EngineRig()
        let looping = try other.engine.makeAdvancedPlayer(with: .transient(intensity: 1, sharpness: 0))
        looping.loopEnd = 1e300
        #expect(looping.loopEnd == HapticPattern.maximumTime)
        try looping.seek(toOffset: .greatestFiniteMagnitude)
        #expect(looping.currentTime == HapticPattern.maximumTime)
        let error = #expect(throws: HapticEngineError.self) {
            try looping.sendParameters([.init(parameterID: .hapticIntensityControl, value: 1, relativeTime: 1e300)], atTime: 0)
        }
        #expect(error?.description == "HapticIntensityControl relativeTime 1e+300 is outside ...3600 s")
        // An engine time centuries away saturates: the start waits, nothing plays, nothing traps.
        try looping.start(atTime: 1e300)
        try looping.start(atTime: .greatestFiniteMagnitude)
        other.advance(to: 1)
        #expect(try other.frames().isEmpty)
    }
}
