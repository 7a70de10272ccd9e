import Foundation
import Haptics
import HapticsInteraction
import HapticsTools
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

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

    @Test("trace plots are well-formed SVG, whatever a target is called: pointer canvas, knob chart, the device's frames below")
    func plotsAreWellFormed() throws {
        // A target id with every character XML reserves: the pointer canvas wrote ids unescaped.
        let text = try String(contentsOfFile: Self.fixture("toolbar.trace"), encoding: .utf8).replacingOccurrences(of: "target save", with: "target <save&\"quit\">")
        for trace in [try InteractionTrace(text: text), try InteractionTrace(contentsOfFile: Self.fixture("knob.trace"))] {
            let rig = try EngineRig()
            let fired = replay(trace, on: rig)
            let svg = TracePlot.svg(trace: trace, fired: fired, recording: (try rig.recording(), deviceID: "recording:lra"))
            let parser = XMLParser(data: Data(svg.utf8))
            #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "") at line \(parser.lineNumber): \(svg.split(separator: "\n").dropFirst(max(parser.lineNumber - 2, 0)).prefix(3))")
            #expect(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>\n"))
            if case .pointer = trace.content { #expect(svg.contains("&lt;save&amp;&quot;quit&quot;&gt; (lift)")) }
        }
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

    @Test("extreme numbers in a trace are errors naming the line, the value and the range")
    func bounds() {
        func problem(_ text: String) -> String {
            do {
                _ = try InteractionTrace(text: text, source: "t.trace")
                return "parsed"
            } catch {
                return "\(error)"
            }
        }
        // Each of these once ended the process: a time converted to nanoseconds by the replay, a
        // detent count converted to Int, or a detent array of a billion elements.
        #expect(problem("knob 0 90 width=15\nat 0 1\nat 1e300 2") == "t.trace:3: time 1e300 is outside -1000000000...1000000000")
        #expect(
            problem("knob 0 90 width=15\nat 0 1\nat 86400.5 2")
                == "t.trace:3: time 86400.5 is 86400.5 s after the first sample's; a trace may span at most 86400 s")
        #expect(problem("knob -1e308 1e308 width=1") == "t.trace:1: range minimum -1e308 is outside -1000000000...1000000000")
        #expect(problem("knob 0 1000000000 width=0.000001") == "t.trace:1: range 0...1000000000 with detent width 1e-06 makes 1000000000000001 detents; at most 10000")
        #expect(problem("knob 0 90 width=-15") == "t.trace:1: width -15 is outside 0...1000000000")
        #expect(problem("knob 0 90 positions=0,1e10") == "t.trace:1: detent position 1e10 is outside -1000000000...1000000000")
        #expect(problem("pointer\ntarget a 0 0 1e12 10") == "t.trace:2: width 1e12 is outside 0...1000000000")
        #expect(problem("pointer\ntarget a 0 0 10 -10") == "t.trace:2: height -10 is outside 0...1000000000")
        #expect(problem("pointer\ntarget a 0 0 10 10 style=beam:-1") == "t.trace:2: line height -1 is outside 0...1000000000")
        #expect(problem("pointer\nguide g x=-2e9") == "t.trace:2: guide position -2e9 is outside -1000000000...1000000000")
        #expect(problem("pointer\nat 0 1 1e99") == "t.trace:2: y 1e99 is outside -1000000000...1000000000")
        #expect(problem("knob 0 90 width=15\nat -1000000000 1\nat -999913600 2") == "parsed", "a day after any origin")
    }

    @Test("a flick between samples a picosecond apart (an infinite velocity) projects a bounded distance")
    func infiniteVelocity() throws {
        let text = "pointer\ntarget near 100 0 20 20\ntarget far 9000 0 20 20\nat 0 0 10\nat 1e-300 50 10\n"
        let trace = try InteractionTrace(text: text, source: "t.trace")
        #expect(trace.events().map { "\($0.event)" } == ["flick → far"], "projected 10 000 points, to the last magnetic target on the way")
        let rig = try EngineRig()
        let fired = replay(trace, on: rig)
        #expect(fired.map(\.description) == ["0 ms  flick → far"])
        // Out to an infinite end, the walk is nil rather than an Int(inf) trap.
        let regions = HitRegions(targets: [PointerTarget(id: "a", frame: Rect(x: 0, y: 0, width: 10, height: 10))])
        #expect(regions.magneticTarget(reachedFrom: Point(x: 5, y: 5), to: Point(x: .infinity, y: 5)) == nil)
        #expect(regions.magneticTarget(reachedFrom: Point(x: -1e150, y: 5), to: Point(x: 1e150, y: 5))?.id == "a", "10 000 steps")
    }

    @Test("a replay of a trace made in code with times centuries apart plays the first day of it")
    func farTimes() throws {
        let configuration = try DetentConfiguration(range: 0...90, spacing: .uniform(width: 15))
        let samples: [(time: Double, position: Double)] = [(0, 0), (10, 20), (1e300, 40), (.greatestFiniteMagnitude, 60)]
        let trace = InteractionTrace(content: .knob(configuration, samples: samples), source: "code")
        #expect(trace.events().count == 4)
        let rig = try EngineRig()
        #expect(replay(trace, on: rig).map(\.description) == ["10000 ms  detent 1 ↑  → selection ×0.6  played"])
    }
}
