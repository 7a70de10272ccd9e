import ArgumentParser
import Haptics

/// Options every subcommand takes: where plugins are and how backends are configured.
struct GlobalOptions: ParsableArguments {
    @Option(name: .customLong("plugin-path"), help: ArgumentHelp("Plugin directories searched first (colon-separated).", valueName: "dirs"))
    var pluginPath: String?

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp("A backend setting, e.g. recording.devices=lra,erm (repeatable).", valueName: "key=value"))
    var settings: [String] = []

    @Option(name: .customLong("record"), help: ArgumentHelp("Write what the recording backend captures to this JSON Lines file.", valueName: "file"))
    var record: String?

    func validate() throws {
        for setting in settings {
            guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
                throw ValidationError("--set '\(setting)' is not KEY=VALUE; for example --set recording.devices=lra")
            }
        }
    }

    /// The backend settings, with `recording.output` set to `recordingOutput` unless given.
    func backendSettings(recordingOutput: String? = nil) -> [String: String] {
        var result: [String: String] = [:]
        for setting in settings {
            let equals = setting.firstIndex(of: "=")!
            result[String(setting[..<equals])] = String(setting[setting.index(after: equals)...])
        }
        if let output = record ?? recordingOutput { result["recording.output"] = output }
        return result
    }

    /// Loads the plugins.
    func makeSystem(recordingOutput: String? = nil) -> HapticSystem {
        let searchPath: PluginSearchPath
        if let pluginPath {
            let standard = PluginSearchPath.standard()
            searchPath = PluginSearchPath(directories: pluginPath.split(separator: ":").map(String.init) + standard.directories)
        } else {
            searchPath = .standard()
        }
        return HapticSystem(configuration: .init(searchPath: searchPath, settings: backendSettings(recordingOutput: recordingOutput), logger: quietLogger()))
    }
}
