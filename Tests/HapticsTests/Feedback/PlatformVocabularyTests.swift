import Foundation
import Haptics
import HapticsTools
import Testing

/// The current vocabularies: SwiftUI's `SensoryFeedback`, UIKit's canvas generator, Android's
/// predefined effects and `HapticFeedbackConstants`, each rendered with the timing and relative
/// strength its platform documents.
@Suite("Vocabularies: SwiftUI, the canvas generator, Android's predefined effects and feedback constants")
struct PlatformVocabularyTests {
    @Test("every effect says which platform version introduced it and what it means; names are unique; the families are grouped")
    func described() {
        let names = FeedbackEffect.vocabulary.map(\.name)
        #expect(Set(names).count == names.count)
        for effect in FeedbackEffect.vocabulary {
            #expect(!effect.introduced.isEmpty && !effect.meaning.isEmpty, "\(effect.name)")
        }
        #expect(FeedbackEffect.effects(of: .swiftUI).count == 17)
        #expect(FeedbackEffect.effects(of: .android).filter { $0.name.hasPrefix("android.feedback.") }.count == HapticFeedbackConstant.allCases.count)
        #expect(FeedbackEffect.effects(of: .android).filter { $0.name.hasPrefix("android.effect.") }.count == PredefinedEffect.allCases.count)
        #expect(FeedbackEffect.named("canvas.pathCompleted")?.introduced == "iOS 17.5")
        #expect(FeedbackEffect.named("android.feedback.toggleOn")?.introduced == "API 34")
    }

    @Test("Docs/Vocabulary.md holds the table the vocabulary makes (haptic-cal effects --markdown)")
    func documented() throws {
        let doc = try String(contentsOfFile: TestSupport.packageRoot + "/Docs/Vocabulary.md", encoding: .utf8)
        let start = try #require(doc.range(of: "<!-- vocabulary table -->\n")), end = try #require(doc.range(of: "<!-- end of the vocabulary table -->"))
        #expect(String(doc[start.upperBound..<end.lowerBound]) == VocabularyTable.markdown(), "run haptic-cal effects --markdown and paste it into Docs/Vocabulary.md")
    }

    /// The first frame of each pulse `effect` plays on the recording LRA: (ms, amplitude).
    static func pulses(_ name: String) throws -> [(milliseconds: Double, amplitude: Double)] {
        let rig = try EngineRig()
        EffectFeedbackGenerator(engine: rig.engine).play(try #require(FeedbackEffect.named(name)))
        for step in 1...50 { rig.advance(to: Double(step) * 0.01) }
        var result: [(Double, Double)] = []
        var previous = 0.0
        for frame in try rig.frames() {
            if frame.amplitudes[0] > 0, previous == 0 { result.append((frame.milliseconds, frame.amplitudes[0])) }
            previous = frame.amplitudes[0]
        }
        return result
    }

    @Test("Android's predefined effects: a double click is two clicks 130 ms apart (AOSP's 30 on, 100 off, 30 on); a tick is weaker than a click, a heavy click stronger")
    func predefined() throws {
        let click = try Self.pulses("android.effect.click"), tick = try Self.pulses("android.effect.tick")
        let heavy = try Self.pulses("android.effect.heavyClick"), double = try Self.pulses("android.effect.doubleClick")
        #expect(click.count == 1 && tick.count == 1 && heavy.count == 1)
        #expect(tick[0].amplitude < click[0].amplitude && click[0].amplitude < heavy[0].amplitude, "tick \(tick), click \(click), heavy \(heavy)")
        #expect(double.count == 2 && abs(double[1].milliseconds - double[0].milliseconds - 130) <= 1, "\(double)")
        #expect(double.map(\.amplitude) == [click[0].amplitude, click[0].amplitude])
        let texture = try Self.pulses("android.feedback.clockTick")
        #expect(texture.count == 1 && texture[0].amplitude < tick[0].amplitude, "the texture tick is the softest")
    }

    @Test("each feedback constant plays what AOSP's HapticFeedbackVibrationProvider plays for it where the vibrator has no primitives")
    func constants() {
        let aosp: [HapticFeedbackConstant: PredefinedEffect?] = [
            .longPress: .heavyClick, .virtualKey: .click, .keyboardPress: .click, .keyboardRelease: .tick, .virtualKeyRelease: .tick,
            .clockTick: nil, .contextClick: .tick, .textHandleMove: nil, .gestureStart: .click, .gestureEnd: .tick, .confirm: .click,
            .reject: .doubleClick, .toggleOn: .tick, .toggleOff: nil, .gestureThresholdActivate: .tick, .gestureThresholdDeactivate: nil,
            .dragStart: .heavyClick, .segmentTick: .tick, .segmentFrequentTick: nil,
        ]
        let textureTick = FeedbackEffect.named("android.feedback.clockTick")!.pattern
        for constant in HapticFeedbackConstant.allCases {
            // nil: EFFECT_TEXTURE_TICK, the hidden softest tick.
            let expected = aosp[constant]!.map { $0.effect.pattern } ?? textureTick
            #expect(constant.effect.pattern == expected, "\(constant)")
        }
        #expect(HapticFeedbackConstant.confirm.rawValue == 16 && HapticFeedbackConstant.reject.rawValue == 17)
        #expect(HapticFeedbackConstant.segmentFrequentTick.rawValue == 27 && HapticFeedbackConstant.longPress.rawValue == 0)
        #expect(PredefinedEffect.heavyClick.rawValue == 5 && PredefinedEffect.tick.rawValue == 2)
    }

    @Test("SwiftUI's feedback names the same feedback as UIKit, watchOS and macOS; weights order the strength, flexibilities the sharpness")
    func sensory() {
        let same: [(SensoryFeedback, String)] = [
            (.success, "notification.success"), (.warning, "notification.warning"), (.error, "notification.error"), (.selection, "selection"),
            (.increase, "watch.directionUp"), (.decrease, "watch.directionDown"), (.start, "watch.start"), (.stop, "watch.stop"),
            (.alignment, "mac.alignment"), (.levelChange, "mac.levelChange"), (.impact, "impact.medium"),
            (.impact(weight: .light), "impact.light"), (.impact(weight: .heavy), "impact.heavy"), (.impact(flexibility: .rigid), "impact.rigid"),
            (.impact(flexibility: .soft), "impact.soft"), (.pathComplete, "canvas.pathCompleted"),
        ]
        for (feedback, counterpart) in same {
            #expect(feedback.effect.pattern == FeedbackEffect.named(counterpart)!.pattern, "\(feedback.effect.name)")
            #expect(feedback.effect.family == .swiftUI)
        }
        func first(_ feedback: SensoryFeedback) -> HapticEvent { feedback.effect.pattern.events[0] }
        let weights = SensoryFeedback.Weight.allCases.map { first(.impact(weight: $0)).value(of: .hapticIntensity) }
        #expect(weights == weights.sorted() && Set(weights).count == 3)
        let flexibilities = SensoryFeedback.Flexibility.allCases.map { first(.impact(flexibility: $0)).value(of: .hapticSharpness) }
        #expect(flexibilities == flexibilities.sorted(by: >) && Set(flexibilities).count == 3, "rigid, solid, soft: \(flexibilities)")
        #expect(SensoryFeedback.impact(weight: .heavy, intensity: 0.8).intensity == 0.8)
        #expect(SensoryFeedback.impact(flexibility: .solid, intensity: 7).intensity == 1)
        #expect(SensoryFeedback.impact(weight: .medium) == .impact)
    }

    @Test("a sensory feedback trigger plays when its value changes, only then, and as its condition or closure says; the generators play their effects")
    func triggersAndGenerators() throws {
        let rig = try EngineRig()
        let counter = SensoryFeedbackTrigger(.selection, initial: 0, engine: rig.engine) { old, new in new > old }
        counter.update(0)  // unchanged: nothing
        rig.advance(to: 0.1)
        counter.update(1)  // up: plays
        rig.advance(to: 0.2)
        counter.update(0)  // down: the condition says no
        rig.advance(to: 0.3)
        let chooser = SensoryFeedbackTrigger(initial: "a", engine: rig.engine) { _, new in new == "done" ? .success : nil }
        chooser.update("b")
        rig.advance(to: 0.4)
        chooser.update("done")
        rig.advance(to: 0.8)
        CanvasFeedbackGenerator(engine: rig.engine).pathCompleted()
        rig.advance(to: 1.2)
        EffectFeedbackGenerator(engine: rig.engine).perform(.reject)
        rig.advance(to: 1.6)
        let onsets = try rig.frames().reduce(into: (list: [Double](), previous: 0.0)) { state, frame in
            if frame.amplitudes[0] > 0, state.previous == 0 { state.list.append(frame.milliseconds) }
            state.previous = frame.amplitudes[0]
        }.list
        // selection at 100 ms; success's two taps at 400 and 500; the path's two at 800 and 870; reject's two at 1200 and 1330.
        #expect(onsets.count == 7, "\(onsets)")
        for (onset, expected) in zip(onsets, [100.0, 400, 500, 800, 870, 1_200, 1_330]) { #expect(abs(onset - expected) <= 1, "\(onsets)") }
    }
}
