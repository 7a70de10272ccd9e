/// Why a calibration is not good enough to write, and what to try: the quality gates and what the
/// measurements say about the cause.
///
/// A profile is written only if every channel's amplitude fit reaches ``minimumRSquared`` and, for
/// sensor sources, the verification's mean error stays within ``maximumMeanError``.
public struct CalibrationDiagnosis: Error, Sendable, Hashable, CustomStringConvertible {
    /// The fit a profile needs, R².
    public static let minimumRSquared = 0.98
    /// The verification's mean error a profile may have (0.05 = 5 %).
    public static let maximumMeanError = 0.05

    /// A likely cause.
    public enum Cause: String, Sendable, Hashable, CaseIterable {
        /// The sensor's noise is large against the vibration measured.
        case tooNoisy = "too noisy"
        /// The actuator did not reach a steady vibration within the tones, or did not come to rest.
        case notSettling = "not settling"
        /// The output levels off at the top of the range (the sensor's range, a supply, an actuator
        /// driven past its resonance).
        case saturating
        /// The sensor is read too slowly for the vibration's length.
        case sensorTooSlow = "sensor too slow"
    }

    /// A cause, the evidence for it and what to try.
    public struct Finding: Sendable, Hashable {
        /// The cause.
        public var cause: Cause
        /// What was measured that points at it.
        public var evidence: String
        /// What to try.
        public var advice: String
    }

    /// Which gate failed and by how much.
    public var failures: [String]
    /// The likely causes found (possibly none).
    public var findings: [Finding]

    public var description: String {
        var lines = ["calibration not written: " + failures.joined(separator: "; ")]
        for finding in findings { lines.append("  \(finding.cause.rawValue): \(finding.evidence); try: \(finding.advice)") }
        if findings.isEmpty {
            lines.append("  no single cause stands out; run `haptic-cal calibrate … --svg FILE` and look at the residuals, then calibrate again")
        }
        return lines.joined(separator: "\n")
    }

    /// The gates applied to a calibration: nil if it passes, else the diagnosis.
    public static func check(
        fits: [ChannelFit], measurements: [ChannelMeasurement], verification: VerificationReport?, device: String
    ) -> CalibrationDiagnosis? {
        var failures: [String] = []
        for fit in fits where fit.amplitude.rSquared < minimumRSquared {
            failures.append("the response fit of \(device) channel \(fit.channel) reaches R² \(fixed(fit.amplitude.rSquared, 3)) (needs \(minimumRSquared))")
        }
        if let verification, verification.meanError > maximumMeanError {
            failures.append(
                "verification: mean error \(fixed(verification.meanError * 100, 1)) % (needs ≤ \(fixed(maximumMeanError * 100, 0)) %), "
                    + "largest \(fixed(verification.maxError * 100, 1)) %")
        }
        guard !failures.isEmpty else { return nil }
        return CalibrationDiagnosis(failures: failures, findings: findings(fits: fits, measurements: measurements, verification: verification))
    }

    /// What the measurements say about the cause.
    static func findings(fits: [ChannelFit], measurements: [ChannelMeasurement], verification: VerificationReport?) -> [Finding] {
        var result: [Finding] = []
        func add(_ cause: Cause, _ evidence: String, _ advice: String) {
            if !result.contains(where: { $0.cause == cause }) { result.append(Finding(cause: cause, evidence: evidence, advice: advice)) }
        }
        for measurement in measurements {
            let fit = fits.first { $0.channel == measurement.channel }
            let outputs = measurement.amplitude.filter { $0.input > 0 }.map(\.output)
            let smallest = outputs.filter { $0 > 3 * measurement.noiseFloor }.min()
            // Noise: the floor against what intensity 0.1 asks, or against the smallest output the fit relied on.
            if measurement.noiseFloor > 0.03 || (smallest.map { measurement.noiseFloor > 0.5 * $0 } ?? true) {
                add(
                    .tooNoisy, "the sensor reads \(fixed(measurement.noiseFloor, 3)) g with nothing driven",
                    "fix the sensor firmly to the actuator (tape or glue, short stiff mount), keep the bench still, use the sensor's smallest range")
            }
            if let fit, fit.amplitude.relativeResidualRMS > 0.06, !(fit.amplitude.residuals.suffix(3).allSatisfy { $0.output < 0 }) {
                add(
                    .tooNoisy, "the outputs scatter \(fixed(fit.amplitude.relativeResidualRMS * 100, 1)) % around the fitted curve",
                    "fix the sensor firmly to the actuator, and calibrate without --quick (longer tones average more readings)")
            }
            if measurement.tonesMeasured > 0, Double(measurement.unsettledTones) > 0.1 * Double(measurement.tonesMeasured) {
                add(
                    .notSettling, "\(measurement.unsettledTones) of \(measurement.tonesMeasured) tones had not settled to a steady vibration",
                    "check that nothing else drives the actuator and the bench does not resonate; a slow motor needs the longer tones of a full calibration")
            }
            if let timing = measurement.timing, timing.fall == nil {
                add(
                    .notSettling, "the vibration had not died down a second after the drive stopped",
                    "check that the actuator stops when the drive does (wiring, a driver left enabled) and that the sensor does not sit on a resonant mount")
            }
            if let fit {
                let top = measurement.largestSteadyDrive
                let reach = fit.amplitude.output(atDrive: top)
                // At 60 % of the saturation the curve is already 20 % under its straight line.
                if let saturation = fit.amplitude.saturation, reach > 0.6 * saturation {
                    add(
                        .saturating, "the output levels off at \(fixed(saturation, 2)) g (the fit reaches \(fixed(reach, 2)) g at the largest steady drive)",
                        "if the sensor clips, set a wider range (ADXL345: 16 g); if the actuator resonates, calibrate at its resonance; otherwise lower rated_level in the board file")
                } else if fit.amplitude.residuals.count >= 4, fit.amplitude.residuals.suffix(3).allSatisfy({ $0.output < -0.03 * max(reach, 1e-6) }) {
                    add(
                        .saturating, "the three strongest drives measure below the fitted curve",
                        "if the sensor clips, set a wider range; otherwise lower rated_level in the board file")
                }
            }
            if let interval = measurement.sampleInterval, interval > 1.0 / 200 {
                add(
                    .sensorTooSlow, "the sensor gave a reading every \(fixed(interval * 1000, 1)) ms (\(fixed(1 / interval, 0)) per second)",
                    "raise in_accel_sampling_frequency (400 Hz or more), or read it over SPI instead of I²C")
            }
        }
        if let verification {
            let taps = verification.taps + verification.effects
            let tapError = taps.isEmpty ? 0 : taps.map { abs($0.relativeError) }.reduce(0, +) / Double(taps.count)
            let toneError = verification.tones.isEmpty ? 0 : verification.tones.map { abs($0.relativeError) }.reduce(0, +) / Double(verification.tones.count)
            if tapError > 2 * max(toneError, 0.01), let interval = measurements.compactMap(\.sampleInterval).max(), interval > 1.0 / 400 {
                add(
                    .sensorTooSlow, "taps miss by \(fixed(tapError * 100, 1)) % on average against \(fixed(toneError * 100, 1)) % for tones, with a reading every \(fixed(interval * 1000, 1)) ms",
                    "raise in_accel_sampling_frequency so a 40 ms tap gets more readings")
            }
        }
        return result
    }
}
