import Foundation
import Haptics
import Testing

/// `HapticPattern.init` from code: NaN, infinities, negative times, empty curves, decreasing
/// points and waveform-less audio events are rejected with a `PatternError` naming the value.
@Suite("Pattern errors")
struct PatternErrorTests: AHAPModelBuilding {
    /// The error `HapticPattern.init` throws for these parts.
    func error(
        events: [HapticEvent] = [], parameters: [HapticDynamicParameter] = [], curves: [HapticParameterCurve] = []
    ) -> PatternError? {
        do throws(PatternError) {
            let pattern = try HapticPattern(events: events, parameters: parameters, parameterCurves: curves)
            Issue.record("accepted: \(pattern)")
            return nil
        } catch {
            return error
        }
    }

    /// Checks a `.notFinite` error (NaN payloads never compare equal, so the value is checked by kind).
    func expectNotFinite(
        _ error: PatternError?, _ location: PatternError.Location, nan: Bool = false, infinity: Double? = nil, _ message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .notFinite(let place, let value) = error else {
            Issue.record("expected notFinite, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(place == location, sourceLocation: sourceLocation)
        if nan { #expect(value.isNaN, sourceLocation: sourceLocation) }
        if let infinity { #expect(value == infinity, sourceLocation: sourceLocation) }
        #expect(error?.location == location, sourceLocation: sourceLocation)
        #expect(error?.description == message, sourceLocation: sourceLocation)
    }

    @Test("NaN event time")
    func nanEventTime() {
        expectNotFinite(
            error(events: [transient(.nan)]), .event(0, "Time"), nan: true, "events[0].Time: nan is not a finite number")
    }

    @Test("infinite event duration, on the second event")
    func infiniteDuration() {
        expectNotFinite(
            error(events: [transient(0), continuous(0, duration: .infinity)]), .event(1, "EventDuration"), infinity: .infinity,
            "events[1].EventDuration: inf is not a finite number")
    }

    @Test("NaN event parameter value")
    func nanEventParameter() {
        expectNotFinite(
            error(events: [transient(0, [param(.hapticIntensity, 1), param(.hapticSharpness, .nan)])]), .event(0, "HapticSharpness"),
            nan: true, "events[0].HapticSharpness: nan is not a finite number")
    }

    @Test("NaN dynamic parameter value and infinite dynamic parameter time")
    func dynamicParameter() {
        expectNotFinite(
            error(parameters: [control(.hapticIntensityControl, .nan, at: 0)]), .parameter(0, "ParameterValue"), nan: true,
            "parameters[0].ParameterValue: nan is not a finite number")
        expectNotFinite(
            error(parameters: [control(.hapticIntensityControl, 1, at: 0), control(.hapticSharpnessControl, 0, at: -.infinity)]),
            .parameter(1, "Time"), infinity: -.infinity, "parameters[1].Time: -inf is not a finite number")
    }

    @Test("infinite curve time and NaN control point value")
    func curveValues() {
        expectNotFinite(
            error(curves: [curve(.hapticIntensityControl, at: .infinity, [point(0, 1)])]), .curve(0, "Time"), infinity: .infinity,
            "parameterCurves[0].Time: inf is not a finite number")
        expectNotFinite(
            error(curves: [
                curve(.hapticIntensityControl, at: 0, [point(0, 1)]),
                curve(.hapticSharpnessControl, at: 0, [point(0, 1), point(0.5, 0), point(1, .nan)]),
            ]),
            .controlPoint(1, 2, "ParameterValue"), nan: true, "parameterCurves[1].controlPoints[2].ParameterValue: nan is not a finite number")
        expectNotFinite(
            error(curves: [curve(.hapticSharpnessControl, at: 0, [point(0, 1), point(.nan, 0)])]), .controlPoint(0, 1, "Time"), nan: true,
            "parameterCurves[0].controlPoints[1].Time: nan is not a finite number")
    }

    @Test("negative times and durations")
    func negative() {
        let event = error(events: [transient(-1)])
        #expect(event == .negative(.event(0, "Time"), -1))
        #expect(event?.description == "events[0].Time: -1 is negative; times and durations must be ≥ 0 seconds")
        let duration = error(events: [continuous(0, duration: -0.5)])
        #expect(duration?.description == "events[0].EventDuration: -0.5 is negative; times and durations must be ≥ 0 seconds")
        let parameter = error(parameters: [control(.hapticIntensityControl, 1, at: -0.25)])
        #expect(parameter == .negative(.parameter(0, "Time"), -0.25))
        let curveTime = error(curves: [curve(.hapticIntensityControl, at: -2, [point(0, 1)])])
        #expect(curveTime?.description == "parameterCurves[0].Time: -2 is negative; times and durations must be ≥ 0 seconds")
        let pointTime = error(curves: [curve(.hapticIntensityControl, at: 0, [point(-0.125, 1)])])
        #expect(pointTime == .negative(.controlPoint(0, 0, "Time"), -0.125))
    }

    @Test("times up to 3600 s are accepted, later ones and later ends rejected with the value")
    func timeLimit() throws {
        #expect(HapticPattern.maximumTime == 3600)
        let atLimit = try HapticPattern(
            events: [transient(3600), continuous(3570, duration: 30)], parameters: [control(.hapticIntensityControl, 1, at: 3600)],
            parameterCurves: [curve(.hapticSharpnessControl, at: 3000, [point(0, 0), point(600, 1)])])
        #expect(atLimit.duration == 3600)

        let late = error(events: [transient(0), transient(3600.25)])
        #expect(late == .tooLate(.event(1, "Time"), 3600.25))
        #expect(late?.description == "events[1].Time: 3600.25 s is outside 0...3600 s, the times a pattern may use")
        #expect(error(events: [transient(.greatestFiniteMagnitude)]) == .tooLate(.event(0, "Time"), .greatestFiniteMagnitude))
        #expect(error(parameters: [control(.hapticIntensityControl, 1, at: 1e19)]) == .tooLate(.parameter(0, "Time"), 1e19))
        #expect(error(curves: [curve(.hapticIntensityControl, at: 4000, [point(0, 1)])]) == .tooLate(.curve(0, "Time"), 4000))
        #expect(error(curves: [curve(.hapticIntensityControl, at: 0, [point(0, 1), point(5000, 0)])]) == .tooLate(.controlPoint(0, 1, "Time"), 5000))

        // A continuous event is clamped to 30 s first; its end is checked after.
        let ends = error(events: [continuous(3590, duration: 45)])
        #expect(ends == .endsTooLate(.event(0, "EventDuration"), 30, end: 3620))
        #expect(ends?.description == "events[0].EventDuration: 30 s ends at 3620 s from the pattern's start, past the 3600 s a pattern may last")
        let audio = error(events: [HapticEvent(eventType: .audioContinuous, relativeTime: 100, duration: 3550)])
        #expect(audio == .endsTooLate(.event(0, "EventDuration"), 3550, end: 3650))
        let point = error(curves: [curve(.hapticIntensityControl, at: 3000, [point(0, 1), point(600.5, 0)])])
        #expect(point == .endsTooLate(.controlPoint(0, 1, "Time"), 600.5, end: 3600.5))
    }

    @Test("a long curve ending at 3600 s splits into curves that export and import unchanged")
    func splitAtTheLimit() throws {
        let start = 1212.5352985955662, sixteenth = 914.9958010723009, last = 2387.464701404434
        #expect(start + last <= HapticPattern.maximumTime)
        #expect((start + sixteenth) + (last - sixteenth) > HapticPattern.maximumTime, "splitting moves the end up by a rounding step")
        let points = (0..<15).map { point(Double($0), 0.5) } + [point(sixteenth, 1), point(last, 0)]
        let pattern = try HapticPattern(events: [], parameterCurves: [curve(.hapticIntensityControl, at: start, points)])
        #expect(pattern.parameterCurves.count == 2)
        #expect(try HapticPattern(ahap: pattern.ahapText()) == pattern)
    }

    @Test("an empty curve, decreasing points and an AudioCustom event without a waveform")
    func structure() {
        let empty = error(curves: [curve(.hapticIntensityControl, at: 0, [])])
        #expect(empty == .emptyCurve(.curve(0, "ParameterCurveControlPoints")))
        #expect(empty?.description == "parameterCurves[0].ParameterCurveControlPoints: a parameter curve needs at least one control point")

        let decreasing = error(curves: [curve(.hapticIntensityControl, at: 0, [point(0, 0), point(0.5, 1), point(0.25, 0)])])
        #expect(decreasing == .decreasingTime(.controlPoint(0, 2, "Time"), 0.25, after: 0.5))
        #expect(
            decreasing?.description
                == "parameterCurves[0].controlPoints[2].Time: control point time 0.25 s is earlier than the previous point's 0.5 s")

        let noPath = error(events: [HapticEvent(eventType: .audioCustom, relativeTime: 0)])
        #expect(noPath == .missingWaveformPath(.event(0, "EventWaveformPath")))
        #expect(noPath?.description == "events[0].EventWaveformPath: an AudioCustom event needs EventWaveformPath")
        let emptyPath = error(events: [transient(0), HapticEvent(eventType: .audioCustom, relativeTime: 0, waveformPath: "")])
        #expect(emptyPath == .missingWaveformPath(.event(1, "EventWaveformPath")))
    }

    @Test("equal control point times are allowed (a step)")
    func equalPointTimes() throws {
        let step = curve(.hapticIntensityControl, at: 0, [point(0, 0), point(0.5, 0), point(0.5, 1), point(1, 1)])
        let pattern = try HapticPattern(events: [], parameterCurves: [step])
        #expect(pattern.parameterCurves == [step])
    }
}
