import Haptics
import HapticsInteraction
import Testing

@Suite("Interaction: detents, levels, snapping, encoders")
struct DetentTests {
    func configuration(snap: Double = 0.55) throws -> DetentConfiguration {
        try DetentConfiguration(range: 0...90, spacing: .uniform(width: 15), snapPoint: snap)
    }

    @Test("detents are crossed at exact positions in both directions")
    func exactCrossings() throws {
        var tracker = DetentTracker(configuration: try configuration(), position: 0)
        #expect(tracker.update(position: 8.24).isEmpty)
        #expect(tracker.update(position: 8.25) == [.detentCrossed(index: 1, direction: 1)])  // 0 + 0.55 × 15
        #expect(tracker.update(position: 23.24).isEmpty)
        #expect(tracker.update(position: 23.25) == [.detentCrossed(index: 2, direction: 1)])
        // Down from 2 needs 30 − 8.25 = 21.75, strictly.
        #expect(tracker.update(position: 21.75).isEmpty)
        #expect(tracker.update(position: 21.74) == [.detentCrossed(index: 1, direction: -1)])
        #expect(tracker.index == 1)
    }

    @Test("noise at a boundary does not double-fire (hysteresis of the snap point)")
    func noDoubleFiring() throws {
        var tracker = DetentTracker(configuration: try configuration(), position: 0)
        var events: [InteractionEvent] = []
        for wobble in [8.3, 7.6, 8.4, 7.0, 8.2, 7.7, 8.3] { events += tracker.update(position: wobble) }
        #expect(events == [.detentCrossed(index: 1, direction: 1)])
        // Even at snap 0.5 (no hysteresis), a position exactly on the boundary fires once, not twice.
        var exact = DetentTracker(configuration: try configuration(snap: 0.5), position: 0)
        #expect(exact.update(position: 7.5) == [.detentCrossed(index: 1, direction: 1)])
        #expect(exact.update(position: 7.5).isEmpty)
        #expect(exact.update(position: 7.499) == [.detentCrossed(index: 0, direction: -1)])
    }

    @Test("a fast sweep reports every detent in order, and the end stop once")
    func fastSweepAndEndStop() throws {
        var tracker = DetentTracker(configuration: try configuration(), position: 0)
        #expect(tracker.update(position: 95) == (1...6).map { .detentCrossed(index: $0, direction: 1) } + [.endStop(upper: true)])
        #expect(tracker.update(position: 99).isEmpty)
        #expect(tracker.update(position: 88).isEmpty)
        #expect(tracker.update(position: -2) == (0...5).reversed().map { .detentCrossed(index: $0, direction: -1) } + [.endStop(upper: false)])
    }

    @Test("detents at explicit positions; invalid configurations are typed errors")
    func positionsAndErrors() throws {
        let uneven = try DetentConfiguration(range: 0...100, spacing: .positions([50, 0, 10, 200]))
        #expect(uneven.detents == [0, 10, 50])
        var tracker = DetentTracker(configuration: uneven, position: 0)
        #expect(tracker.update(position: 32) == [.detentCrossed(index: 1, direction: 1), .detentCrossed(index: 2, direction: 1)])
        #expect(throws: InteractionError.self) { try DetentConfiguration(range: 0...10, spacing: .uniform(width: 0)) }
        #expect(throws: InteractionError.self) { try DetentConfiguration(range: 0...10, spacing: .uniform(width: 1), snapPoint: 0.4) }
        #expect(throws: InteractionError.self) { try DetentConfiguration(range: 5...5, spacing: .uniform(width: 1)) }
    }

    @Test("too many detents, or a span that overflows, are typed errors rather than trapping conversions")
    func detentCount() throws {
        func problem(_ range: ClosedRange<Double>, _ spacing: DetentConfiguration.Spacing) -> String {
            do {
                let configuration = try DetentConfiguration(range: range, spacing: spacing)
                return "\(configuration.detents.count) detents"
            } catch {
                return "\(error)"
            }
        }
        #expect(problem(0...9999, .uniform(width: 1)) == "10000 detents")
        #expect(problem(0...10000, .uniform(width: 1)) == "range 0...10000 with detent width 1 makes 10001 detents; at most 10000")
        #expect(problem(0...1, .uniform(width: 1e-300)) == "range 0...1 with detent width 1e-300 makes 9.999999999999999e+299 detents; at most 10000")
        #expect(
            problem(-1e308...1e308, .uniform(width: 1))
                == "range -1e+308...1e+308 with detent width 1 makes too many detents; at most 10000")
        #expect(problem(0...1, .positions((0...10_000).map { Double($0) / 10_000 })) == "10001 detent positions lie inside the range; at most 10000")
    }

    @Test("levels change once per threshold with hysteresis")
    func levels() {
        var levels = LevelTracker(thresholds: [0.3, 0.6], hysteresis: 0.05)
        #expect(levels.update(value: 0.31) == [.levelChanged(level: 1)])
        #expect(levels.update(value: 0.27).isEmpty)
        #expect(levels.update(value: 0.7) == [.levelChanged(level: 2)])
        #expect(levels.update(value: 0.1) == [.levelChanged(level: 1), .levelChanged(level: 0)])
    }

    @Test("a dragged item snaps into alignment once per approach")
    func snapping() {
        var snapper = AlignmentSnapper(guides: [.init(name: "middle", position: 200, vertical: true)], distance: 6)
        let (first, events) = snapper.update(frame: Rect(x: 150, y: 0, width: 46, height: 20))  // right edge 196
        #expect(first.x == 154)
        #expect(events == [.snapped(guide: "middle")])
        #expect(snapper.update(frame: Rect(x: 151, y: 0, width: 46, height: 20)).1.isEmpty)
        #expect(snapper.update(frame: Rect(x: 100, y: 0, width: 46, height: 20)).1.isEmpty)
        #expect(snapper.update(frame: Rect(x: 195, y: 0, width: 46, height: 20)).1 == [.snapped(guide: "middle")])
    }

    @Test("a quadrature encoder decodes both directions and ignores invalid jumps")
    func quadrature() {
        var decoder = QuadratureDecoder(a: false, b: false)
        // Clockwise: 00 → 01 → 11 → 10 → 00 is one detent.
        let clockwise = [(false, true), (true, true), (true, false), (false, false)]
        #expect(clockwise.map { decoder.update(a: $0.0, b: $0.1) } == [1, 1, 1, 1])
        #expect(decoder.detents == 1)
        #expect(clockwise.reversed().dropFirst().map { decoder.update(a: $0.0, b: $0.1) } + [decoder.update(a: false, b: false)] == [-1, -1, -1, -1])
        #expect(decoder.count == 0)
        #expect(decoder.update(a: true, b: true) == 0, "00 → 11 skips a phase: ignored")
    }
}
