import ArgumentParser
import Haptics

/// `haptic-cal info DEVICE`: everything a device says about itself, and how it will be rendered.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a device's description and rendering profile.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device: an id (see `haptic-cal list`), a unique id prefix, or part of its name.")
    var device: String

    func run() throws {
        let system = global.makeSystem()
        let description = try system.resolve(device)
        print("\(description.id): \(description.name)")
        print("  backend:          \(description.backend)")
        print("  actuator:         \(description.actuator.rawValue)")
        print("  update interval:  ≥ \(fixed(description.minimumUpdateInterval * 1000, 1)) ms")
        print("  wake latency:     \(fixed(description.wakeLatency * 1000, 1)) ms")
        if let reason = description.unavailableReason { print("  unavailable:      \(reason)") }
        if let physical = description.physicalID { print("  physical device:  \(physical)") }
        if !description.alternatives.isEmpty { print("  also reachable:   \(description.alternatives.joined(separator: ", ")) (served by \(description.backend))") }
        if let envelope = description.envelope {
            var line = "  drive envelope:   rated level \(fixed(envelope.ratedLevel, 2))"
            if envelope.amplitudeOffset > 0 { line += ", offset \(fixed(envelope.amplitudeOffset, 2))" }
            if envelope.kickDuration > 0 { line += ", kick to \(fixed(envelope.kickLevel, 2)) for ≤ \(fixed(envelope.kickDuration * 1000, 0)) ms" }
            if let limit = envelope.maxContinuousDuration { line += ", cut after \(fixed(limit, 1)) s" }
            print(line)
        }
        for (index, channel) in description.channels.enumerated() {
            var line = "  channel \(index):        \(channel.name), \(channel.actuator.rawValue), \(channel.amplitudeSteps) amplitude steps"
            if let range = channel.frequencyRange { line += ", \(fixed(range.lowerBound, 1))–\(fixed(range.upperBound, 1)) Hz" }
            if let f0 = channel.resonantFrequency { line += ", resonance \(fixed(f0, 1)) Hz" }
            if let nominal = channel.nominalFrequency { line += ", nominal \(fixed(nominal, 1)) Hz" }
            print(line)
        }
        if description.hasAdaptiveTriggers { print("  triggers:         adaptive (L2, R2): `haptic-cal trigger`") }
        if description.hasNativeEffects { print("  own effects:      ROM library: `haptic-cal play \(description.id) drv2605:strong-click-100`") }
        if description.selfCalibrates {
            let stored = (ProfileStore.standard.lookup(for: description).entry?.profile.deviceCalibration ?? [:]).isEmpty ? "none stored: `haptic-cal calibrate \(description.id)`" : "stored, given back at each open"
            print("  own calibration:  \(stored)")
        }
        let profile = CalibrationProfile.uncalibrated(for: description)
        print("  profile:          \(profile.source.rawValue)")
        switch profile.sharpness {
        case .none: print("  sharpness:        not rendered (one feel)")
        case .frequency:
            for channel in profile.channels {
                if let band = channel.usableBand { print("  sharpness:        \(channel.name) \(fixed(band.lowerBound, 1))–\(fixed(band.upperBound, 1)) Hz") }
            }
        case .motorMix(let low, let high):
            print("  sharpness:        moves energy from \(description.channels[low].name) to \(description.channels[high].name)")
        }
        print("  tap:              " + describe(profile.transient))
    }
}
