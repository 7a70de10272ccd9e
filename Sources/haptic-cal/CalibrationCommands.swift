import ArgumentParser
import Foundation
import Haptics
import HapticsCalibration
import HapticsTools
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
                + "device: iio:deviceN, its number, its name such as adxl345, or a directory), or simulated (a physical model of a recording device).",
            valueName: "source"))
    var source: String

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
                + BenchPreset.all.map(\.name).joined(separator: ", ")
                + ". The GPIO backend drives the bench's actuator (physics from datasheet figures) through a temporary sysfs PWM tree, "
                + "and the accelerometer source reads its simulated ADXL345 from a temporary IIO tree: the path a Raspberry Pi user has. "
                + "Use with --source accelerometer.", valueName: "preset"))
    var bench: String?

    func choice(allowInteractive: Bool) throws -> SourceChoice {
        try SourceChoice(source, allowInteractive: allowInteractive)
    }

    func validate(allowInteractive: Bool) throws {
        let choice = try choice(allowInteractive: allowInteractive)
        if let model {
            guard choice == .simulated else { throw ValidationError("--model sets simulated physics; use it with --source simulated") }
            // Keys and ranges now; channel names need the device.
            do { try ModelParameters.check(settings: model) } catch { throw ValidationError("\(error)") }
        }
        if let bench {
            guard BenchPreset.named(bench) != nil else {
                throw ValidationError("--bench '\(bench)' is not one of \(BenchPreset.all.map(\.name).joined(separator: ", "))")
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
    var bench: SimulatedBench? = nil

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
            var bench: SimulatedBench?
            // Calibration drives the actuator frame by frame: only in the process that owns it.
            var system = global.makeSystem(inProcess: true)
            var root = iioRoot
            if let name = self.bench, let preset = BenchPreset.named(name) {
                let simulated = try SimulatedBench(preset: preset)
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
                if let bench { details.insert("bench \(bench.preset.name): \(bench.preset.title) (\(bench.directory))", at: 0) }
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

/// `haptic-cal calibrate DEVICE --source …`: measures, fits, writes the profile, verifies.
struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a device, fit its response and write its calibration profile.",
        discussion: """
            Measures each channel (a frequency sweep where the frequency can be chosen, then output by drive), fits the dead zone, \
            response curve, resonance, Q and frequency-to-output map, chooses how sharpness reaches the device and the tap shape, \
            writes the profile to ~/.config/haptics/profiles/ ($XDG_CONFIG_HOME/haptics/profiles/) atomically, and verifies it \
            by playing reference effects (sensor sources). The engine uses the profile from then on.

            Example: haptic-cal calibrate recording:lra --source simulated --svg lra.svg
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: SourceOptions

    @Argument(help: "The device: an id (see `haptic-cal list`), a unique id prefix, or part of its name.")
    var device: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the profile to this file instead of the user profile directory.", valueName: "file"))
    var output: String?

    @Flag(name: .customLong("no-save"), help: "Fit and show the profile without writing it.")
    var noSave = false

    @Flag(name: .customLong("no-verify"), help: "Skip the verification pass (with a sensor, only together with --no-save: a profile is written only once verified).")
    var noVerify = false

    @Flag(name: .customLong("as-shipped"), help: "Mark the profile as a shipped default (\"source\": \"shipped\"), for Hardware/profiles/.")
    var asShipped = false

    func validate() throws {
        try options.validate(allowInteractive: true)
        if noSave, output != nil { throw ValidationError("--no-save and --output contradict each other; pick one") }
        if noVerify, !noSave, options.measuresWithSensor(allowInteractive: true) {
            throw ValidationError("--no-verify: a sensor calibration is written only once its verification passes; add --no-save to fit without writing")
        }
    }

    func run() throws {
        let opened: OpenedSource
        opened = try options.open(device: device, global: global, allowInteractive: true)
        defer { opened.cleanUp() }
        let source = opened.source
        let description = source.device
        print("Calibrating \(description.id) (\(description.name)) from \(opened.description)")
        for (index, line) in opened.details.enumerated() { print("  \(index == 0 ? pad(opened.detailLabel, 6) : "      ") \(line)") }
        let progress: ProgressReporter = source.outputUnit == .perceived ? SilentProgress() : TerminalProgress()
        var result: CalibrationResult
        result = try Calibrator(plan: options.plan).calibrate(source, verify: !noVerify, progress: progress)
        if asShipped { result.profile.source = .shipped }
        printResult(result, device: description, unit: source.outputUnit)
        if let report = result.verification {
            print(summary(report))
        } else if !noVerify {
            print("verification         needs a sensor: haptic-cal verify \(description.id) --source accelerometer")
        }
        if let svg = options.svg {
            try writeSVG(CalibrationPlots.document(result: result, device: description, unit: source.outputUnit, verification: result.verification), to: svg)
            print("plots written to     \(svg)")
        }
        if let diagnosis = result.diagnosis { throw CommandFailure(diagnosis.description) }
        if !noSave {
            let path: String
            if let output {
                try ProfileStore.write(result.profile, toPath: output)
                path = output
            } else {
                path = try ProfileStore.standard.save(result.profile)
            }
            print("profile written to   \(path)")
        }
    }

    func printResult(_ result: CalibrationResult, device: DeviceDescription, unit: OutputUnit) {
        let profile = result.profile
        let unitName = unit == .acceleration ? "g" : "(relative)"
        for fit in result.fits {
            let channel = profile.channels[fit.channel]
            let measurement = result.measurements.first { $0.channel == fit.channel }
            print("\(channel.name) (channel \(fit.channel))")
            if channel.deadZone < 0 {
                print("  dead zone          none: the curve starts at \(fixed(channel.deadZone, 4)), so the smallest drive already gives \(fixed(channel.output(atDrive: .leastNonzeroMagnitude, frequency: 0), 3)) \(unitName)")
            } else {
                print("  dead zone          \(fixed(channel.deadZone, 4)) of full drive")
            }
            if let start = channel.startDrive {
                let stop = channel.stopDrive.map { $0 < start ? "; running, down to \(fixed($0, 4)) (hysteresis)" : "" } ?? ""
                print("  start threshold    \(fixed(start, 4)) from rest\(stop)")
            }
            let fromRest = channel.lowestOutputFromRest(), running = channel.lowestRunningOutput()
            if fromRest > 0 {
                print(
                    "  floor              \(fixed(fromRest, 3)) \(unitName) from rest (a tap asking less leaves it at rest); "
                        + (running <= 0
                            ? "sustained vibrations start at the threshold and hold down to the stop, where the output falls to nothing"
                            : running < fromRest
                                ? "sustained vibrations start at the threshold and hold down to \(fixed(running, 3)) \(unitName)"
                                : "sustained vibrations asking less are not rendered as asked"))
            }
            let at = measurement.map { $0.amplitudeFrequency > 0 ? " at \(fixed($0.amplitudeFrequency, 1)) Hz" : "" } ?? ""
            print("  response           exponent \(fixed(channel.responseExponent, 3)), \(fixed(fit.amplitude.fullScale, 3)) \(unitName) at full drive\(at) (fit R² \(fixed(fit.amplitude.rSquared, 4)))")
            if let saturation = channel.saturationOutput { print("  saturation         levels off at \(fixed(saturation, 3)) \(unitName)") }
            if let largest = fit.amplitude.residuals.max(by: { abs($0.output) < abs($1.output) }) {
                print("  residuals          \(fixed(fit.amplitude.relativeResidualRMS * 100, 1)) % rms; largest \(fixed(largest.output, 4)) \(unitName) at drive \(fixed(largest.input, 3))")
            }
            if let measurement, measurement.largestSteadyDrive < 1 {
                print("  measured up to     drive \(fixed(measurement.largestSteadyDrive, 4)) (the most the backend holds steadily): \(fixed(channel.output(atDrive: measurement.largestSteadyDrive, frequency: 0), 3)) \(unitName)")
            }
            if let rise = channel.riseTime {
                print("  timing             spin-up \(fixed(rise * 1000, 0)) ms to 90 %" + (channel.fallTime.map { ", spin-down \(fixed($0 * 1000, 0)) ms to 10 %" } ?? ", did not stop within the capture"))
            }
            if let resonance = fit.resonance {
                print("  resonance          \(fixed(resonance.resonantFrequency, 1)) Hz, Q \(fixed(resonance.qFactor, 2)) (fit R² \(fixed(resonance.rSquared, 4)))")
            }
            if let first = channel.frequencyResponse.first, let last = channel.frequencyResponse.last {
                print("  frequency map      \(channel.frequencyResponse.count) points, \(fixed(first.frequency, 0))–\(fixed(last.frequency, 0)) Hz")
            }
            if let reach = fit.reachBand {
                let band = channel.usableBand.map { "\(fixed($0.lowerBound, 1))–\(fixed($0.upperBound, 1)) Hz" } ?? "none (plays at its default frequency)"
                print("  usable band        \(band) (full output over \(fixed(reach.lowerBound, 1))–\(fixed(reach.upperBound, 1)) Hz)")
            }
            if !channel.frequencyResponseByOutput.isEmpty {
                print("  band by output     \(describe(channel.frequencyResponseByOutput, unit: unitName)) (the resonance moves with amplitude)")
            }
        }
        switch profile.sharpness {
        case .none: print("sharpness            not rendered (one feel)")
        case .frequency: print("sharpness            drive frequency across each channel's usable band")
        case .motorMix(let low, let high): print("sharpness            mix from \(device.channels[low].name) (0) to \(device.channels[high].name) (1)")
        }
        let tap = profile.transient
        var tapLine = "tap                  " + describe(tap)
        if let transient = result.transient {
            tapLine += " (peaks within \(fixed(transient.maxError * 100, 1)) % of \(fixed(Calibrator.tapTarget, 2)) × intensity g; \(transient.candidatesTried) shapes tried)"
        } else {
            tapLine += " (default for the actuator kind)"
        }
        print(tapLine)
        for note in result.notes { print("note: \(note)") }
    }
}

/// One paragraph about a verification.
func summary(_ report: VerificationReport) -> String {
    "verification         tones R² \(fixed(report.toneLinearity.rSquared, 5)), slope \(fixed(report.toneLinearity.slope, 3)) "
        + "(less the sensor's noise, \(fixed(report.toneNoise, 4)) g); "
        + "mean error \(fixed(report.meanError * 100, 1)) %, largest \(fixed(report.maxError * 100, 1)) % over \(report.judged.count) references"
        + (report.judged.max { abs($0.relativeError) < abs($1.relativeError) }.map { " (\($0.name): \(String(format: "%+.1f", $0.relativeError * 100)) %)" } ?? "")
        + (report.unreachable.isEmpty
            ? ""
            : "; \(report.unreachable.count) under the profile's floor (\(report.unreachable.map(\.name).joined(separator: ", "))): unreachable, not counted")
        + (report.meanError <= CalibrationDiagnosis.maximumMeanError ? "" : " (over the \(fixed(CalibrationDiagnosis.maximumMeanError * 100, 0)) % a profile may have)")
}

/// `haptic-cal verify DEVICE --source …`: replays reference effects through the device's profile and reports the error.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay reference effects through a device's profile, measure them and report the error.",
        discussion: """
            Plays a ladder of tones (intensity 0.1…1 at sharpness 0.5; 0.2, 0.6 and 1 at sharpness 0 and 1 where sharpness \
            changes how the device plays), taps (0.2…1 at sharpness 0, 0.5, 1) and the vocabulary's single-tap effects \
            through the profile the engine would use (or --profile FILE), measures each one and compares it with what it asks for: \
            intensity × 1 g for tones, intensity × \(Calibrator.tapTarget) g at the peak for taps.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: SourceOptions

    @Argument(help: "The device: an id, a unique id prefix, or part of its name.")
    var device: String

    @Option(help: ArgumentHelp("Verify this profile file instead of the one the engine would use.", valueName: "file"))
    var profile: String?

    func validate() throws {
        try options.validate(allowInteractive: false)
    }

    func run() throws {
        let opened: OpenedSource
        opened = try options.open(device: device, global: global, allowInteractive: false)
        defer { opened.cleanUp() }
        let description = opened.source.device
        let chosen: CalibrationProfile
        let origin: String
        if let profile {
            chosen = try CalibrationProfile(contentsOfFile: profile)
            try ProfileStore.check(chosen, file: profile, device: description)
            origin = profile
        } else if let entry = ProfileStore.standard.lookup(for: description).entry {
            chosen = entry.profile
            origin = "\(entry.path) (\(entry.origin.rawValue))"
        } else {
            chosen = CalibrationProfile.uncalibrated(for: description)
            origin = "the uncalibrated default (no profile found; run haptic-cal calibrate)"
        }
        print("Verifying \(description.id) (\(description.name)) with \(opened.description)")
        print("  profile: \(origin)")
        let report = try Verifier.verify(chosen, source: opened.source, plan: options.plan, progress: TerminalProgress())
        print("  \(pad("reference", 28)) \(padLeft("asked (g)", 10)) \(padLeft("measured", 10)) \(padLeft("error", 8))")
        for item in report.all {
            let error = item.belowFloor ? "under the floor" : fixed(item.relativeError * 100, 1) + " %"
            print("  \(pad(item.name, 28)) \(padLeft(fixed(item.requested, 3), 10)) \(padLeft(fixed(item.measured, 3), 10)) \(padLeft(error, 8))")
        }
        print(summary(report))
        if let svg = options.svg {
            let chart = CalibrationPlots.verificationChart(report, device: description)
            try writeSVG(SVGChart.stack([chart], panelHeight: CalibrationPlots.panelHeight), to: svg)
            print("plot written to      \(svg)")
        }
    }
}

/// `haptic-cal profile show|export|import`.
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Show, export and import calibration profiles.",
        discussion: """
            User profiles live in $XDG_CONFIG_HOME/haptics/profiles/ (else ~/.config/haptics/profiles/); shipped defaults in \
            $HAPTICS_PROFILE_PATH, the install prefix's share/haptics/profiles, and the source tree's Hardware/profiles when run from \
            a build directory. The format is documented in Hardware/profiles/README.md.
            """,
        subcommands: [ShowProfile.self, ExportProfile.self, ImportProfile.self])
}

/// The device `query` names if a backend lists it, else a description-less lookup by id.
func describe(_ query: String, global: GlobalOptions) -> DeviceDescription? {
    try? global.makeSystem().resolve(query)
}

/// The profile the engine would use for `id`, where it is, and the files skipped on the way.
func profileInUse(for query: String, global: GlobalOptions) -> (profile: CalibrationProfile, origin: String, problems: [ProfileError], id: String) {
    let store = ProfileStore.standard
    if let description = describe(query, global: global) {
        let (entry, problems) = store.lookup(for: description)
        if let entry { return (entry.profile, "\(entry.origin.rawValue) profile \(entry.path)", problems, description.id) }
        var fallback = CalibrationProfile.uncalibrated(for: description)
        fallback.deviceID = description.id
        return (fallback, "uncalibrated default (no profile file)", problems, description.id)
    }
    // Not connected: look for files by id without checking them against a description.
    var problems: [ProfileError] = []
    let directories = [store.userDirectory].compactMap { $0 } + store.shippedDirectories
    for candidate in ProfileStore.candidateIDs(for: query) {
        for directory in directories {
            let path = directory + "/" + ProfileStore.fileName(for: candidate)
            guard FileManager.default.fileExists(atPath: path) else { continue }
            do { return (try ProfileFormat.read(path: path), "profile \(path) (device not connected; not checked against it)", problems, query) } catch {
                problems.append(error)
            }
        }
    }
    return (CalibrationProfile(deviceID: query, deviceName: nil, source: .uncalibrated, channels: [], sharpness: .none, transient: .init(duration: 0.012)),
            "none: '\(query)' is not connected and has no profile file", problems, query)
}

/// `haptic-cal profile show [DEVICE]`.
struct ShowProfile: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the profile a device gets (or list every profile file).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device (omit to list every profile file).")
    var device: String?

    @Flag(help: "Print the profile as JSON.")
    var json = false

    func run() throws {
        guard let device else {
            let (entries, problems) = ProfileStore.standard.allProfiles()
            if entries.isEmpty { print("no profile files (user: \(ProfileStore.standard.userDirectory ?? "none"))") }
            for entry in entries {
                print("\(pad(entry.profile.deviceID ?? "(no id)", 32)) \(pad(entry.origin.rawValue, 8)) \(pad(entry.profile.source.rawValue, 14)) \(entry.path)")
            }
            for problem in problems { print("  skipped: \(problem)") }
            return
        }
        let (profile, origin, problems, _) = profileInUse(for: device, global: global)
        for problem in problems { printError("skipped \(problem)") }
        if json {
            print(profile.encodedJSON(), terminator: "")
            return
        }
        print("\(profile.deviceID ?? device): \(origin)")
        guard !profile.channels.isEmpty else { return }
        print("  source             \(profile.source.rawValue)")
        if profile.drive == .level { print("  drive              levels from 0 (measured from zero; replaces the board's offset)") }
        for channel in profile.channels {
            var line = "  \(pad(channel.name, 18)) dead zone \(fixed(channel.deadZone, 3)), exponent \(fixed(channel.responseExponent, 2)), full scale \(fixed(channel.fullScaleOutput, 3))"
            if let f0 = channel.resonantFrequency { line += ", f0 \(fixed(f0, 1)) Hz" }
            if let q = channel.qFactor { line += ", Q \(fixed(q, 1))" }
            if let band = channel.usableBand { line += ", band \(fixed(band.lowerBound, 1))–\(fixed(band.upperBound, 1)) Hz" }
            if !channel.frequencyResponse.isEmpty { line += ", \(channel.frequencyResponse.count)-point frequency map" }
            if !channel.frequencyResponseByOutput.isEmpty { line += ", band by output \(describe(channel.frequencyResponseByOutput, unit: ""))" }
            if let saturation = channel.saturationOutput { line += ", levels off at \(fixed(saturation, 3))" }
            if let start = channel.startDrive { line += ", starts at \(fixed(start, 3))" + (channel.stopDrive.map { $0 < start ? " (runs down to \(fixed($0, 3)))" : "" } ?? "") }
            if channel.lowestOutputFromRest() > 0 { line += ", floor \(fixed(channel.lowestOutputFromRest(), 3)) from rest" }
            if let rise = channel.riseTime { line += ", spin-up \(fixed(rise * 1000, 0)) ms" }
            if let fall = channel.fallTime { line += ", spin-down \(fixed(fall * 1000, 0)) ms" }
            print(line)
        }
        switch profile.sharpness {
        case .none: print("  sharpness          none")
        case .frequency: print("  sharpness          frequency")
        case .motorMix(let low, let high): print("  sharpness          motor mix \(profile.channels[low].name) → \(profile.channels[high].name)")
        }
        let tap = profile.transient
        print("  tap                " + describe(tap))
        print("  limits             rated \(fixed(profile.limits.ratedLevel, 2)), overdrive \(fixed(profile.limits.overdriveLevel, 2))")
    }
}

/// `haptic-cal profile export DEVICE [-o FILE]`.
struct ExportProfile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write the profile a device gets as JSON (the uncalibrated default when it has none, as a template).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device.")
    var device: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write (default: standard output).", valueName: "file"))
    var output: String?

    func run() throws {
        let (profile, origin, problems, _) = profileInUse(for: device, global: global)
        for problem in problems { printError("skipped \(problem)") }
        guard !profile.channels.isEmpty else { throw CommandFailure(origin) }
        guard let output else {
            print(profile.encodedJSON(), terminator: "")
            return
        }
        try ProfileStore.write(profile, toPath: output)
        print("exported the \(origin) to \(output)")
    }
}

/// `haptic-cal profile import FILE [--device ID]`.
struct ImportProfile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Check a profile file and install it as a user profile (written atomically).",
        discussion: "With --device, the profile is installed for that device (its device_id is replaced): a profile from one unit can serve another of the same model.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The profile file (JSON; see Hardware/profiles/README.md).")
    var file: String

    @Option(help: ArgumentHelp("Install it for this device id.", valueName: "id"))
    var device: String?

    func run() throws {
        var profile: CalibrationProfile
        profile = try CalibrationProfile(contentsOfFile: file)
        if let device { profile.deviceID = device }
        guard let id = profile.deviceID else {
            throw CommandFailure("\(file): $.device_id: missing; pass --device ID to say which device it is for")
        }
        if let description = describe(id, global: global), description.id == id {
            try ProfileStore.check(profile, file: file, device: description)
        } else {
            printError("note: \(id) is not connected; the profile was checked for format only")
        }
        let path = try ProfileStore.standard.save(profile)
        print("imported \(file) for \(id) to \(path)")
    }
}

/// A command that could not do its job, in one line.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
