import Foundation
import Haptics
import HapticsInteraction
import Testing

@Suite("Interaction: traces replayed on the recording backend")
struct TraceReplayTests {
    static func fixture(_ name: String) -> String { TestSupport.packageRoot + "/Tests/Fixtures/traces/" + name }

    func replay(_ trace: InteractionTrace, on rig: EngineRig) -> [TraceReplay.Fired] {
        let clock = rig.clock
        return TraceReplay.run(trace, on: rig.engine) { end in clock.advance(to: end) }
    }

    @Test("the toolbar trace fires alignment on magnetic targets only, at the right times")
    func toolbar() throws {
        let trace = try InteractionTrace(contentsOfFile: Self.fixture("toolbar.trace"))
        let events = trace.events().map { "\(Int(($0.time * 1000).rounded())) \($0.event)" }
        #expect(events == [
            "0 entered back (magnetic)",
            "100 exited back", "100 entered share (magnetic)",
            "300 exited share", "300 entered canvas",
            "550 exited canvas", "550 entered save (magnetic)",
            // The last move covers 67 pt in 50 ms (1345 pt/s): a flick, projected onto save.
            "550 flick → save",
        ])
        let rig = try EngineRig()
        let fired = replay(trace, on: rig).filter { $0.effect != nil }
        #expect(fired.map(\.effect) == ["mac.alignment", "mac.alignment", "mac.alignment"])
        #expect(fired.map(\.time) == [0, 0.1, 0.55])
        // The device received one tap per alignment, at those times after the first.
        let onsets = try rig.frames().filter { $0.amplitudes[0] > 0 }.map(\.milliseconds)
        #expect(onsets == [0, 100, 550])
    }

    @Test("the knob trace: detents both ways, no double fire in the wobble, the end stop as a firmer impact")
    func knob() throws {
        let trace = try InteractionTrace(contentsOfFile: Self.fixture("knob.trace"))
        #expect(trace.events().map(\.event) == [
            .detentCrossed(index: 1, direction: 1), .detentCrossed(index: 2, direction: 1),
            .detentCrossed(index: 1, direction: -1), .detentCrossed(index: 0, direction: -1), .endStop(upper: false),
        ])
        let rig = try EngineRig()
        let fired = replay(trace, on: rig)
        #expect(fired.map(\.effect) == ["selection", "selection", "selection", "selection", "impact.rigid"])
        #expect(fired.map(\.strength) == [0.6, 0.6, 0.6, 0.6, 1])
        // Selection 0.4 × 0.6 strength and a rigid impact at 0.8: the end stop is the firmest.
        let taps = try rig.frames().filter { $0.amplitudes[0] > 0 }.map { $0.amplitudes[0] }
        #expect(taps == [0.2392, 0.2392, 0.2392, 0.2392, 0.8])
    }

    @Test("a fast sweep across 40 detents is coalesced by the overuse guard into ticks the device renders")
    func fastSweep() throws {
        var text = "knob 0 600 width=15 strength=1\n"
        for step in 0...40 { text += "at \(Double(step) * 0.005) \(Double(step) * 15)\n" }
        let trace = try InteractionTrace(text: text)
        #expect(trace.events().count == 40)
        let rig = try EngineRig(devices: ["recording:gamepad"])
        let fired = replay(trace, on: rig)
        let played = fired.filter { $0.decision == .played }.count
        let deferred = fired.filter { if case .deferred? = $0.decision { true } else { false } }.count
        let coalesced = fired.filter { $0.decision == .coalesced }.count
        // 200 ms of ticks on a device that renders one tap per 50 ms: one at once, then one deferred
        // play per 50 ms interval standing for everything in it.
        #expect(played == 1)
        #expect(deferred == 4)
        #expect(coalesced == 35)
        #expect(rig.engine.overuseGuard.statistics(for: "selection").played == 5)
        let onsets = try rig.frames("recording:gamepad").filter { $0.amplitudes.contains { $0 > 0 } }.map(\.milliseconds)
        #expect(Set(onsets).isSuperset(of: [0, 50, 100, 150, 200]))
    }

    @Test("trace errors name the file, the line and the problem")
    func errors() {
        func problem(_ text: String) -> String {
            do {
                _ = try InteractionTrace(text: text, source: "t.trace")
                return "parsed"
            } catch {
                return "\(error)"
            }
        }
        #expect(problem("at 0 1 2") == "t.trace:1: a sample before the trace's kind; start the file with 'pointer' or 'knob'")
        #expect(problem("pointer\ntarget a 0 0 10") == "t.trace:2: target needs ID X Y WIDTH HEIGHT")
        #expect(problem("pointer\ntarget a 0 0 10 10 style=glow") == "t.trace:2: style 'glow' is not highlight, lift, hover or beam:LINE_HEIGHT")
        #expect(problem("knob 0 90 width=15\nat 0.2 1\nat 0.1 2") == "t.trace:3: time 0.1 is earlier than the previous sample's 0.2")
        #expect(problem("knob 0 90 width=0") == "t.trace:1: detent width 0.0 must be > 0")
        #expect(problem("# nothing\n") == "t.trace:1: empty trace; start it with 'pointer' or 'knob'")
        #expect(problem("knob 0 90 width=15 snap=2") == "t.trace:1: snap point 2.0 is outside 0.5...1")
    }
}
