import ArgumentParser
import Foundation
import Haptics
import HapticsTools

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

    @Flag(name: .customLong("in-process"), help: "Open the devices in this process even when hapticsd runs (it must not hold them).")
    var inProcess = false

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

    /// The plugin search path: the `--plugin-path` directories first, then the standard ones.
    var searchPath: PluginSearchPath {
        guard let pluginPath else { return .standard() }
        return PluginSearchPath(directories: pluginPath.split(separator: ":").map(String.init) + PluginSearchPath.standard().directories)
    }

    /// Where the recording backend writes: `--record`, else a temporary file (returned as
    /// `temporary` too, for the caller to remove).
    func recordingTarget() -> (path: String, temporary: String?) {
        if let record { return (record, nil) }
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("haptic-cal-\(getpid()).jsonl").path
        return (temporary, temporary)
    }

    /// Connects to hapticsd when it runs (unless `--in-process` or `inProcess`), else loads the plugins.
    func makeSystem(recordingOutput: String? = nil, inProcess forced: Bool = false) -> HapticSystem {
        HapticSystem(
            configuration: .init(
                searchPath: searchPath, settings: backendSettings(recordingOutput: recordingOutput), logger: quietLogger(),
                daemon: inProcess || forced ? .never : .automatic))
    }

    /// Runs `body` with the device `query` names opened and an engine on it, then stops and closes
    /// them; returns `body`'s result, the device's description and, for a recording device this
    /// process opened, what it recorded (complete: read after the backend is gone). Through hapticsd
    /// the recording is the service's.
    func withDevice<Result>(
        _ query: String, _ body: (DeviceDescription, HapticEngine) throws -> Result
    ) throws -> (result: Result, description: DeviceDescription, recording: Recording?) {
        let target = recordingTarget()
        defer { if let temporary = target.temporary { try? FileManager.default.removeItem(atPath: temporary) } }
        let result: Result
        let description: DeviceDescription
        var inProcess = true
        do {
            let system = makeSystem(recordingOutput: target.path)
            if case .daemon(let info) = system.mode {
                inProcess = false
                FileHandle.standardError.write(Data("playing through hapticsd (pid \(info.processID)), which owns the device\n".utf8))
            }
            description = try system.resolve(query)
            let device = try system.openDevice(description.id)
            defer { device.close() }
            let engine = try HapticEngine(devices: [device], logger: quietLogger())
            defer { engine.stop() }
            result = try body(description, engine)
        }
        let recording = inProcess && description.backend == "recording" ? try Recording(contentsOf: target.path) : nil
        return (result, description, recording)
    }
}
