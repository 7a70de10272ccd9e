import Foundation
import Haptics
import HapticsCalibration
import Testing

/// A calibration that does not hold up is not written: the gates, and what the diagnosis says.
@Suite("Calibration: quality gates and diagnosis")
struct CalibrationDiagnosisTests {
    static func measurement(noise: Double = 0.015, interval: Double = 0.0025, unsettled: Int = 0) -> ChannelMeasurement {
        var measurement = ChannelMeasurement(channel: 0)
        measurement.amplitude = stride(from: 0.0, through: 1.0001, by: 0.1).map { ResponsePoint(input: $0, output: $0 == 0 ? noise : 1.4 * $0 * $0) }
        measurement.noiseFloor = noise
        measurement.sampleInterval = interval
        measurement.tonesMeasured = 16
        measurement.unsettledTones = unsettled
        measurement.timing = ActuatorTiming(rise: 0.09, fall: 0.05, level: 1.4)
        return measurement
    }

    static func fit(rSquared: Double = 0.999, saturation: Double? = nil) -> ChannelFit {
        ChannelFit(channel: 0, amplitude: AmplitudeFit(deadZone: 0, exponent: 2, fullScale: 1.4, rSquared: rSquared, saturation: saturation))
    }

    static func report(meanError: Double, tapError: Double? = nil) -> VerificationReport {
        let tones = (1...10).map { VerificationReport.Item(name: "tone", requested: Double($0) / 10, measured: Double($0) / 10 * (1 + meanError)) }
        let taps = (1...5).map { VerificationReport.Item(name: "tap", requested: Double($0) / 5 * 0.65, measured: Double($0) / 5 * 0.65 * (1 + (tapError ?? meanError))) }
        return VerificationReport(tones: tones, taps: taps, effects: [])
    }

    @Test("a good fit and a verification within 5 % pass")
    func passes() {
        #expect(CalibrationDiagnosis.check(fits: [Self.fit()], measurements: [Self.measurement()], verification: Self.report(meanError: 0.02), device: "d") == nil)
    }

    @Test("a fit under R² 0.98 or a verification over 5 % is refused, naming the gate")
    func refuses() throws {
        let fit = try #require(CalibrationDiagnosis.check(fits: [Self.fit(rSquared: 0.92)], measurements: [Self.measurement()], verification: nil, device: "d"))
        #expect(fit.failures == ["the response fit of d channel 0 reaches R² 0.920 (needs 0.98)"])
        let verification = try #require(
            CalibrationDiagnosis.check(fits: [Self.fit()], measurements: [Self.measurement()], verification: Self.report(meanError: 0.154), device: "d"))
        #expect(verification.failures.first?.hasPrefix("verification: mean error 15.4 % (needs ≤ 5 %)") == true, "\(verification.failures)")
        #expect(verification.description.hasPrefix("calibration not written: "))
    }

    @Test("each cause is told with its evidence and what to try", arguments: CalibrationDiagnosis.Cause.allCases)
    func causes(_ cause: CalibrationDiagnosis.Cause) throws {
        var measurement = Self.measurement()
        var fit = Self.fit(rSquared: 0.95)
        var report = Self.report(meanError: 0.08)
        switch cause {
        case .tooNoisy: measurement = Self.measurement(noise: 0.08)
        case .notSettling: measurement = Self.measurement(unsettled: 5)
        case .saturating: fit = Self.fit(rSquared: 0.95, saturation: 1.3)
        case .sensorTooSlow:
            measurement = Self.measurement(interval: 0.02)
            report = Self.report(meanError: 0.02, tapError: 0.2)
        }
        let diagnosis = try #require(CalibrationDiagnosis.check(fits: [fit], measurements: [measurement], verification: report, device: "d"))
        let finding = try #require(diagnosis.findings.first { $0.cause == cause }, "\(diagnosis)")
        #expect(!finding.evidence.isEmpty && !finding.advice.isEmpty)
        #expect(diagnosis.description.contains("\(cause.rawValue): \(finding.evidence); try: \(finding.advice)"))
        // Only the cause made up here is found.
        #expect(diagnosis.findings.map(\.cause) == [cause], "\(diagnosis)")
    }

    @Test("a measurement drowned in noise is refused end to end, and says it is too noisy")
    func noisyCalibration() throws {
        let source = try CalibrationFixtures.source("recording:erm", model: "noise=0.35,seed=4")
        let result = try Calibrator(plan: .quick).calibrate(source)
        let diagnosis = try #require(result.diagnosis, "R² \(result.fits[0].amplitude.rSquared), mean \(result.verification?.meanError ?? -1)")
        #expect(diagnosis.findings.contains { $0.cause == .tooNoisy }, "\(diagnosis)")
        #expect(!result.isAccepted)
    }

    @Test("haptic-cal calibrate writes no profile when the gates fail, and prints the diagnosis")
    func commandRefuses() throws {
        let config = TestSupport.makeTemporaryDirectory("refuse")
        let (status, output) = try TestSupport.run(
            TestSupport.buildDirectory + "/haptic-cal", ["calibrate", "recording:erm", "--source", "simulated", "--quick", "--model", "noise=0.35,seed=4"],
            environment: ["XDG_CONFIG_HOME": config, "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory])
        #expect(status != 0, "\(output)")
        #expect(output.contains("calibration not written") && output.contains("too noisy"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: config + "/haptics/profiles/recording_erm.json"))
    }
}
