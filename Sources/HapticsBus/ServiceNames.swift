/// The names the service is reached by, spelled once for the service, its client plugin and the
/// benchmarks (D-Bus names are strings: a typo would only fail at run time, as "no such service").
public enum HapticsServiceName {
    /// The service's own API, versioned: bus name, interface and object share the name.
    public static let bus = "org.swifthaptics.Haptics1"
    /// The manager interface, at ``objectPath``.
    public static let interface = "org.swifthaptics.Haptics1"
    /// The manager object.
    public static let objectPath = "/org/swifthaptics/Haptics1"
    /// Players live below this path: `/org/swifthaptics/Haptics1/player/N`.
    public static let playerPrefix = "/org/swifthaptics/Haptics1/player"
    /// The interface of each player.
    public static let playerInterface = "org.swifthaptics.Haptics1.Player"
    /// The prefix of the service's own error names: `org.swifthaptics.Haptics1.Error.UnknownEffect`.
    public static let errorPrefix = "org.swifthaptics.Haptics1.Error."

    /// The path of player `id`.
    public static func playerPath(_ id: UInt64) -> String { "\(playerPrefix)/\(id)" }

    /// The id in a player path (``playerPrefix``, a slash, a decimal number without leading zeros),
    /// or nil if `path` is not one.
    public static func playerID(fromPath path: String) -> UInt64? {
        guard path.hasPrefix(playerPrefix + "/") else { return nil }
        let tail = path.dropFirst(playerPrefix.count + 1)
        guard !tail.isEmpty, tail.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), tail.first != "0" else { return nil }
        return UInt64(tail)
    }
}

/// feedbackd's names, served for compatibility (feedbackd's `src/fbd.h` and its D-Bus XML).
public enum FeedbackdServiceName {
    /// feedbackd's bus name.
    public static let bus = "org.sigxcpu.Feedback"
    /// The event interface (`TriggerFeedback`, `EndFeedback`, `Profile`).
    public static let interface = "org.sigxcpu.Feedback"
    /// The haptic interface (`Vibrate`).
    public static let hapticInterface = "org.sigxcpu.Feedback.Haptic"
    /// The one object, carrying both interfaces.
    public static let objectPath = "/org/sigxcpu/Feedback"
}
