import HapticsSupport

/// A haptic pattern: events, dynamic parameters and parameter curves on one timeline
/// (Core Haptics' `CHHapticPattern`). Create one in code or from an AHAP file (``init(ahap:)``).
///
/// Creating a pattern checks it the way Core Haptics does: out-of-range values are clamped
/// (a sharpness of -1 becomes 0, a 45 s continuous event lasts 30 s), curves longer than 16
/// points are split into consecutive curves with the same shape, and NaN, infinities and
/// negative times or durations are rejected with a ``PatternError`` naming the value.
///
/// Times are bounded: everything in a pattern happens within ``maximumTime`` (one hour) of its
/// start. An event's `Time`, its end (`Time` + `EventDuration`), a parameter's `Time`, a curve's
/// `Time` and each control point's time (the curve's `Time` plus the point's) must lie in
/// 0…3600 s (to the nanosecond); a later one is rejected with a ``PatternError`` naming it, the
/// value and the limit.
/// Core Haptics documents no such limit but plays continuous events for at most 30 s; real
/// patterns last seconds to about a minute. The bound keeps every time a pattern produces, scaled
/// by any playback rate, far inside what the engine's nanosecond clock can hold.
public struct HapticPattern: Sendable, Hashable {
    /// The latest time, in seconds from a pattern's start, at which anything in it may happen or end: 3600 s.
    public static let maximumTime = 3600.0

    /// What the bound allows past ``maximumTime``: a nanosecond, so that rounding (a split curve's
    /// start plus its points' times) never turns an accepted pattern into one its export cannot
    /// be read back as.
    static let timeTolerance = 1e-9

    /// The events, in the order given (not necessarily time order).
    public private(set) var events: [HapticEvent]
    /// The dynamic parameter changes, in the order given.
    public private(set) var parameters: [HapticDynamicParameter]
    /// The parameter curves, each of at most 16 points.
    public private(set) var parameterCurves: [HapticParameterCurve]
    /// AHAP `Version`, if the source gave one.
    public var version: Double?
    /// AHAP `Metadata` (`Project`, `Created`, `Description` and any other keys), kept for export.
    public var metadata: JSONObject?

    /// A checked pattern. Throws ``PatternError`` on NaN, infinities and negative times or durations.
    public init(
        events: [HapticEvent], parameters: [HapticDynamicParameter] = [], parameterCurves: [HapticParameterCurve] = []
    ) throws(PatternError) {
        self.events = try events.enumerated().map { index, event throws(PatternError) in try Self.checked(event, index: index) }
        self.parameters = try parameters.enumerated().map { index, parameter throws(PatternError) in
            try Self.checked(parameter) { .parameter(index, $0) }
        }
        var curves: [HapticParameterCurve] = []
        for (index, curve) in parameterCurves.enumerated() {
            curves += HapticParameterCurve.split(try Self.checked(curve, index: index))
        }
        self.parameterCurves = curves
    }

    /// How long the pattern lasts: the end of its last event, parameter or curve, in seconds.
    public var duration: Double {
        max(
            events.map(\.endTime).max() ?? 0, parameters.map(\.relativeTime).max() ?? 0,
            parameterCurves.map(\.endTime).max() ?? 0)
    }

    /// The events haptic devices render, in time order.
    public var hapticEvents: [HapticEvent] {
        events.filter { $0.type.isHaptic }.sorted { $0.relativeTime < $1.relativeTime }
    }

    static func time(_ value: Double, _ location: PatternError.Location) throws(PatternError) -> Double {
        guard value.isFinite else { throw .notFinite(location, value) }
        guard value >= 0 else { throw .negative(location, value) }
        guard value <= maximumTime + timeTolerance else { throw .tooLate(location, value) }
        return value
    }

    /// Checks that something starting at `start` and lasting `length` ends within ``maximumTime``.
    static func end(_ start: Double, plus length: Double, _ location: PatternError.Location) throws(PatternError) {
        guard start + length <= maximumTime + timeTolerance else { throw .endsTooLate(location, length, end: start + length) }
    }

    static func finite(_ value: Double, _ location: PatternError.Location) throws(PatternError) -> Double {
        guard value.isFinite else { throw .notFinite(location, value) }
        return value
    }

    static func checked(_ event: HapticEvent, index: Int) throws(PatternError) -> HapticEvent {
        var event = event
        event.relativeTime = try time(event.relativeTime, .event(index, "Time"))
        event.duration = try time(event.duration, .event(index, "EventDuration"))
        if event.type == .hapticContinuous { event.duration = min(event.duration, HapticEvent.maximumContinuousDuration) }
        try end(event.relativeTime, plus: event.duration, .event(index, "EventDuration"))
        event.parameters = try event.parameters.map { parameter throws(PatternError) in
            let value = try finite(parameter.value, .event(index, parameter.id.rawValue))
            return HapticEventParameter(parameterID: parameter.id, value: min(max(value, parameter.id.range.lowerBound), parameter.id.range.upperBound))
        }
        if event.type == .audioCustom, (event.waveformPath ?? "").isEmpty {
            throw .missingWaveformPath(.event(index, "EventWaveformPath"))
        }
        return event
    }

    static func checked(_ parameter: HapticDynamicParameter, location: (String) -> PatternError.Location) throws(PatternError) -> HapticDynamicParameter {
        var parameter = parameter
        parameter.relativeTime = try time(parameter.relativeTime, location("Time"))
        let value = try finite(parameter.value, location("ParameterValue"))
        parameter.value = min(max(value, parameter.id.range.lowerBound), parameter.id.range.upperBound)
        return parameter
    }

    static func checked(_ curve: HapticParameterCurve, index: Int) throws(PatternError) -> HapticParameterCurve {
        var curve = curve
        curve.relativeTime = try time(curve.relativeTime, .curve(index, "Time"))
        guard !curve.controlPoints.isEmpty else { throw .emptyCurve(.curve(index, "ParameterCurveControlPoints")) }
        var previous = 0.0
        curve.controlPoints = try curve.controlPoints.enumerated().map { point, control throws(PatternError) in
            let when = try time(control.relativeTime, .controlPoint(index, point, "Time"))
            guard when >= previous else { throw .decreasingTime(.controlPoint(index, point, "Time"), when, after: previous) }
            try end(curve.relativeTime, plus: when, .controlPoint(index, point, "Time"))
            previous = when
            let value = try finite(control.value, .controlPoint(index, point, "ParameterValue"))
            return .init(relativeTime: when, value: min(max(value, curve.id.range.lowerBound), curve.id.range.upperBound))
        }
        return curve
    }
}

/// Why a pattern was rejected. Each case names the value by its place in the pattern.
public enum PatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in a pattern a value is: an event, a parameter, a curve or a curve's point, and the field.
    public enum Location: Sendable, Hashable, CustomStringConvertible {
        case event(Int, String)
        case parameter(Int, String)
        case curve(Int, String)
        case controlPoint(Int, Int, String)

        public var description: String {
            switch self {
            case .event(let index, let field): "events[\(index)].\(field)"
            case .parameter(let index, let field): "parameters[\(index)].\(field)"
            case .curve(let index, let field): "parameterCurves[\(index)].\(field)"
            case .controlPoint(let curve, let point, let field): "parameterCurves[\(curve)].controlPoints[\(point)].\(field)"
            }
        }
    }

    /// NaN or an infinity.
    case notFinite(Location, Double)
    /// A negative time or duration.
    case negative(Location, Double)
    /// A time or duration past ``HapticPattern/maximumTime``.
    case tooLate(Location, Double)
    /// A duration, or a control point's time, that ends past ``HapticPattern/maximumTime`` once
    /// added to its start: the value and where it ends.
    case endsTooLate(Location, Double, end: Double)
    /// An `AudioCustom` event without `EventWaveformPath`.
    case missingWaveformPath(Location)
    /// A curve without control points.
    case emptyCurve(Location)
    /// A control point earlier than the one before it.
    case decreasingTime(Location, Double, after: Double)

    /// Where the problem is.
    public var location: Location {
        switch self {
        case .notFinite(let location, _), .negative(let location, _), .tooLate(let location, _), .endsTooLate(let location, _, _),
            .missingWaveformPath(let location), .emptyCurve(let location), .decreasingTime(let location, _, _):
            location
        }
    }

    /// The problem without its location.
    public var problem: String {
        switch self {
        case .notFinite(_, let value): "\(value) is not a finite number"
        case .negative(_, let value): "\(JSONValue.format(value)) is negative; times and durations must be ≥ 0 seconds"
        case .tooLate(_, let value):
            "\(JSONValue.format(value)) s is outside 0...\(JSONValue.format(HapticPattern.maximumTime)) s, the times a pattern may use"
        case .endsTooLate(_, let value, let end):
            "\(JSONValue.format(value)) s ends at \(JSONValue.format(end)) s from the pattern's start, past the "
                + "\(JSONValue.format(HapticPattern.maximumTime)) s a pattern may last"
        case .missingWaveformPath: "an AudioCustom event needs EventWaveformPath"
        case .emptyCurve: "a parameter curve needs at least one control point"
        case .decreasingTime(_, let value, let previous):
            "control point time \(JSONValue.format(value)) s is earlier than the previous point's \(JSONValue.format(previous)) s"
        }
    }

    public var description: String { "\(location): \(problem)" }
}
