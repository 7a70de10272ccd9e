import Foundation
import Haptics
import HapticsCalibration
import Testing

/// The profiles in `Hardware/profiles/` were made on the simulated benches through the GPIO
/// backend (`Hardware/profiles/README.md`): each must describe its bench's physics, which is
/// simulated here offline (no clock, no backend), so a profile made some other way, or left
/// behind when a model changed, fails.
@Suite("Calibration: shipped profiles against their benches' physics")
struct CalibrationShippedProfileTests {
    /// The shipped profile of each bench that has one.
    static let benches: [(file: String, preset: BenchPreset)] = [
        ("gpio_rpi-coin-erm_erm.json", .coinERM),
        ("gpio_rpi-hbridge-lra_lra.json", .hBridgeLRA),
    ]

    static func profile(_ file: String) throws -> CalibrationProfile {
        try ProfileFormat.read(path: TestSupport.packageRoot + "/Hardware/profiles/" + file)
    }

    @Test("every shipped GPIO profile has a bench, and each bench's profile is shipped")
    func everyProfileHasABench() throws {
        let directory = TestSupport.packageRoot + "/Hardware/profiles"
        // The GPIO boards' files; the evdev ones come from a driver's source, not a measurement.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("gpio_") && $0.hasSuffix(".json") }.sorted()
        #expect(files == Self.benches.map(\.file).sorted(), "profiles without a bench (or benches without their profile): \(files)")
        for (file, preset) in Self.benches {
            let profile = try Self.profile(file)
            #expect(profile.deviceID == preset.deviceID && profile.source == .shipped, "\(file)")
        }
    }

    @Test("the profile's steady output is its bench's within 10 % across the drives it is held at", arguments: [0, 1])
    func steadyOutput(_ index: Int) throws {
        let (file, preset) = Self.benches[index]
        let profile = try Self.profile(file)
        let channel = profile.channels[0]
        // The truth asked in the profile's own drives (levels from zero, or an older profile's amplitudes).
        let truth = BenchTruth(preset: preset, drive: profile.drive)
        let top = truth.envelope.steadyAmplitudeLimit
        // The curve is the output at the channel's best frequency (with a frequency map), else at its own.
        let best = channel.frequencyResponse.max { $0.relativeOutput < $1.relativeOutput }?.frequency ?? 0
        // From where it starts from rest (its start drive, measured from zero) to its rated level.
        let low = channel.startDrive ?? 0
        for fraction in [0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0] {
            let drive = low + fraction * (top - low)
            let expected = truth.steadyOutput(amplitude: drive, frequency: best)
            let predicted = channel.output(atDrive: drive, frequency: best)
            #expect(abs(predicted / expected - 1) <= 0.10, "\(file): at drive \(drive) the profile says \(predicted) g, the physics \(expected) g")
        }
    }

    @Test("the profile's limits are the backend's envelope, and its spin-up and spin-down are the bench's", arguments: [0, 1])
    func limitsAndTimes(_ index: Int) throws {
        let (file, preset) = Self.benches[index]
        let profile = try Self.profile(file)
        let envelope = preset.envelope(for: profile.drive)
        #expect(profile.drive == .level, "\(file): made from zero, in levels")
        #expect(abs(profile.limits.ratedLevel - envelope.steadyAmplitudeLimit) < 1e-3, "\(file): rated \(profile.limits.ratedLevel)")
        #expect(abs(profile.limits.overdriveLevel - envelope.kickAmplitudeLimit) < 1e-3, "\(file): overdrive \(profile.limits.overdriveLevel)")
        let truth = BenchTruth(preset: preset, drive: profile.drive).timing(amplitude: envelope.steadyAmplitudeLimit)
        let rise = try #require(profile.channels[0].riseTime), fall = try #require(profile.channels[0].fallTime)
        // Measured from when the engine asked: a few milliseconds of latency come on top.
        #expect(abs(rise - truth.rise) <= max(0.25 * truth.rise, 0.012), "\(file): spin-up \(rise) s, physics \(truth.rise) s")
        #expect(abs(fall - truth.fall) <= max(0.25 * truth.fall, 0.012), "\(file): spin-down \(fall) s, physics \(truth.fall) s")
    }
}
