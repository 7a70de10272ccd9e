/// An adaptive-trigger effect: what the motor behind a trigger (the DualSense's L2 and R2) does
/// while the trigger is pulled. Named as Apple's `GCDualSenseAdaptiveTrigger` modes, with positions
/// along the travel and strengths as fractions 0…1 and frequencies in Hz.
///
/// The travel has ``zoneCount`` discrete positions, as Apple's
/// `GCDualSenseAdaptiveTriggerDiscretePositionCount` says (0 near rest, 9 fully pulled), and
/// strengths have 8 steps: a position `p` is zone `(p × 9)` and a strength `s` step `(s × 8)`, each
/// rounded to the nearest, ties to even. A strength (or amplitude) that rounds to 0 asks for
/// nothing, so the effect is ``off``, as the firmware's own effects do. ``plan()`` checks an effect
/// and gives its zones and steps; the bytes a DualSense takes are written from that plan.
public enum AdaptiveTriggerEffect: Sendable, Hashable {
    /// No effect: the trigger moves freely.
    case off
    /// Resistance from `position` to the end of the travel, at `strength` (Apple's `setModeFeedback(startPosition:resistiveStrength:)`).
    case feedback(position: Double, strength: Double)
    /// Resistance per zone: 10 strengths, 0 where the trigger moves freely (`setModeFeedback(resistiveStrengths:)`).
    case multiplePositionFeedback(strengths: [Double])
    /// Resistance rising or falling linearly from `startStrength` at `startPosition` to `endStrength` at
    /// `endPosition`, held there to the end (`setModeSlopeFeedback`). Strengths must give at least step 1.
    case slopeFeedback(startPosition: Double, endPosition: Double, startStrength: Double, endStrength: Double)
    /// Resistance between `startPosition` and `endPosition` that gives way with a click, like a gun's
    /// trigger (`setModeWeapon`). The firmware takes start zones 2…7 and end zones from start + 1 to 8.
    case weapon(startPosition: Double, endPosition: Double, strength: Double)
    /// The trigger vibrates from `position` to the end at `amplitude`, `frequency` Hz (1…255) (`setModeVibration(startPosition:amplitude:frequency:)`).
    case vibration(position: Double, amplitude: Double, frequency: Double)
    /// Vibration per zone: 10 amplitudes, 0 where it is still, at `frequency` Hz (`setModeVibration(amplitudes:frequency:)`).
    case multiplePositionVibration(amplitudes: [Double], frequency: Double)

    /// Discrete positions along the travel.
    public static let zoneCount = 10
    /// Strength steps above 0.
    public static let stepCount = 8

    /// An effect in the trigger's own terms: zones 0…9, steps 0…8, whole Hz.
    public enum Plan: Sendable, Hashable {
        /// The trigger moves freely.
        case off
        /// Resistance (`vibrating` false) or vibration at `frequency` Hz, a step per zone (at least one above 0).
        case zones(steps: [Int], vibrating: Bool, frequency: Int)
        /// Resistance from zone `start` that gives way at zone `end`, at step `step` (1…8).
        case weapon(start: Int, end: Int, step: Int)
    }

    /// The effect's zones and steps.
    ///
    /// - Throws: ``AdaptiveTriggerError`` naming the parameter, its value and the range it must be in.
    public func plan() throws(AdaptiveTriggerError) -> Plan {
        switch self {
        case .off:
            return .off
        case .feedback(let position, let strength):
            let zone = try Self.zone(position, "position")
            let step = try Self.step(strength, "strength")
            return Self.zones((0..<Self.zoneCount).map { $0 >= zone ? step : 0 }, vibrating: false, frequency: 0)
        case .multiplePositionFeedback(let strengths):
            return Self.zones(try Self.steps(strengths, "strengths"), vibrating: false, frequency: 0)
        case .slopeFeedback(let startPosition, let endPosition, let startStrength, let endStrength):
            let start = try Self.zone(startPosition, "startPosition")
            let end = try Self.zone(endPosition, "endPosition")
            guard start <= 8 else { throw .outOfRange(parameter: "startPosition", value: startPosition, expected: "0…0.944 (zones 0…8)") }
            guard end > start else {
                throw .outOfRange(parameter: "endPosition", value: endPosition, expected: "a zone after startPosition's (\(start)): over \(Self.edge(start))")
            }
            let first = try Self.step(startStrength, "startStrength"), last = try Self.step(endStrength, "endStrength")
            guard first >= 1 else { throw .outOfRange(parameter: "startStrength", value: startStrength, expected: "over 0.0625 up to 1 (steps 1…8)") }
            guard last >= 1 else { throw .outOfRange(parameter: "endStrength", value: endStrength, expected: "over 0.0625 up to 1 (steps 1…8)") }
            let slope = Double(last - first) / Double(end - start)
            let steps = (0..<Self.zoneCount).map { index in
                index < start ? 0 : index <= end ? Int((Double(first) + slope * Double(index - start)).rounded(.toNearestOrEven)) : last
            }
            return Self.zones(steps, vibrating: false, frequency: 0)
        case .weapon(let startPosition, let endPosition, let strength):
            let start = try Self.zone(startPosition, "startPosition")
            let end = try Self.zone(endPosition, "endPosition")
            guard (2...7).contains(start) else { throw .outOfRange(parameter: "startPosition", value: startPosition, expected: "0.167…0.833 (zones 2…7)") }
            guard end > start, end <= 8 else {
                throw .outOfRange(parameter: "endPosition", value: endPosition, expected: "over \(Self.edge(start)) and under 0.944 (zones \(start + 1)…8)")
            }
            let step = try Self.step(strength, "strength")
            return step > 0 ? .weapon(start: start, end: end, step: step) : .off
        case .vibration(let position, let amplitude, let frequency):
            let zone = try Self.zone(position, "position")
            let step = try Self.step(amplitude, "amplitude")
            let hertz = try Self.frequency(frequency)
            return Self.zones((0..<Self.zoneCount).map { $0 >= zone ? step : 0 }, vibrating: true, frequency: hertz)
        case .multiplePositionVibration(let amplitudes, let frequency):
            let steps = try Self.steps(amplitudes, "amplitudes")
            return Self.zones(steps, vibrating: true, frequency: try Self.frequency(frequency))
        }
    }

    /// A zone plan, or ``Plan/off`` when no zone has a step.
    static func zones(_ steps: [Int], vibrating: Bool, frequency: Int) -> Plan {
        steps.contains { $0 > 0 } ? .zones(steps: steps, vibrating: vibrating, frequency: frequency) : .off
    }

    /// The zone of a position 0…1.
    static func zone(_ position: Double, _ name: String) throws(AdaptiveTriggerError) -> Int {
        guard position.isFinite, (0...1).contains(position) else { throw .outOfRange(parameter: name, value: position, expected: "0…1 of the travel") }
        return Int((position * Double(zoneCount - 1)).rounded(.toNearestOrEven))
    }

    /// The step (0…8) of a strength or amplitude 0…1.
    static func step(_ strength: Double, _ name: String) throws(AdaptiveTriggerError) -> Int {
        guard strength.isFinite, (0...1).contains(strength) else { throw .outOfRange(parameter: name, value: strength, expected: "0…1") }
        return Int((strength * Double(stepCount)).rounded(.toNearestOrEven))
    }

    /// The steps of 10 per-zone strengths.
    static func steps(_ values: [Double], _ name: String) throws(AdaptiveTriggerError) -> [Int] {
        guard values.count == zoneCount else { throw .zoneCount(parameter: name, count: values.count) }
        var steps: [Int] = []
        for (index, value) in values.enumerated() { steps.append(try step(value, "\(name)[\(index)]")) }
        return steps
    }

    /// A frequency in whole Hz, 1…255.
    static func frequency(_ hertz: Double) throws(AdaptiveTriggerError) -> Int {
        guard hertz.isFinite, hertz > 0.5, hertz < 255.5 else { throw .outOfRange(parameter: "frequency", value: hertz, expected: "1…255 Hz") }
        return Int(hertz.rounded(.toNearestOrEven))
    }

    /// The lowest position past zone `zone`, for messages ("0.5": zone 4's upper edge is 4.5 / 9).
    static func edge(_ zone: Int) -> String {
        let value = (Double(zone) + 0.5) / 9
        return String((value * 1000).rounded() / 1000)
    }
}

/// Why a trigger effect cannot be played: the parameter, what it was, and what it must be.
public enum AdaptiveTriggerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A value outside its range (or not a number).
    case outOfRange(parameter: String, value: Double, expected: String)
    /// A per-zone list that does not have one value per zone.
    case zoneCount(parameter: String, count: Int)
    /// A contract mode (`haptics_trigger_mode`) this build does not know.
    case unknownMode(UInt32)
    /// An effect name the keyed form does not have.
    case unknownEffect(String)
    /// The keyed form's parameters do not fit the effect: a key missing, unknown, twice, or of the wrong kind.
    case parameters(effect: String, problem: String)

    public var description: String {
        switch self {
        case .outOfRange(let parameter, let value, let expected): "trigger effect: \(parameter) \(value) is outside \(expected)"
        case .zoneCount(let parameter, let count):
            "trigger effect: \(parameter) has \(count) values; the trigger has \(AdaptiveTriggerEffect.zoneCount) zones, one value each"
        case .unknownEffect(let name):
            "trigger effect: '\(name)' is unknown; the effects are \(AdaptiveTriggerEffect.keyedForms.map(\.name).joined(separator: ", "))"
        case .parameters(let effect, let problem): "trigger effect \(effect): \(problem)"
        case .unknownMode(let mode): "trigger effect: mode \(mode) is unknown; the modes are 0…6 (haptics_trigger_mode in haptics_backend.h)"
        }
    }
}
