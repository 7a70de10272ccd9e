import Haptics
import HapticsBus
import Logging

/// How hapticsd runs; `hapticsd --help` documents each option.
public struct DaemonOptions: Sendable {
    /// The bus to serve on: the session bus (default), the system bus (`--system`, for headless
    /// boards), or an explicit address.
    public var bus: BusConnection.Address = .session
    /// Where the backend plugins are.
    public var searchPath: PluginSearchPath = .standard()
    /// Backend settings (`recording.devices`, `gpio.boards`, …); `HAPTICS_KEY_NAME` variables fill in the rest.
    public var settings: [String: String] = [:]
    /// Who may change the settings that belong to everyone (`--authorization`).
    public var authorization: AuthorizationMode = .auto
    /// Whether to serve feedbackd's `org.sigxcpu.Feedback` too (`--feedbackd`).
    public var feedbackd: FeedbackdMode = .auto
    /// A theme file to use instead of the named theme (`--theme`, `$FEEDBACK_THEME`).
    public var themeFile: String?
    /// The theme to look up (`--theme-name`).
    public var themeName = "default"
    /// hapticsd's own theme directories, searched before the standard ones.
    public var themeDirectories: [String] = []
    /// The feedbackd profile at start (`--profile`).
    public var profile: FeedbackProfile = .full
    /// The device an empty device argument means; empty: the first usable device.
    public var defaultDevice = ""
    /// Play calls per second one client may make before its calls are refused.
    public var maxCallsPerSecond = 1000
    /// Connections of one user that may have something under way at once (a player, an event, a
    /// vibration): what bounds a user's share of the service on the system bus.
    public var maxClientsPerUser = 128
    /// Players one client may hold at once.
    public var maxPlayersPerClient = 256
    /// Pattern elements (events, parameter changes, curve control points) one client's players may
    /// hold together: what bounds the memory a client pins (about 70 bytes an element).
    public var maxElementsPerClient = 100_000
    /// The per-app settings file; nil: `$XDG_CONFIG_HOME/haptics/apps.json`.
    public var appsFile: String?
    /// Whether the bus thread asks for `SCHED_FIFO` (granted to root and `CAP_SYS_NICE`).
    public var realtime = true
    /// How much to log (to standard error, which the journal keeps under systemd).
    public var logLevel: Logger.Level = .info

    /// The defaults.
    public init() {}
}

/// Why hapticsd could not start: printed, and the process exits with status 1.
public struct DaemonStartError: Error, Sendable, CustomStringConvertible {
    /// What failed and the fix.
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Who serves feedbackd's `org.sigxcpu.Feedback` (`hapticsd --feedbackd`).
public enum FeedbackdMode: String, Sendable, CaseIterable {
    /// hapticsd serves it unless the bus can start another service for it (feedbackd installed:
    /// its D-Bus activation file), so where feedbackd is installed it keeps its name, its LEDs and
    /// sounds, whichever of the two starts first.
    case auto
    /// hapticsd serves it whenever nobody owns it (a distribution that makes hapticsd its feedbackd).
    case always
    /// hapticsd leaves it alone.
    case never
}
