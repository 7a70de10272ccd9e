import Foundation
import Haptics
import HapticsCalibration
import Testing

extension CalibrationBenchTests {
    /// Calibration of a waveform device end to end: the real alsa backend (`libhaptics-alsa.so`
    /// through dlopen and alsa-lib) plays the engine's samples into alsa-lib's `file` PCM, whose
    /// pipe the bench reads as a card's output and feeds, sample by sample, to a voice coil behind
    /// an amplifier (physics from datasheet figures); the accelerometer source reads the
    /// simulated ADXL345 it shakes from an IIO tree, in real time. Nested in the GPIO benches'
    /// suite, so it runs serialized with them and in their step of `Scripts/test`.
    @Suite("Calibration: end to end through the alsa backend on a simulated voice coil")
    struct Coil {
        final class Run: Sendable {
            let preset: CoilBenchPreset
            let result: CalibrationResult
            let seconds: Double
            let output: SimulatedCoilBench.CardOutput

            init(preset: CoilBenchPreset, result: CalibrationResult, seconds: Double, output: SimulatedCoilBench.CardOutput) {
                self.preset = preset
                self.result = result
                self.seconds = seconds
                self.output = output
            }

            var verification: VerificationReport { result.verification! }
        }

        static func calibrate(_ preset: CoilBenchPreset) -> Result<Run, CalibrationError> {
            do throws(CalibrationError) {
                let bench = try SimulatedCoilBench(preset: preset)
                defer { bench.remove() }
                try bench.start()
                let system = HapticSystem(
                    configuration: .init(
                        searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), settings: bench.backendSettings,
                        logger: TestSupport.quietLogger, daemon: .never))
                let device: HapticDevice
                do { device = try system.openDevice(preset.deviceID) } catch { return .failure(.device(error)) }
                let start = HapticInstant.monotonicNow()
                let result: CalibrationResult
                do throws(CalibrationError) {
                    let source = AccelerometerSource(
                        playback: try RealtimePlayback(device: device, logger: TestSupport.quietLogger),
                        sensor: try IIOAccelerometer.find(root: bench.iioRoot, request: nil))
                    result = try Calibrator(plan: .quick).calibrate(source)
                } catch {
                    device.close()
                    throw error
                }
                let seconds = HapticInstant.monotonicNow().seconds(since: start)
                device.close()
                // What the card put out until the device closed, once the bench has read it all.
                Thread.sleep(forTimeInterval: 0.1)
                return .success(Run(preset: preset, result: result, seconds: seconds, output: bench.output))
            } catch {
                return .failure(error)
            }
        }

        static let voiceCoil = calibrate(.voiceCoil)

        /// The coil alone, simulated as the bench runs it (samples held at 48 kHz, the sensor's
        /// mean over a conversion period), with a sine of `amplitude` (0…1 of the rated level) at
        /// `frequency` Hz: what a calibration should find.
        struct Truth {
            let preset: CoilBenchPreset

            /// The vibration's envelope (√2 × RMS over centred 10 ms windows) every millisecond, g,
            /// for `on` seconds of the sine and `off` seconds after.
            func envelope(amplitude: Double, frequency: Double, on: Double, off: Double) -> [Double] {
                var coil = LinearResonator(parameters: preset.coil)
                let rate = Double(preset.rate)
                let peak = amplitude * preset.ratedLevel * preset.fullScaleVoltage
                let width = max(Int((rate / preset.sensor.outputDataRate).rounded()), 1)
                var recent = [Double](repeating: 0, count: width), sum = 0.0, slot = 0
                var squares: [Double] = []
                for index in 0..<Int((on + off) * rate) {
                    let time = Double(index) / rate
                    let voltage = time < on ? peak * sin(2 * Double.pi * frequency * time) : 0
                    coil.advance(by: 1 / rate, voltage: voltage)
                    let acceleration = coil.acceleration.z
                    sum += acceleration - recent[slot]
                    recent[slot] = acceleration
                    slot = (slot + 1) % width
                    let mean = sum / Double(width)
                    squares.append(mean * mean)
                }
                let step = Int(rate / 1000), window = Int(rate / 100)
                return stride(from: 0, to: squares.count, by: step).map { centre in
                    let slice = squares[max(centre - window / 2, 0)..<min(centre + window / 2, squares.count)]
                    return (2 * slice.reduce(0, +) / Double(slice.count)).squareRoot()
                }
            }

            /// The steady output, g.
            func steadyOutput(amplitude: Double, frequency: Double) -> Double {
                envelope(amplitude: amplitude, frequency: frequency, on: 0.4, off: 0).suffix(150).reduce(0, +) / 150
            }

            /// Seconds from the sine's start to 90 % of its steady envelope, and from its end to under 10 %.
            func timing(amplitude: Double, frequency: Double) -> (rise: Double, fall: Double) {
                let envelope = envelope(amplitude: amplitude, frequency: frequency, on: 0.4, off: 0.2)
                let steady = envelope[250..<395].reduce(0, +) / 145
                let rise = Double(envelope.firstIndex { $0 >= 0.9 * steady } ?? 400) / 1000
                let fall = Double((envelope[400...].firstIndex { $0 <= 0.1 * steady } ?? 600) - 400) / 1000
                return (rise, fall)
            }
        }

        @Test("verify reports mean error ≤ 5 % and largest ≤ 15 %, the fit reaches R² ≥ 0.98, and the profile is accepted")
        func verifies() throws {
            let run = try Self.voiceCoil.get()
            let report = run.verification
            #expect(report.meanError <= 0.05, "mean error \(report.meanError)")
            #expect(report.maxError <= 0.15, "largest error \(report.maxError)")
            #expect(run.result.diagnosis == nil, "\(run.result.diagnosis.map { "\($0)" } ?? "")")
            #expect(run.result.fits[0].amplitude.rSquared >= 0.98)
            #expect(report.all.count >= 29)
            #expect(run.result.profile.sharpness == .frequency, "a coil's sharpness is its drive frequency")
            print(Self.row(run))
        }

        @Test("the resonance the device file leaves out is found within 3 % of the physics, Q within 15 %, full scale within 7 %")
        func resonance() throws {
            let run = try Self.voiceCoil.get()
            let truth = Truth(preset: run.preset)
            let found = try #require(run.result.fits[0].resonance)
            // The natural frequency (105 Hz, its suspension softening by up to 2 % at the rated
            // amplitude), not where the acceleration peaks: at Q 2.5 that is 4 % higher.
            #expect(abs(found.resonantFrequency - 105) / 105 < 0.03, "f0 \(found.resonantFrequency) Hz, truth 105 Hz (less up to 2 %)")
            #expect(abs(found.qFactor - 2.5) / 2.5 < 0.15, "Q \(found.qFactor), 2.5 with the coil on the amplifier")
            // Full drive at the frequency the amplitude curve was measured at.
            let channel = run.result.profile.channels[0]
            let frequency = run.result.measurements[0].amplitudeFrequency
            let expected = truth.steadyOutput(amplitude: 1, frequency: frequency)
            let fitted = channel.output(atDrive: 1, frequency: frequency)
            #expect(abs(fitted - expected) / expected < 0.07, "full scale \(fitted) g at \(frequency) Hz, truth \(expected) g")
            print("voice-coil: f0 \(found.resonantFrequency) Hz (105), Q \(found.qFactor) (2.5), full scale \(fitted) g at \(frequency) Hz (truth \(expected))")
        }

        @Test("ring-up and ring-down are measured within 25 % (or 12 ms) of the physics, the stream's delay taken off")
        func timing() throws {
            let run = try Self.voiceCoil.get()
            let measurement = run.result.measurements[0]
            let found = try #require(measurement.timing)
            let frequency = measurement.amplitudeFrequency > 0 ? measurement.amplitudeFrequency : 105
            let truth = Truth(preset: run.preset).timing(amplitude: measurement.largestSteadyDrive, frequency: frequency)
            let tolerance = { (truth: Double) in max(0.25 * truth, 0.012) }
            #expect(abs(found.rise - truth.rise) <= tolerance(truth.rise), "rise \(found.rise) s, truth \(truth.rise) s")
            let fall = try #require(found.fall)
            #expect(abs(fall - truth.fall) <= tolerance(truth.fall), "fall \(fall) s, truth \(truth.fall) s")
            print("voice-coil: rise \(found.rise) s (truth \(truth.rise)), fall \(fall) s (truth \(truth.fall)) at \(frequency) Hz")
        }

        @Test("the card never got more than the device file's rated level, and the coil was left silent")
        func card() throws {
            let run = try Self.voiceCoil.get()
            let rated = run.preset.ratedLevel
            #expect(run.output.frames > 48_000 * 30, "\(run.output.frames) frames played")
            #expect(run.output.peak <= rated + 1.0 / 32_767 && run.output.peak > 0.9 * rated, "peak \(run.output.peak), rated \(rated)")
            #expect(run.output.lastBlockPeak == 0, "the last block the card got: peak \(run.output.lastBlockPeak)")
        }

        static func row(_ run: Run) -> String {
            let fit = run.result.fits[0]
            let channel = run.result.profile.channels[0]
            func value(_ number: Double?) -> String { number.map { String(format: "%.3f", $0) } ?? "none" }
            return "\(run.preset.name): f0 \(value(fit.resonance?.resonantFrequency)) Hz, Q \(value(fit.resonance?.qFactor)), "
                + "R² \(String(format: "%.4f", fit.amplitude.rSquared)), band \(channel.usableBand.map { "\(value($0.lowerBound))–\(value($0.upperBound))" } ?? "none") Hz, "
                + "reach \(fit.reachBand.map { "\(value($0.lowerBound))–\(value($0.upperBound))" } ?? "none") Hz, "
                + "rise \(value(run.result.measurements[0].timing?.rise)) s, fall \(value(run.result.measurements[0].timing?.fall)) s; "
                + "verify mean \(String(format: "%.1f", run.verification.meanError * 100)) %, largest \(String(format: "%.1f", run.verification.maxError * 100)) % "
                + "over \(run.verification.all.count); \(String(format: "%.0f", run.seconds)) s; tap \(run.result.profile.transient)"
        }
    }
}
