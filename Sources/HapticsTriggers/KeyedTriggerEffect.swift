/// A parameter of an effect in its keyed form: a number, or one number per zone.
public enum TriggerParameter: Sendable, Hashable {
    /// A position, strength, amplitude (0…1) or frequency (Hz).
    case number(Double)
    /// Per-zone strengths or amplitudes, ``AdaptiveTriggerEffect/zoneCount`` of them.
    case list([Double])
}

extension AdaptiveTriggerEffect {
    /// Every effect's name in the keyed form, with its parameters' keys, in order.
    public static let keyedForms: [(name: String, keys: [String])] = [
        ("off", []),
        ("feedback", ["position", "strength"]),
        ("multiple-position-feedback", ["strengths"]),
        ("slope-feedback", ["start-position", "end-position", "start-strength", "end-strength"]),
        ("weapon", ["start-position", "end-position", "strength"]),
        ("vibration", ["position", "amplitude", "frequency"]),
        ("multiple-position-vibration", ["amplitudes", "frequency"]),
    ]

    /// The keys whose value is a list, one number per zone.
    public static let listKeys: Set<String> = ["strengths", "amplitudes"]

    /// The effect's name and parameters in the keyed form that hapticsd's `SetTriggers` (an `a{sv}`)
    /// and `haptic-cal trigger` (text) share: positions, strengths and amplitudes 0…1, frequencies in Hz.
    public var keyed: (name: String, parameters: [(key: String, value: TriggerParameter)]) {
        switch self {
        case .off: ("off", [])
        case .feedback(let position, let strength): ("feedback", [("position", .number(position)), ("strength", .number(strength))])
        case .multiplePositionFeedback(let strengths): ("multiple-position-feedback", [("strengths", .list(strengths))])
        case .slopeFeedback(let startPosition, let endPosition, let startStrength, let endStrength):
            (
                "slope-feedback",
                [
                    ("start-position", .number(startPosition)), ("end-position", .number(endPosition)), ("start-strength", .number(startStrength)),
                    ("end-strength", .number(endStrength)),
                ]
            )
        case .weapon(let startPosition, let endPosition, let strength):
            ("weapon", [("start-position", .number(startPosition)), ("end-position", .number(endPosition)), ("strength", .number(strength))])
        case .vibration(let position, let amplitude, let frequency):
            ("vibration", [("position", .number(position)), ("amplitude", .number(amplitude)), ("frequency", .number(frequency))])
        case .multiplePositionVibration(let amplitudes, let frequency):
            ("multiple-position-vibration", [("amplitudes", .list(amplitudes)), ("frequency", .number(frequency))])
        }
    }

    /// The effect `name` with `parameters` (every key of its form, no other), as ``keyed`` gives them.
    /// The values are checked as ``plan()`` checks them only when the effect is played.
    ///
    /// - Throws: ``AdaptiveTriggerError/unknownEffect(_:)``, ``AdaptiveTriggerError/parameters(effect:problem:)``.
    public init(name: String, parameters: [String: TriggerParameter]) throws(AdaptiveTriggerError) {
        guard let form = Self.keyedForms.first(where: { $0.name == name }) else { throw .unknownEffect(name) }
        let expected = form.keys.isEmpty ? "it takes none" : "it takes " + form.keys.joined(separator: ", ")
        if let extra = parameters.keys.sorted().first(where: { !form.keys.contains($0) }) {
            throw .parameters(effect: name, problem: "unknown parameter '\(extra)'; \(expected)")
        }
        if let missing = form.keys.first(where: { parameters[$0] == nil }) {
            throw .parameters(effect: name, problem: "'\(missing)' is missing; \(expected)")
        }
        func number(_ key: String) throws(AdaptiveTriggerError) -> Double {
            guard case .number(let value)? = parameters[key] else {
                throw .parameters(effect: name, problem: "'\(key)' is one number, not a list")
            }
            return value
        }
        func list(_ key: String) throws(AdaptiveTriggerError) -> [Double] {
            guard case .list(let values)? = parameters[key] else {
                throw .parameters(effect: name, problem: "'\(key)' is a list of \(Self.zoneCount) numbers, one per zone")
            }
            return values
        }
        switch name {
        case "feedback": self = .feedback(position: try number("position"), strength: try number("strength"))
        case "multiple-position-feedback": self = .multiplePositionFeedback(strengths: try list("strengths"))
        case "slope-feedback":
            self = .slopeFeedback(
                startPosition: try number("start-position"), endPosition: try number("end-position"), startStrength: try number("start-strength"),
                endStrength: try number("end-strength"))
        case "weapon": self = .weapon(startPosition: try number("start-position"), endPosition: try number("end-position"), strength: try number("strength"))
        case "vibration": self = .vibration(position: try number("position"), amplitude: try number("amplitude"), frequency: try number("frequency"))
        case "multiple-position-vibration": self = .multiplePositionVibration(amplitudes: try list("amplitudes"), frequency: try number("frequency"))
        default: self = .off
        }
    }

    /// The effect written as text: `off`, or its name, a colon and its parameters as `key=value`
    /// separated by commas, a list's values by slashes:
    /// `weapon:start-position=0.3,end-position=0.6,strength=1`,
    /// `multiple-position-feedback:strengths=0/0/0/0.5/0.5/0.5/1/1/1/1`.
    ///
    /// - Throws: ``AdaptiveTriggerError`` naming what is wrong and what the form takes.
    public init(text: String) throws(AdaptiveTriggerError) {
        let (name, rest) = text.firstIndex(of: ":").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, "")
        var parameters: [String: TriggerParameter] = [:]
        for item in rest.split(separator: ",", omittingEmptySubsequences: false) where !rest.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .parameters(effect: name, problem: "'\(item)' is not key=value") }
            let key = String(parts[0])
            let values = parts[1].split(separator: "/", omittingEmptySubsequences: false).map { Double($0) }
            guard let numbers = values as? [Double] else {
                throw .parameters(effect: name, problem: "'\(key)=\(parts[1])' is not a number (or numbers separated by /)")
            }
            guard parameters[key] == nil else { throw .parameters(effect: name, problem: "'\(key)' is given twice") }
            parameters[key] = Self.listKeys.contains(key) ? .list(numbers) : numbers.count == 1 ? .number(numbers[0]) : .list(numbers)
        }
        try self.init(name: name, parameters: parameters)
    }

    /// The text form ``init(text:)`` reads.
    public var text: String {
        let (name, parameters) = keyed
        guard !parameters.isEmpty else { return name }
        func format(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value) }
        let items = parameters.map { key, value in
            switch value {
            case .number(let number): "\(key)=\(format(number))"
            case .list(let numbers): "\(key)=" + numbers.map(format).joined(separator: "/")
            }
        }
        return name + ":" + items.joined(separator: ",")
    }
}

extension AdaptiveTriggerError {
    /// The same error with the parameter named as the keyed form names it (`start-position`, not
    /// `startPosition`): what `haptic-cal trigger` and hapticsd's `SetTriggers` report.
    public var inKeyedForm: AdaptiveTriggerError {
        func kebab(_ name: String) -> String {
            var result = ""
            for character in name {
                if character.isUppercase {
                    result += "-" + character.lowercased()
                } else {
                    result.append(character)
                }
            }
            return result
        }
        switch self {
        case .outOfRange(let parameter, let value, let expected): return .outOfRange(parameter: kebab(parameter), value: value, expected: expected)
        case .zoneCount(let parameter, let count): return .zoneCount(parameter: kebab(parameter), count: count)
        default: return self
        }
    }
}
