import Foundation
import Haptics
import HapticsCalibration
import Synchronization
import Testing

/// Simulated sources over the real recording backend, and calibrations run once per test process
/// (each takes seconds in a debug build) and shared by the suites that only read them.
enum CalibrationFixtures {
    /// A simulated source for `deviceID` (a recording preset, or one described by `devices`), with
    /// the default model changed by `model`.
    static func source(_ deviceID: String, devices: String? = nil, model: String? = nil) throws -> SimulatedSource {
        let directory = TestSupport.makeTemporaryDirectory("calibration")
        var settings: [String: String] = [:]
        settings["recording.devices"] = devices
        return try SimulatedSource(
            deviceID: deviceID, searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), settings: settings,
            recordingPath: directory + "/recording.jsonl", modelSettings: model, logger: TestSupport.quietLogger)
    }

    /// A calibrated simulated device: its source (for further measurements) and the result.
    final class Calibrated: @unchecked Sendable {
        // The source is used by one test at a time through `measure` and `verify`, under `lock`.
        let source: SimulatedSource
        let result: CalibrationResult
        let lock = Mutex(())
        var profile: CalibrationProfile { result.profile }

        init(source: SimulatedSource, result: CalibrationResult) {
            self.source = source
            self.result = result
        }

        /// Measures stimuli through `profile` (serialised: the source's clock and engine are shared).
        func measure(_ stimuli: [Stimulus], profile: CalibrationProfile) throws -> [Double] {
            try lock.withLock { _ in try source.measure(stimuli, profile: profile, progress: SilentProgress())! }
        }

        /// Verifies `profile` (serialised).
        func verify(_ profile: CalibrationProfile) throws -> VerificationReport {
            try lock.withLock { _ in try Verifier.verify(profile, source: source) }
        }
    }

    static func calibrate(_ deviceID: String, model: String? = nil) -> Result<Calibrated, CalibrationError> {
        do {
            let source = try source(deviceID, model: model)
            return .success(Calibrated(source: source, result: try Calibrator().calibrate(source, verify: false)))
        } catch let error as CalibrationError {
            return .failure(error)
        } catch {
            return .failure(.measurement("\(error)"))
        }
    }

    /// The recording LRA with its default model (175 Hz, Q 6, dead zone 0.08, 2 g).
    static let lra = calibrate("recording:lra")
    /// The recording ERM with its default model (150 Hz, dead zone 0.12, τ 30 ms, 2 g).
    static let erm = calibrate("recording:erm")
    /// The recording gamepad (strong 55 Hz 3 g dead zone 0.12, weak 160 Hz 1.5 g dead zone 0.10).
    static let gamepad = calibrate("recording:gamepad")
}
