import HapticsSupport

/// The user's haptics settings: off, a global intensity scale, and the overuse guard.
///
/// Read from `$XDG_CONFIG_HOME/haptics/policy.json` (else `~/.config/haptics/policy.json`), then
/// overridden by the environment: `HAPTICS_DISABLE=1` turns haptics off, `HAPTICS_INTENSITY_SCALE=0.5`
/// halves every intensity. The file:
///
/// ```json
/// { "enabled": true, "intensity_scale": 0.8, "minimum_interval_ms": { "selection": 20, "impact": 30 } }
/// ```
///
/// Ranges (an error names the file or variable, the key, the value and the range; unknown keys
/// are errors): `intensity_scale` and `HAPTICS_INTENSITY_SCALE` 0…1; each `minimum_interval_ms`
/// 0…10000 ms. `HAPTICS_DISABLE` is any text; empty or `0` leaves haptics on.
public struct HapticPolicy: Sendable, Hashable {
    /// Whether haptics play at all. When off, players run and complete but devices stay silent.
    public var isEnabled: Bool
    /// Multiplies every intensity, 0 … 1.
    public var intensityScale: Double
    /// The shortest time between two feedbacks of one kind (`selection`, `impact`, …), in seconds;
    /// feedback arriving sooner is coalesced (see ``OveruseGuard``).
    public var minimumIntervals: [String: Double]

    /// Intervals used for kinds the settings do not name, in seconds.
    public static let defaultMinimumIntervals: [String: Double] = [
        "selection": 0.020, "impact": 0.030, "notification": 0.300, "alignment": 0.050, "levelChange": 0.040,
    ]

    /// A policy; by default haptics on, full intensity and the default intervals.
    public init(isEnabled: Bool = true, intensityScale: Double = 1, minimumIntervals: [String: Double] = HapticPolicy.defaultMinimumIntervals) {
        self.isEnabled = isEnabled
        self.intensityScale = max(0, min(intensityScale, 1))
        self.minimumIntervals = minimumIntervals
    }

    /// The minimum interval for feedback kind `kind`, in seconds.
    public func minimumInterval(for kind: String) -> Double {
        minimumIntervals[kind] ?? Self.defaultMinimumIntervals[kind] ?? 0.010
    }

    /// The path of the settings file: `$XDG_CONFIG_HOME/haptics/policy.json`, else `$HOME/.config/haptics/policy.json`.
    public static func settingsPath() -> String? {
        if let config = Environment.value("XDG_CONFIG_HOME"), !config.isEmpty { return config + "/haptics/policy.json" }
        if let home = Environment.value("HOME"), !home.isEmpty { return home + "/.config/haptics/policy.json" }
        return nil
    }

    /// The user's policy: the settings file if there is one, then the environment.
    /// - Throws: ``PolicyError`` for a settings file or variable that exists but is wrong.
    public static func load() throws(PolicyError) -> HapticPolicy {
        var policy = HapticPolicy()
        if let path = settingsPath(), let bytes = try? readFile(atPath: path) {
            policy = try parse(bytes, path: path)
        }
        if let disable = Environment.value("HAPTICS_DISABLE"), !disable.isEmpty, disable != "0" {
            policy.isEnabled = false
        }
        if let scale = Environment.value("HAPTICS_INTENSITY_SCALE") {
            guard let value = Double(scale), value.isFinite, (0...1).contains(value) else {
                throw PolicyError(source: "HAPTICS_INTENSITY_SCALE", problem: "'\(scale)' is not a number in 0...1")
            }
            policy.intensityScale = value
        }
        return policy
    }

    /// Parses a settings file's contents; `path` names it in errors.
    public static func parse(_ bytes: [UInt8], path: String) throws(PolicyError) -> HapticPolicy {
        do {
            let object = try JSONCursor(root: JSONParser().parse(bytes)).object()
            try object.rejectUnknownKeys(allowed: ["enabled", "intensity_scale", "minimum_interval_ms"])
            var policy = HapticPolicy()
            policy.isEnabled = try object.optional("enabled")?.bool() ?? true
            policy.intensityScale = try object.optional("intensity_scale")?.number(in: 0...1) ?? 1
            if let intervals = try object.optional("minimum_interval_ms")?.object() {
                for (key, value) in intervals.members {
                    policy.minimumIntervals[key] = try value.number(in: 0...10_000) / 1000
                }
            }
            return policy
        } catch let error as JSONSyntaxError {
            throw PolicyError(source: path, problem: "\(error)")
        } catch {
            throw PolicyError(source: path, problem: "\(error)")
        }
    }
}

/// A settings file or environment variable that could not be used: where, and what is wrong.
public struct PolicyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file or variable.
    public var source: String
    /// What is wrong.
    public var problem: String

    /// An error about `source`.
    public init(source: String, problem: String) {
        self.source = source
        self.problem = problem
    }

    public var description: String { "\(source): \(problem)" }
}
