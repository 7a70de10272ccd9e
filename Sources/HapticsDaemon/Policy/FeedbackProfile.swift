/// feedbackd's feedback levels, noisiest last: a profile caps which sections of a theme play.
/// `full` plays the full, quiet and silent sections; `quiet` the quiet and silent ones; `silent`
/// only the silent one. Haptic feedback lives in the quiet section, so `silent` plays none.
public enum FeedbackProfile: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    case silent = 0
    case quiet = 1
    case full = 2

    /// The profile called `name` (`full`, `quiet`, `silent`).
    public init?(name: String) {
        guard let profile = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = profile
    }

    /// The name feedbackd uses.
    public var name: String {
        switch self {
        case .silent: "silent"
        case .quiet: "quiet"
        case .full: "full"
        }
    }

    public var description: String { name }

    public static func < (lhs: FeedbackProfile, rhs: FeedbackProfile) -> Bool { lhs.rawValue < rhs.rawValue }
}
