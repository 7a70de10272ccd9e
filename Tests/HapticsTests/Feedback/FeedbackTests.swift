import Foundation
import Haptics
import Testing

@Suite("Feedback vocabulary and generators")
struct FeedbackTests {
    @Test("the vocabulary holds the iOS, watchOS, macOS, SwiftUI and Android sets, each name once")
    func vocabulary() {
        let names = FeedbackEffect.vocabulary.map(\.name)
        #expect(Set(names).count == names.count)
        let expected = [
            "impact.light", "impact.medium", "impact.heavy", "impact.rigid", "impact.soft", "selection",
            "notification.success", "notification.warning", "notification.error",
            "watch.notification", "watch.directionUp", "watch.directionDown", "watch.success", "watch.failure", "watch.retry",
            "watch.start", "watch.stop", "watch.click",
            "mac.generic", "mac.alignment", "mac.levelChange",
            "android.click", "android.thud", "android.spin", "android.quickRise", "android.slowRise", "android.quickFall",
            "android.lightTick", "android.lowTick",
        ]
        // The first sets, in order, among the later ones (SwiftUI, the canvas, Android 29–34).
        #expect(names.filter(expected.contains) == expected)
        #expect(names.count == 71)
        for effect in FeedbackEffect.vocabulary {
            #expect(!effect.pattern.hapticEvents.isEmpty, "\(effect.name) plays something")
            #expect(effect.pattern.duration <= 0.5, "\(effect.name) is short")
        }
    }

    @Test("impact styles differ as UIKit describes: heavy is stronger than light, rigid sharper than soft")
    func impactStyles() throws {
        func first(_ name: String) -> HapticEvent { FeedbackEffect.named(name)!.pattern.events[0] }
        #expect(first("impact.heavy").value(of: .hapticIntensity) > first("impact.medium").value(of: .hapticIntensity))
        #expect(first("impact.medium").value(of: .hapticIntensity) > first("impact.light").value(of: .hapticIntensity))
        #expect(first("impact.rigid").value(of: .hapticSharpness) > first("impact.soft").value(of: .hapticSharpness))
        #expect(FeedbackEffect.named("impact.heavy")!.scaled(by: 0.5).pattern.events[0].value(of: .hapticIntensity) == 0.5)
    }

    @Test("prepare wakes the device; an impact plays the style's tap; releasing the generator idles the device")
    func impactGenerator() throws {
        let rig = try EngineRig()
        var generator: ImpactFeedbackGenerator? = ImpactFeedbackGenerator(style: .heavy, engine: rig.engine)
        generator!.prepare()
        #expect(rig.devices[0].powerState == .prepared)
        generator!.impactOccurred(intensity: 0.8)
        rig.advance(to: 0.05)
        generator!.prepare()
        #expect(rig.devices[0].powerState == .prepared)
        generator = nil
        rig.advance(to: 0.1)
        #expect(rig.devices[0].powerState == .idle)
        // Heavy: intensity 1 × 0.8, sharpness 0.35 → 131.25 × 2^0.35 Hz.
        let frames = try rig.frames()
        #expect(frames.map(\.milliseconds) == [0, 12])
        #expect(frames[0].amplitudes == [0.8])
        #expect(frames[0].frequencies == [((131.25 * pow(2, 0.35)) * 10).rounded() / 10])
        let transitions = try rig.recording().transitions(for: "recording:lra")
        // Prepared before the impact: it plays without another wake, idles after it, wakes for the
        // second prepare and sleeps when the generator is released.
        #expect(transitions == ["open", "wake", "stop", "sleep", "wake", "sleep", "close"])
    }

    @Test("an engine released with a feedback still deferred goes away (a policy file with a 3 s impact interval once kept it alive)")
    func deferredFeedbackDoesNotKeepTheEngine() throws {
        let path = TestSupport.packageRoot + "/Tests/Fixtures/fuzz/policy/long-impact-interval.json"
        let policy = try HapticPolicy.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
        #expect(policy.minimumInterval(for: "impact") == 3)
        weak var engine: HapticEngine?
        weak var clock: ManualClock?
        do {
            let rig = try EngineRig(policy: policy)
            engine = rig.engine
            clock = rig.clock
            let impact = ImpactFeedbackGenerator(style: .rigid, engine: rig.engine)
            impact.impactOccurred()
            rig.advance(to: 0.1)
            impact.impactOccurred()
            #expect(rig.engine.overuseGuard.statistics(for: "impact").played == 1, "the second impact waits for 3 s")
            rig.advance(to: 0.5)
        }
        #expect(engine == nil)
        #expect(clock == nil)
    }

    @Test("notifications play their rhythm; unknown effect names are a typed error")
    func notificationAndEffects() throws {
        let rig = try EngineRig()
        NotificationFeedbackGenerator(engine: rig.engine).notificationOccurred(.error)
        rig.advance(to: 1)
        let onsets = try rig.frames().filter { $0.amplitudes[0] > 0 }.map(\.milliseconds)
        #expect(onsets == [0, 80, 160, 280])
        let generator = EffectFeedbackGenerator(engine: rig.engine)
        #expect(throws: FeedbackError.self) { try generator.play(named: "watch.jump") }
    }

    @Test("the overuse guard coalesces a fast sweep of selection ticks into ticks the device can render")
    func overuseGuard() throws {
        let rig = try EngineRig(devices: ["recording:gamepad"])
        let selection = SelectionFeedbackGenerator(engine: rig.engine)
        // 50 detents crossed in 100 ms: one every 2 ms.
        for step in 0..<50 {
            rig.advance(to: Double(step) * 0.002)
            selection.selectionChanged()
        }
        rig.advance(to: 1)
        let statistics = rig.engine.overuseGuard.statistics(for: "selection")
        // The gamepad renders a tap in 40 ms + a 10 ms update: one tick per 50 ms at most.
        #expect(rig.engine.minimumTapInterval() == 0.05)
        #expect(statistics.played == 3)
        #expect(statistics.coalesced == 47)
        let onsets = try rig.frames("recording:gamepad").filter { $0.amplitudes.contains { $0 > 0 } }
        let starts = onsets.map(\.milliseconds).filter { [0.0, 50, 100].contains($0) }
        #expect(starts == [0, 50, 100], "\(onsets)")
    }
}

@Suite("Feedback ramps")
struct FeedbackRampTests {
    @Test("a ramp rising from intensity 0 (android.quickRise) is sampled and rises to full")
    func quickRise() throws {
        let rig = try EngineRig()
        EffectFeedbackGenerator(engine: rig.engine).play(FeedbackEffect.named("android.quickRise")!)
        rig.advance(to: 0.5)
        let frames = try rig.frames()
        let rising = frames.dropLast().map { $0.amplitudes[0] }
        #expect(rising.count >= 20, "sampled every 4 ms over 100 ms")
        #expect(rising == rising.sorted())
        #expect(rising.last! > 0.9)
        #expect(frames.last?.amplitudes == [0])
    }

    @Test("a run-time intensity curve rising from 0 is sampled too")
    func externalRampFromZero() throws {
        let rig = try EngineRig()
        let player = try rig.engine.makePlayer(with: .continuous(duration: 0.2, intensity: 1, sharpness: 0))
        try player.sendParameters([.init(parameterID: .hapticIntensityControl, value: 0)], atTime: 0)
        try player.start(atTime: 0)
        try player.scheduleParameterCurve(
            HapticParameterCurve(parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: 0), .init(relativeTime: 0.05, value: 1)]),
            atTime: rig.time(0.02))
        rig.advance(to: 0.5)
        let amplitudes = try rig.frames().map { $0.amplitudes[0] }
        #expect(amplitudes.count >= 10)
        #expect(amplitudes.dropLast() == amplitudes.dropLast().sorted())
        #expect(amplitudes.dropLast().last == 1)
    }
}
