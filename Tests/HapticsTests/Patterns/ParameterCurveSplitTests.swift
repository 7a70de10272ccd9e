import Foundation
import Haptics
import Testing

/// `HapticParameterCurve.split`: at most 16 points per curve, each later curve starting at the
/// point where the one before ended, so the control follows the same line.
@Suite("Parameter curve split")
struct ParameterCurveSplitTests: AHAPModelBuilding {
    /// A curve of `count` points a quarter second apart (exact in binary), values `value(k)`.
    func ramp(_ count: Int, at time: Double = 0, _ value: (Int) -> Double = { Double($0) / 64 }) -> HapticParameterCurve {
        curve(.hapticIntensityControl, at: time, (0..<count).map { point(Double($0) * 0.25, value($0)) })
    }

    /// The control's value at `time` (seconds from the pattern's start) under consecutive `curves`:
    /// the latest curve that has started rules, linear between its points, holding its last value.
    func value(at time: Double, _ curves: [HapticParameterCurve]) -> Double? {
        guard let active = curves.last(where: { $0.relativeTime <= time }) else { return nil }
        let local = time - active.relativeTime
        let points = active.controlPoints
        guard let next = points.firstIndex(where: { $0.relativeTime > local }) else { return points.last?.value }
        guard next > 0 else { return points[0].value }
        let (a, b) = (points[next - 1], points[next])
        return a.value + (b.value - a.value) * (local - a.relativeTime) / (b.relativeTime - a.relativeTime)
    }

    @Test("curves of 1 to 16 points are returned unchanged", arguments: [1, 2, 15, 16])
    func shortCurves(_ count: Int) {
        let original = ramp(count, at: 1.5)
        #expect(HapticParameterCurve.split(original) == [original])
    }

    @Test("17 points: a 16-point curve and a 2-point curve starting at the 16th point")
    func seventeen() {
        let split = HapticParameterCurve.split(ramp(17, at: 2))
        let firstPoints: [HapticParameterCurve.ControlPoint] = (0..<16).map { k in point(Double(k) * 0.25, Double(k) / 64) }
        let first = curve(.hapticIntensityControl, at: 2, firstPoints)
        let second = curve(.hapticIntensityControl, at: 5.75, [point(0, 15.0 / 64), point(0.25, 16.0 / 64)])
        #expect(split == [first, second])
    }

    @Test("31 points: two full curves sharing the 16th point")
    func thirtyOne() {
        let split = HapticParameterCurve.split(ramp(31))
        #expect(split.map(\.controlPoints.count) == [16, 16])
        #expect(split.map(\.relativeTime) == [0, 3.75])
        let secondPoints: [HapticParameterCurve.ControlPoint] = (15..<31).map { k in point(Double(k - 15) * 0.25, Double(k) / 64) }
        #expect(split[1].controlPoints == secondPoints)
    }

    @Test("33 points: 16, 16 and 3 points, each curve starting where the previous ended")
    func thirtyThree() {
        let split = HapticParameterCurve.split(ramp(33, at: 1))
        #expect(split.map(\.controlPoints.count) == [16, 16, 3])
        #expect(split.map(\.relativeTime) == [1, 4.75, 8.5])
        #expect(split[2].controlPoints == [point(0, 30.0 / 64), point(0.25, 31.0 / 64), point(0.5, 32.0 / 64)])
        for (previous, next) in zip(split, split.dropFirst()) {
            #expect(next.relativeTime == previous.endTime)
            #expect(next.controlPoints.first == point(0, previous.controlPoints.last!.value))
            #expect(next.id == previous.id)
        }
    }

    @Test("the split keeps the shape: the same value at every instant", arguments: [17, 40, 100])
    func keepsShape(_ count: Int) throws {
        // Uneven spacing and values, with float noise in the times.
        var time = 0.0
        let points = (0..<count).map { k in
            defer { time += 0.01 + 0.07 * Double(k % 5) }
            return point(time, (sin(Double(k) * 1.3) + 1) / 2)
        }
        let original = curve(.hapticSharpnessControl, at: 0.3, points)
        let split = HapticParameterCurve.split(original)
        #expect(split.allSatisfy { $0.controlPoints.count <= HapticParameterCurve.maximumControlPoints })
        #expect(split.reduce(0) { $0 + $1.controlPoints.count } == count + split.count - 1)
        #expect(abs(split.last!.endTime - original.endTime) < 1e-12)
        var sample = 0.3
        while sample <= original.endTime + 0.1 {
            let expected = try #require(value(at: sample, [original]))
            let actual = try #require(value(at: sample, split))
            #expect(abs(expected - actual) < 1e-9, "at \(sample) s")
            sample += 0.0037
        }
    }

    @Test("a pattern splits its long curves in place, keeping their order")
    func patternSplits() throws {
        let first = ramp(20)
        let second = curve(.hapticSharpnessControl, at: 1, [point(0, 0), point(1, 1)])
        let pattern = try HapticPattern(events: [], parameterCurves: [first, second])
        #expect(pattern.parameterCurves == HapticParameterCurve.split(first) + [second])
        #expect(pattern.parameterCurves.map(\.controlPoints.count) == [16, 5, 2])
    }
}
