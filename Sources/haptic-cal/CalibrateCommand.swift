import ArgumentParser
import Haptics
import HapticsCalibration

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
        // Without a source: the device's own calibration alone (checked once the device is known).
        if options.source == nil {
            if options.model != nil || options.bench != nil || options.svg != nil || options.quick {
                throw ValidationError("--model, --bench, --svg and --quick are for a measurement; add --source")
            }
            return
        }
        try options.validate(allowInteractive: true)
        if noSave, output != nil { throw ValidationError("--no-save and --output contradict each other; pick one") }
        if noVerify, !noSave, options.measuresWithSensor(allowInteractive: true) {
            throw ValidationError("--no-verify: a sensor calibration is written only once its verification passes; add --no-save to fit without writing")
        }
    }

    func run() throws {
        // A device that calibrates itself (a driver IC's auto-calibration) does so first; its
        // results go into the profile, which every later open gives back to it.
        let own = try selfCalibrateIfOffered()
        guard options.source != nil else {
            guard let own else {
                throw ValidationError("--source is required: \(device) does not calibrate itself (interactive, accelerometer[:DEVICE] or simulated)")
            }
            try save(own.profile)
            return
        }
        // Stored first, so the measurement's own open gives the device these results, not older ones.
        if let own, output == nil { try save(own.profile) }
        try measure(deviceCalibration: own?.values ?? [:])
    }

    /// Runs the device's own calibration when it has one: prints the results and returns them with
    /// the profile to store them in (the user's profile for the device, else its uncalibrated
    /// default marked `device`). Nil for a device without one.
    func selfCalibrateIfOffered() throws -> (values: [String: Double], profile: CalibrationProfile)? {
        let system = global.makeSystem()
        let description = try system.resolve(device)
        guard description.selfCalibrates else { return nil }
        if case .daemon = system.mode {
            throw CommandFailure("\(description.id) calibrates itself, which runs in the process that owns it: stop hapticsd or add --in-process")
        }
        print("Calibrating \(description.id) (\(description.name)) with its own calibration")
        let opened = try system.openDevice(description.id)
        defer { opened.close() }
        let values = try opened.selfCalibrate()
        for (key, value) in values.sorted(by: { $0.key < $1.key }) { print("  \(pad(key, 18)) \(fixed(value, 0))") }
        if let period = values["lra_period"], period > 0 {
            print("  resonance          \(fixed(1 / (period * 98.46e-6), 1)) Hz (measured by the chip: LRA_PERIOD × 98.46 µs)")
        }
        var profile = ProfileStore.standard.lookup(for: description).entry.flatMap { $0.origin == .user ? $0.profile : nil }
            ?? { () -> CalibrationProfile in
                var fresh = CalibrationProfile.uncalibrated(for: description)
                fresh.source = .device
                return fresh
            }()
        profile.deviceID = description.id
        profile.deviceCalibration = values
        return (values, profile)
    }

    /// Writes `profile` where the options say.
    func save(_ profile: CalibrationProfile) throws {
        guard !noSave else { return }
        let path: String
        if let output {
            try ProfileStore.write(profile, toPath: output)
            path = output
        } else {
            path = try ProfileStore.standard.save(profile)
        }
        print("profile written to   \(path)")
    }

    /// Measures with the source, fits, verifies and writes the profile (with `deviceCalibration`).
    func measure(deviceCalibration: [String: Double]) throws {
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
        result.profile.deviceCalibration = deviceCalibration
        try save(result.profile)
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
