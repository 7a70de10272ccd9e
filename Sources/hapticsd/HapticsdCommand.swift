import ArgumentParser
import Haptics
import HapticsDaemon
import HapticsBus
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `hapticsd`: the haptics service. Every option is documented by `--help`.
@main
struct HapticsdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hapticsd",
        abstract: "The haptics service: owns the haptic devices and plays for apps over D-Bus.",
        discussion: """
            hapticsd loads the backend plugins, opens every haptic device (and those plugged in later), \
            renders with each device's calibration profile, and applies the user's settings to every app: \
            on/off, intensity scale, the overuse guard, per app and globally. Apps in any language play \
            vocabulary effects, AHAP patterns and players through org.swifthaptics.Haptics1 \
            (Docs/Daemon.md); feedbackd's org.sigxcpu.Feedback is served too, so fbcli and libfeedback \
            clients work unchanged. Swift programs using swift-haptics play through hapticsd when it runs.

            Signals: SIGTERM and SIGINT stop every actuator, then exit; SIGHUP reloads the settings \
            ($XDG_CONFIG_HOME/haptics/policy.json, apps.json) and the theme. Readiness is reported \
            with sd_notify (Type=notify units).

            Environment: HAPTICS_KEY_NAME sets backend settings (HAPTICS_RECORDING_DEVICES, \
            HAPTICS_GPIO_BOARDS, …), HAPTICS_PLUGIN_PATH adds plugin directories, FEEDBACK_THEME \
            names a theme file (as for feedbackd), HAPTICS_DISABLE and HAPTICS_INTENSITY_SCALE \
            override the global settings.
            """)

    @Flag(help: "Serve on the system bus (headless boards; needs dist/dbus-1/system.d/org.swifthaptics.Haptics1.conf).")
    var system = false

    @Option(help: ArgumentHelp("Serve on the bus at this address instead (unix:path=…).", valueName: "address"))
    var address: String?

    @Option(name: .customLong("plugin-path"), help: ArgumentHelp("Plugin directories searched first (colon-separated).", valueName: "dirs"))
    var pluginPath: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("A backend setting, e.g. recording.devices=lra (repeatable).", valueName: "key=value"))
    var settings: [String] = []

    @Option(
        help: ArgumentHelp(
            "Who serves feedbackd's org.sigxcpu.Feedback: auto (hapticsd, unless the bus can start feedbackd for it), always (hapticsd, whenever the name is free), never.",
            valueName: "auto|always|never"))
    var feedbackd: FeedbackdMode = .auto

    @Option(
        help: ArgumentHelp(
            "Who may change the global settings and other users' apps' settings: auto (polkit on the system bus, everyone on a session bus), polkit, none.",
            valueName: "auto|polkit|none"))
    var authorization: AuthorizationMode = .auto

    @Flag(name: .customLong("no-feedbackd"), help: "The same as --feedbackd never.")
    var noFeedbackd = false

    @Option(help: ArgumentHelp("A feedback theme file (feedbackd's JSON format); default $FEEDBACK_THEME, else the theme named by --theme-name.", valueName: "file"))
    var theme: String?

    @Option(name: .customLong("theme-name"), help: ArgumentHelp("The feedback theme to look up: user, device and installed themes (Docs/Daemon.md).", valueName: "name"))
    var themeName = "default"

    @Option(name: .customLong("theme-dir"), help: ArgumentHelp("A directory of hapticsd themes searched first, holding default.json (repeatable).", valueName: "dir"))
    var themeDirectories: [String] = []

    @Option(help: ArgumentHelp("The feedbackd profile at start: full, quiet or silent.", valueName: "profile"))
    var profile = "full"

    @Option(name: .customLong("default-device"), help: ArgumentHelp("The device used when a call names none (default: the first usable one).", valueName: "id"))
    var defaultDevice = ""

    @Option(name: .customLong("max-calls-per-second"), help: ArgumentHelp("Play calls per second one client may make; more are refused (Error.Throttled).", valueName: "n"))
    var maxCallsPerSecond = 1000

    @Option(name: .customLong("max-players"), help: ArgumentHelp("Players one client may hold at once.", valueName: "n"))
    var maxPlayers = 256

    @Option(name: .customLong("max-clients-per-user"), help: ArgumentHelp("Connections of one user that may play at once.", valueName: "n"))
    var maxClients = 128

    @Option(
        name: .customLong("max-events-per-client"),
        help: ArgumentHelp("Pattern events, parameter changes and curve points one client's players may hold together.", valueName: "n"))
    var maxEvents = 100_000

    @Option(name: .customLong("apps-file"), help: ArgumentHelp("Per-app settings (default $XDG_CONFIG_HOME/haptics/apps.json).", valueName: "file"))
    var appsFile: String?

    @Flag(name: .customLong("no-realtime"), help: "Keep the bus thread at normal priority (by default it asks for SCHED_FIFO, below the engine's scheduler).")
    var noRealtime = false

    @Option(name: .customLong("log-level"), help: ArgumentHelp("debug, info, notice, warning or error (to standard error).", valueName: "level"))
    var logLevel = "info"

    func validate() throws {
        guard FeedbackProfile(name: profile) != nil else { throw ValidationError("--profile '\(profile)' is not full, quiet or silent") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level '\(logLevel)': use debug, info, notice, warning or error") }
        guard (1...1_000_000).contains(maxCallsPerSecond) else { throw ValidationError("--max-calls-per-second \(maxCallsPerSecond) is outside 1…1000000") }
        guard (1...100_000).contains(maxPlayers) else { throw ValidationError("--max-players \(maxPlayers) is outside 1…100000") }
        guard (1...100_000).contains(maxClients) else { throw ValidationError("--max-clients-per-user \(maxClients) is outside 1…100000") }
        guard (1...10_000_000).contains(maxEvents) else { throw ValidationError("--max-events-per-client \(maxEvents) is outside 1…10000000") }
        if system, address != nil { throw ValidationError("--system and --address exclude each other") }
        for setting in settings where setting.firstIndex(of: "=").map({ $0 == setting.startIndex }) ?? true {
            throw ValidationError("--set '\(setting)' is not KEY=VALUE; for example --set recording.devices=lra")
        }
    }

    func run() throws {
        // Before any thread exists (plugins start some): the loop reads these through a signalfd.
        HapticsDaemon.blockHandledSignals()
        var options = DaemonOptions()
        options.bus = system ? .system : address.map { .address($0) } ?? .session
        if let pluginPath {
            options.searchPath = PluginSearchPath(directories: pluginPath.split(separator: ":").map(String.init) + PluginSearchPath.standard().directories)
        }
        for setting in settings {
            let equals = setting.firstIndex(of: "=")!
            options.settings[String(setting[..<equals])] = String(setting[setting.index(after: equals)...])
        }
        options.feedbackd = noFeedbackd ? .never : feedbackd
        options.authorization = authorization
        options.themeFile = theme ?? getenv("FEEDBACK_THEME").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        options.themeName = themeName
        options.themeDirectories = themeDirectories
        options.profile = FeedbackProfile(name: profile)!
        options.defaultDevice = defaultDevice
        options.maxCallsPerSecond = maxCallsPerSecond
        options.maxPlayersPerClient = maxPlayers
        options.maxElementsPerClient = maxEvents
        options.maxClientsPerUser = maxClients
        options.appsFile = appsFile
        options.realtime = !noRealtime
        options.logLevel = Logger.Level(rawValue: logLevel)!
        let level = options.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        do {
            let daemon = try HapticsDaemon(options: options)
            let status = try daemon.run()
            throw ExitCode(status)
        } catch let error as DaemonStartError {
            FileHandleOutput.standardError("hapticsd: \(error)\n")
            throw ExitCode(1)
        }
    }
}

/// Writes to standard error without Foundation.
enum FileHandleOutput {
    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}

extension FeedbackdMode: ExpressibleByArgument {}
extension AuthorizationMode: ExpressibleByArgument {}
