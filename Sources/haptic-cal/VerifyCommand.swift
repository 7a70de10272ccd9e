import ArgumentParser
import Haptics
import HapticsCalibration
import HapticsTools

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
