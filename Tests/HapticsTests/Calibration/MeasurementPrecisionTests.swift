import Haptics
import HapticsCalibration
import Synchronization
import Testing

/// Sensor sources play a short event again, and pool its plays, until its peak is within the
/// source's target standard error (`VibrationSensorSource.pooledTraces`), through `measure` as the
/// calibrator and the verifier call it.
@Suite("Calibration: uncertain peaks are played again until they are precise")
struct MeasurementPrecisionTests {
    /// A sensor whose readings are made up; each stimulus's intensity names how its plays come out:
    ///
    /// - intensity 0.5: 0.5 g, the same every play;
    /// - intensity 0.2: 0.2 g that scatters by 15 % from play to play;
    /// - intensity 0.001: nothing above the noise, scattering as noise does.
    final class MadeUpSensor: VibrationSensorSource, @unchecked Sendable {
        let method = CalibrationProfile.Source.accelerometer
        let device = DeviceDescription(
            id: "made-up:lra", name: "made-up LRA", backend: "made-up", actuator: .lra,
            channels: [ChannelDescription(name: "main", actuator: .lra, frequencyRange: 130...260, resonantFrequency: 175)],
            minimumUpdateInterval: 0.001, wakeLatency: 0.001)
        let envelope: DriveEnvelope? = nil
        let repetitions: Int
        let targetStandardError: Double
        let maximumPlays: Int
        /// Plays by intensity.
        private let plays = Mutex<[Double: Int]>([:])
        /// Every play's intensity, in the order played.
        let order = Mutex<[Double]>([])
        private var random = SeededRandom(seed: 11)

        init(repetitions: Int, target: Double, maximumPlays: Int) {
            self.repetitions = repetitions
            targetStandardError = target
            self.maximumPlays = maximumPlays
        }

        func noiseAmplitude() -> Double { 0.01 }

        func capture(_ stimuli: [Stimulus], profile: CalibrationProfile, phase: String, progress: ProgressReporter) -> [AccelerationTrace] {
            stimuli.map { stimulus in
                let intensity = stimulus.pattern.hapticEvents[0].value(of: .hapticIntensity)
                plays.withLock { $0[intensity, default: 0] += 1 }
                order.withLock { $0.append(intensity) }
                let level: Double
                switch intensity {
                case 0.5: level = 0.5
                case 0.2: level = 0.2 * (1 + 0.15 * random.gaussian())
                default: level = 0.01 * abs(random.gaussian())
                }
                // A steady vibration of `level` g from the start: its magnitude is level / √2 rms.
                let times = stride(from: 0.0, to: stimulus.captureLength, by: 0.00125).map { $0 }
                return AccelerationTrace(times: times, magnitudes: times.map { _ in level / 2.0.squareRoot() })
            }
        }

        func playCount(_ intensity: Double) -> Int { plays.withLock { $0[intensity] ?? 0 } }
    }

    static func tap(_ intensity: Double) -> Stimulus { .tap(intensity: intensity, sharpness: 0.5, captureLength: 0.1) }

    @Test("a steady peak keeps the source's repetitions; a scattering one is played until its standard error is within the target")
    func scatteringPeaks() throws {
        let sensor = MadeUpSensor(repetitions: 4, target: 0.03, maximumPlays: 100)
        let profile = CalibrationProfile.uncalibrated(for: sensor.device)
        let peaks = try #require(try sensor.measure([Self.tap(0.5), Self.tap(0.2), Self.tap(0.001)], profile: profile, progress: SilentProgress()))
        #expect(sensor.playCount(0.5) == 4)
        // At the noise: relative precision means nothing there.
        #expect(sensor.playCount(0.001) == 4)
        // 15 % per play needs (15 / 3)² = 25 plays; the scatter is estimated from the plays themselves.
        #expect(sensor.playCount(0.2) >= 12 && sensor.playCount(0.2) <= 60, "\(sensor.playCount(0.2)) plays")
        #expect(abs(peaks[0] / 0.5 - 1) < 0.01)
        #expect(abs(peaks[1] / 0.2 - 1) < 0.10, "\(peaks[1])")
    }

    @Test("a batch's plays take turns: what drifts while it plays spreads over every stimulus")
    func playsInTurns() throws {
        let sensor = MadeUpSensor(repetitions: 3, target: 0, maximumPlays: 3)
        let profile = CalibrationProfile.uncalibrated(for: sensor.device)
        _ = try sensor.measure([Self.tap(0.5), Self.tap(0.2), Self.tap(0.001)], profile: profile, progress: SilentProgress())
        #expect(sensor.order.withLock { $0 } == [0.5, 0.2, 0.001, 0.5, 0.2, 0.001, 0.5, 0.2, 0.001])
    }

    @Test("never past the maximum, and tones are played once")
    func limits() throws {
        let sensor = MadeUpSensor(repetitions: 4, target: 0.03, maximumPlays: 10)
        let profile = CalibrationProfile.uncalibrated(for: sensor.device)
        _ = try sensor.measure([Self.tap(0.2), .tone(intensity: 0.5, sharpness: 0.5, duration: 0.35, window: 0.15)], profile: profile, progress: SilentProgress())
        #expect(sensor.playCount(0.2) == 10)
        #expect(sensor.playCount(0.5) == 1)
    }

    @Test("a source without a target plays each short event its repetitions")
    func withoutTarget() throws {
        let sensor = MadeUpSensor(repetitions: 4, target: 0, maximumPlays: 30)
        let profile = CalibrationProfile.uncalibrated(for: sensor.device)
        _ = try sensor.measure([Self.tap(0.2)], profile: profile, progress: SilentProgress())
        #expect(sensor.playCount(0.2) == 4)
    }
}
