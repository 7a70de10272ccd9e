import Haptics
import HapticsBus
import HapticsSupport

/// One application's settings, over the global ones: each field left nil follows the global value.
public struct AppPolicy: Sendable, Hashable {
    /// Whether the app's haptics play (its players run but are muted when false).
    public var enabled: Bool?
    /// Multiplies the app's intensities (0…1), on top of the global scale.
    public var intensityScale: Double?
    /// The loudest feedbackd profile the app's events may use.
    public var profile: FeedbackProfile?
    /// Whether the app's `important` hint may override the global feedbackd profile.
    public var allowImportant: Bool
    /// Overuse-guard intervals by feedback kind, in seconds (over the global ones).
    public var minimumIntervals: [String: Double]

    /// An app policy; by default everything follows the global settings.
    public init(
        enabled: Bool? = nil, intensityScale: Double? = nil, profile: FeedbackProfile? = nil, allowImportant: Bool = false,
        minimumIntervals: [String: Double] = [:]
    ) {
        self.enabled = enabled
        self.intensityScale = intensityScale
        self.profile = profile
        self.allowImportant = allowImportant
        self.minimumIntervals = minimumIntervals
    }

    /// Whether every field follows the global settings.
    public var isDefault: Bool { self == AppPolicy() }
}

/// What hapticsd applies to every app: the user's ``HapticPolicy`` (on/off, intensity scale,
/// overuse-guard intervals), per-app overrides, and the feedbackd profile.
///
/// Read at start and on `SIGHUP`: `$XDG_CONFIG_HOME/haptics/policy.json` (the same file and
/// environment variables the in-process library reads) and `$XDG_CONFIG_HOME/haptics/apps.json`
/// (per-app settings, this service's own file). Changes made over D-Bus last until the service stops.
public struct PolicyStore: Sendable {
    /// The global settings.
    public var global: HapticPolicy
    /// Per-app settings by app id.
    public var apps: [String: AppPolicy]
    /// The global feedbackd profile.
    public var profile: FeedbackProfile

    /// A store with these settings.
    public init(global: HapticPolicy = HapticPolicy(), apps: [String: AppPolicy] = [:], profile: FeedbackProfile = .full) {
        self.global = global
        self.apps = apps
        self.profile = profile
    }

    /// Whether `app`'s haptics play.
    public func isEnabled(app: String) -> Bool {
        global.isEnabled && (apps[app]?.enabled ?? true)
    }

    /// The scale for `app`'s intensities before the global scale (the engine applies the global one).
    public func appScale(app: String) -> Double {
        apps[app]?.intensityScale ?? 1
    }

    /// The overuse-guard interval for `kind` of feedback from `app`, in seconds.
    public func minimumInterval(for kind: String, app: String) -> Double {
        apps[app]?.minimumIntervals[kind] ?? global.minimumInterval(for: kind)
    }

    /// The feedbackd profile an event of `app` plays at, capped by the hint `wanted` (feedbackd's
    /// rule: the app setting and the hint can only lower the level; an `important` hint from an
    /// allowed app skips the global profile).
    public func effectiveProfile(app: String, wanted: FeedbackProfile, important: Bool) -> FeedbackProfile {
        let appProfile = apps[app]?.profile ?? .full
        if important, apps[app]?.allowImportant == true { return min(wanted, appProfile) }
        return min(profile, appProfile, wanted)
    }

    /// The path of the per-app settings file: `$XDG_CONFIG_HOME/haptics/apps.json`, else `~/.config/haptics/apps.json`.
    public static func appsPath() -> String? {
        HapticPolicy.settingsPath().map { path in
            String(path[..<path.lastIndex(of: "/")!]) + "/apps.json"
        }
    }

    /// Reads the per-app settings file, if there is one.
    /// - Throws: ``PolicyError`` naming the file, the JSON path and the problem.
    public static func loadApps(path: String? = appsPath()) throws(PolicyError) -> [String: AppPolicy] {
        guard let path, let bytes = try? readFile(atPath: path) else { return [:] }
        do {
            let root = try JSONCursor(root: JSONParser().parse(bytes)).object()
            var apps: [String: AppPolicy] = [:]
            for key in root.keys {
                do throws(BusError) { _ = try Validation.appID(key) } catch {
                    throw PolicyError(source: path, problem: "$.\(key): \(error.message)")
                }
                apps[key] = try parseApp(root.required(key).object())
            }
            return apps
        } catch let error as PolicyError {
            throw error
        } catch {
            throw PolicyError(source: path, problem: "\(error)")
        }
    }

    static func parseApp(_ object: JSONObjectCursor) throws(JSONPathError) -> AppPolicy {
        try object.rejectUnknownKeys(allowed: ["enabled", "intensity_scale", "profile", "allow_important", "minimum_interval_ms"])
        var policy = AppPolicy()
        policy.enabled = try object.optional("enabled")?.bool()
        policy.intensityScale = try object.optional("intensity_scale")?.number(in: 0...1)
        if let profile = try object.optional("profile")?.string(oneOf: FeedbackProfile.allCases.map(\.name)) {
            policy.profile = FeedbackProfile(name: profile)
        }
        policy.allowImportant = try object.optional("allow_important")?.bool() ?? false
        if let intervals = try object.optional("minimum_interval_ms")?.object() {
            for key in intervals.keys {
                policy.minimumIntervals[key] = try intervals.required(key).number(in: 0...10_000) / 1000
            }
        }
        return policy
    }

    /// An app policy from a D-Bus `a{sv}` (`enabled` b, `intensity-scale` d, `profile` s,
    /// `allow-important` b, `minimum-intervals` a{sd} in seconds); an empty dictionary resets the app.
    public static func appPolicy(from entries: [(key: String, value: BusValue)]) throws(BusError) -> AppPolicy {
        var policy = AppPolicy()
        for (key, raw) in entries {
            let value = raw.unwrapped
            switch key {
            case "enabled":
                guard let flag = value.boolValue else { throw DaemonError.invalidArgument("policy.enabled", "expected a boolean (b), found '\(value.signature)'") }
                policy.enabled = flag
            case "intensity-scale":
                guard case .double(let scale) = value else {
                    throw DaemonError.invalidArgument("policy.intensity-scale", "expected a double (d), found '\(value.signature)'")
                }
                policy.intensityScale = try Validation.number(scale, "policy.intensity-scale", in: 0...1)
            case "profile":
                guard let name = value.stringValue else { throw DaemonError.invalidArgument("policy.profile", "expected a string (s), found '\(value.signature)'") }
                guard let profile = FeedbackProfile(name: name) else {
                    throw DaemonError.invalidArgument("policy.profile", "'\(name)' is not a profile; use full, quiet or silent")
                }
                policy.profile = profile
            case "allow-important":
                guard let flag = value.boolValue else {
                    throw DaemonError.invalidArgument("policy.allow-important", "expected a boolean (b), found '\(value.signature)'")
                }
                policy.allowImportant = flag
            case "minimum-intervals":
                policy.minimumIntervals = try intervals(from: value, field: "policy.minimum-intervals")
            default:
                throw DaemonError.invalidArgument(
                    "policy", "unknown key '\(key)'; keys: enabled, intensity-scale, profile, allow-important, minimum-intervals")
            }
        }
        return policy
    }

    /// Most feedback kinds one set of intervals may name (the vocabulary has a dozen).
    public static let maximumIntervalKinds = 64
    /// Most apps the service keeps settings for (`SetAppPolicy`); resetting an app frees its place.
    public static let maximumAppPolicies = 1024

    /// Overuse-guard intervals from an `a{sd}` (kind → seconds, each 0…10): at most
    /// ``maximumIntervalKinds`` kinds, each a name of 1…64 of `A-Z a-z 0-9 _ - .`, so stored and
    /// announced settings stay small whatever a client sends.
    public static func intervals(from value: BusValue, field: String) throws(BusError) -> [String: Double] {
        guard case .array(let element, let entries) = value.unwrapped, element == "{sd}" else {
            throw DaemonError.invalidArgument(field, "expected a{sd} (feedback kind → seconds), found '\(value.unwrapped.signature)'")
        }
        guard entries.count <= maximumIntervalKinds else {
            throw DaemonError.invalidArgument(field, "\(entries.count) kinds; at most \(maximumIntervalKinds) are kept (ListEffects gives the kinds)")
        }
        var result: [String: Double] = [:]
        for entry in entries {
            guard case .structure(let pair) = entry, pair.count == 2, let kind = pair[0].stringValue, case .double(let seconds) = pair[1] else { continue }
            guard (1...64).contains(kind.utf8.count), kind.utf8.allSatisfy(Validation.isNameByte) else {
                let shown = kind.count > 64 ? String(kind.prefix(64)) + "…" : kind
                throw DaemonError.invalidArgument("\(field).\(shown)", "a feedback kind is 1…64 characters of A–Z a–z 0–9 _ - . (e.g. impact, levelChange)")
            }
            result[kind] = try Validation.number(seconds, "\(field).\(kind)", in: 0...10)
        }
        return result
    }

    /// An app policy as a D-Bus `a{sv}` (only the fields it sets).
    public static func entries(of policy: AppPolicy) -> [(key: String, value: BusValue)] {
        var entries: [(key: String, value: BusValue)] = []
        if let enabled = policy.enabled { entries.append(("enabled", .bool(enabled))) }
        if let scale = policy.intensityScale { entries.append(("intensity-scale", .double(scale))) }
        if let profile = policy.profile { entries.append(("profile", .string(profile.name))) }
        if policy.allowImportant { entries.append(("allow-important", .bool(true))) }
        if !policy.minimumIntervals.isEmpty { entries.append(("minimum-intervals", intervalsValue(policy.minimumIntervals))) }
        return entries
    }

    /// Intervals as an `a{sd}`, kinds sorted.
    public static func intervalsValue(_ intervals: [String: Double]) -> BusValue {
        .array(element: "{sd}", intervals.sorted { $0.key < $1.key }.map { .structure([.string($0.key), .double($0.value)]) })
    }
}
