import ArgumentParser
import Foundation
import Haptics
import HapticsCalibration
import Synchronization

/// Which measurement source a command uses: `interactive`, `accelerometer[:DEVICE]` or `simulated`.
enum SourceChoice: Equatable {
    case interactive
    case accelerometer(String?)
    case simulated

    /// Parses the `--source` value; the error says what to type instead.
    init(_ text: String, allowInteractive: Bool = true) throws {
        switch text {
        case "simulated": self = .simulated
        case "interactive" where allowInteractive: self = .interactive
        case "accelerometer": self = .accelerometer(nil)
        case _ where text.hasPrefix("accelerometer:"):
            let device = String(text.dropFirst("accelerometer:".count))
            guard !device.isEmpty else { throw ValidationError("--source accelerometer: needs a device after the colon, e.g. accelerometer:iio:device0") }
            self = .accelerometer(device)
        default:
            let choices = allowInteractive ? "interactive, accelerometer[:DEVICE] or simulated" : "accelerometer[:DEVICE] or simulated"
            throw ValidationError("--source '\(text)' is not one of \(choices)")
        }
    }
}

/// Options shared by `calibrate` and `verify`: the source and how to set it up.
struct SourceOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Where measurements come from: interactive (you, at this terminal), accelerometer[:DEVICE] (an IIO accelerometer on the "
                + "device: iio:deviceN, its number, its name such as adxl345, or a directory), or simulated (a physical model of a recording device). "
                + "A device that calibrates itself (a DRV2605L) runs its own calibration first; `calibrate` needs no source for it.",
            valueName: "source"))
    var source: String?

    @Option(
        help: ArgumentHelp(
            "Simulated physics, e.g. f0=175,q=12,deadzone=0.08,seed=1 (keys: f0, q, deadzone, exponent, peak, tau, nominal, noise, seed; "
                + "CHANNEL.key for one channel). Defaults come from the device description.", valueName: "key=value,..."))
    var model: String?

    @Option(name: .customLong("iio-root"), help: ArgumentHelp("Where IIO devices are listed.", valueName: "dir"))
    var iioRoot = IIOAccelerometer.standardRoot

    @Flag(help: "Measure fewer points with shorter vibrations (a rough calibration in a fraction of the time).")
    var quick = false

    @Option(help: ArgumentHelp("Write SVG plots of the measured responses and the fitted curves to this file.", valueName: "file"))
    var svg: String?

    @Option(
        help: ArgumentHelp(
            "Measure a simulated bench instead of hardware: "
                + Benches.names.joined(separator: ", ")
                + ". The GPIO backend drives a board's actuator (physics from datasheet figures) through a temporary sysfs PWM tree, or the "
                + "alsa backend a voice coil through alsa-lib and a temporary device file, and the accelerometer source reads the "
                + "simulated ADXL345 from a temporary IIO tree: the path a Raspberry Pi user has. Use with --source accelerometer.",
            valueName: "preset"))
    var bench: String?

    func choice(allowInteractive: Bool) throws -> SourceChoice {
        guard let source else {
            throw ValidationError("--source is required: interactive, accelerometer[:DEVICE] or simulated")
        }
        return try SourceChoice(source, allowInteractive: allowInteractive)
    }

    func validate(allowInteractive: Bool) throws {
        let choice = try choice(allowInteractive: allowInteractive)
        if let model {
            guard choice == .simulated else { throw ValidationError("--model sets simulated physics; use it with --source simulated") }
            // Keys and ranges now; channel names need the device.
            do { try ModelParameters.check(settings: model) } catch { throw ValidationError("\(error)") }
        }
        if let bench {
            guard Benches.names.contains(bench) else {
                throw ValidationError("--bench '\(bench)' is not one of \(Benches.names.joined(separator: ", "))")
            }
            guard case .accelerometer = choice else {
                throw ValidationError("--bench simulates a board and an accelerometer; use it with --source accelerometer")
            }
        }
    }

    /// Whether the source measures with a sensor (and so can verify).
    func measuresWithSensor(allowInteractive: Bool) -> Bool {
        (try? choice(allowInteractive: allowInteractive)).map { $0 != .interactive } ?? false
    }

    var plan: CalibrationPlan { quick ? .quick : .standard }
}

/// A source opened for a device, with what the command needs to print about it.
struct OpenedSource {
    let source: MeasurementSource
    let description: String
    let details: [String]
    /// What the details are about (`model`, `setup`).
    var detailLabel = "model"
    /// Keeps the device's system alive while measuring (real-time sources).
    let system: HapticSystem?
    let temporaryRecording: String?
    /// The simulated bench measured, if any (stopped and removed by ``cleanUp()``).
    var bench: (any Bench)? = nil

    func cleanUp() {
        if let temporaryRecording { try? FileManager.default.removeItem(atPath: temporaryRecording) }
        bench?.remove()
    }
}

extension SourceOptions {
    /// Opens the chosen source on `device`.
    func open(device: String, global: GlobalOptions, allowInteractive: Bool) throws -> OpenedSource {
        switch try choice(allowInteractive: allowInteractive) {
        case .simulated:
            let (recording, temporary) = global.recordingTarget()
            var settings = global.backendSettings()
            settings["recording.output"] = nil
            let source = try SimulatedSource(
                deviceID: device, searchPath: global.searchPath, settings: settings, recordingPath: recording, modelSettings: model, logger: quietLogger())
            return OpenedSource(
                source: source, description: "simulated measurements", details: ModelParameters.summary(source.model, device: source.device),
                system: nil, temporaryRecording: temporary)
        case .accelerometer(let request):
            var bench: (any Bench)?
            // Calibration drives the actuator frame by frame: only in the process that owns it.
            var system = global.makeSystem(inProcess: true)
            var root = iioRoot
            if let name = self.bench, let simulated = try Benches.make(name) {
                bench = simulated
                do {
                    try simulated.start()
                    system = HapticSystem(
                        configuration: .init(
                            searchPath: global.searchPath, settings: global.backendSettings().merging(simulated.backendSettings) { $1 }, logger: quietLogger(),
                            daemon: .never))
                    root = simulated.iioRoot
                } catch {
                    simulated.remove()
                    throw error
                }
            }
            do {
                let opened = try system.openDevice(device)
                let sensor = try IIOAccelerometer.find(root: root, request: request)
                let axes = sensor.axes.map { "\($0.name) ×\(fixed($0.scale, 6)) m/s²" }.joined(separator: ", ")
                let rate = sensor.samplingFrequency.map { ", \(fixed($0, 0)) Hz" } ?? ""
                let source = AccelerometerSource(playback: try RealtimePlayback(device: opened, logger: quietLogger()), sensor: sensor)
                var details = ["axes \(axes)\(rate)"]
                if let bench { details.insert("bench \(bench.name): \(bench.title) (\(bench.directory))", at: 0) }
                if let envelope = source.envelope {
                    let stated = opened.description.envelope ?? envelope
                    let drive =
                        envelope.amplitudeOffset == stated.amplitudeOffset
                        ? "amplitude a → level \(fixed(envelope.amplitudeOffset, 3)) + a × \(fixed(1 - envelope.amplitudeOffset, 3)); "
                            + "held up to \(fixed(envelope.ratedLevel, 3)) (amplitude \(fixed(envelope.steadyAmplitudeLimit, 3)))"
                        : "measured in levels from 0 (the board's offset \(fixed(stated.amplitudeOffset, 3)) is the uncalibrated guess this profile replaces); "
                            + "held up to \(fixed(envelope.ratedLevel, 3))"
                    details.append("backend envelope: \(drive), kick to \(fixed(envelope.kickLevel, 3)) for \(fixed(envelope.kickDuration * 1000, 0)) ms")
                }
                var result = OpenedSource(
                    source: source, description: "accelerometer \(sensor.name) (\(sensor.directory))", details: details, system: system,
                    temporaryRecording: nil)
                result.bench = bench
                result.detailLabel = "setup"
                return result
            } catch {
                bench?.remove()
                throw error
            }
        case .interactive:
            let system = global.makeSystem(inProcess: true)
            let opened = try system.openDevice(device)
            let source = InteractiveSource(
                playback: try RealtimePlayback(device: opened, logger: quietLogger()), dialog: TerminalDialog(), settings: quick ? .quick : .standard)
            return OpenedSource(source: source, description: "your answers at this terminal", details: [], system: system, temporaryRecording: nil)
        }
    }
}

/// Progress on standard error: a redrawn bar on a terminal, a line per finished phase otherwise.
final class TerminalProgress: ProgressReporter {
    private let isTerminal = isatty(2) == 1
    private let last = Mutex<String?>(nil)

    func report(phase: String, done: Int, total: Int) {
        guard total > 0 else { return }
        if isTerminal {
            let width = 30
            let filled = min(width, done * width / total)
            var line = "\r  \(pad(phase, 32)) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(done)/\(total)"
            if done >= total { line += "\n" }
            FileHandle.standardError.write(Data(line.utf8))
        } else if done >= total {
            let repeated = last.withLock { last in
                defer { last = phase }
                return last == phase
            }
            if !repeated { FileHandle.standardError.write(Data("  \(phase): \(done)/\(total) done\n".utf8)) }
        }
    }
}
