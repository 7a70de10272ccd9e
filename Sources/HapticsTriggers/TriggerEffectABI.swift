import CHapticsABI

extension AdaptiveTriggerEffect {
    /// The effect as the plugin contract carries it (ABI 1.6, `haptics_trigger_effect_v1`).
    public var cValue: haptics_trigger_effect_v1 {
        var raw = haptics_trigger_effect_v1()
        func zones(_ values: [Double]) {
            withUnsafeMutableBytes(of: &raw.zones) { bytes in
                let floats = bytes.bindMemory(to: Float.self)
                for (index, value) in values.prefix(floats.count).enumerated() { floats[index] = Float(value) }
            }
        }
        switch self {
        case .off:
            raw.mode = HAPTICS_TRIGGER_OFF.rawValue
        case .feedback(let position, let strength):
            raw.mode = HAPTICS_TRIGGER_FEEDBACK.rawValue
            raw.start_position = Float(position)
            raw.strength = Float(strength)
        case .multiplePositionFeedback(let strengths):
            raw.mode = HAPTICS_TRIGGER_MULTIPLE_POSITION_FEEDBACK.rawValue
            zones(strengths)
        case .slopeFeedback(let startPosition, let endPosition, let startStrength, let endStrength):
            raw.mode = HAPTICS_TRIGGER_SLOPE_FEEDBACK.rawValue
            raw.start_position = Float(startPosition)
            raw.end_position = Float(endPosition)
            raw.strength = Float(startStrength)
            raw.end_strength = Float(endStrength)
        case .weapon(let startPosition, let endPosition, let strength):
            raw.mode = HAPTICS_TRIGGER_WEAPON.rawValue
            raw.start_position = Float(startPosition)
            raw.end_position = Float(endPosition)
            raw.strength = Float(strength)
        case .vibration(let position, let amplitude, let frequency):
            raw.mode = HAPTICS_TRIGGER_VIBRATION.rawValue
            raw.start_position = Float(position)
            raw.strength = Float(amplitude)
            raw.frequency_hz = Float(frequency)
        case .multiplePositionVibration(let amplitudes, let frequency):
            raw.mode = HAPTICS_TRIGGER_MULTIPLE_POSITION_VIBRATION.rawValue
            zones(amplitudes)
            raw.frequency_hz = Float(frequency)
        }
        return raw
    }

    /// The effect a contract's `haptics_trigger_effect_v1` describes. A multiple-position list
    /// keeps a list's count (``zoneCount``) whatever the mode.
    ///
    /// - Throws: ``AdaptiveTriggerError/unknownMode(_:)`` for a mode this build does not know.
    public init(_ raw: haptics_trigger_effect_v1) throws(AdaptiveTriggerError) {
        // The decimal the host wrote (0.3), not the float's binary neighbour (0.30000001192092896):
        // a float's description is the shortest text that reads back as the same float.
        func decimal(_ value: Float) -> Double { value.isFinite ? Double("\(value)") ?? Double(value) : Double(value) }
        let zones = withUnsafeBytes(of: raw.zones) { Array($0.bindMemory(to: Float.self)).map(decimal) }
        let start = decimal(raw.start_position), end = decimal(raw.end_position)
        let strength = decimal(raw.strength), frequency = decimal(raw.frequency_hz)
        switch haptics_trigger_mode(raw.mode) {
        case HAPTICS_TRIGGER_OFF: self = .off
        case HAPTICS_TRIGGER_FEEDBACK: self = .feedback(position: start, strength: strength)
        case HAPTICS_TRIGGER_MULTIPLE_POSITION_FEEDBACK: self = .multiplePositionFeedback(strengths: zones)
        case HAPTICS_TRIGGER_SLOPE_FEEDBACK:
            self = .slopeFeedback(startPosition: start, endPosition: end, startStrength: strength, endStrength: decimal(raw.end_strength))
        case HAPTICS_TRIGGER_WEAPON: self = .weapon(startPosition: start, endPosition: end, strength: strength)
        case HAPTICS_TRIGGER_VIBRATION: self = .vibration(position: start, amplitude: strength, frequency: frequency)
        case HAPTICS_TRIGGER_MULTIPLE_POSITION_VIBRATION: self = .multiplePositionVibration(amplitudes: zones, frequency: frequency)
        default: throw .unknownMode(raw.mode)
        }
    }
}
