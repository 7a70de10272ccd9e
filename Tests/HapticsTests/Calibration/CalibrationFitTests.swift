import Foundation
import Haptics
import HapticsCalibration
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The fit recovers known physics from measurements made through the real engine and recording
/// backend, and calibration makes output follow intensity.
@Suite("Calibration: fitting simulated devices")
struct CalibrationFitTests {
    /// LRAs whose physics differ from what their description says, so the fit must measure: the
    /// recording LRA says 175 Hz.
    static let lraModels: [(model: String, f0: Double, q: Double, deadZone: Double)] = [
        ("", 175, 6, 0.08),
        ("f0=205,q=12,deadzone=0.15,noise=0.02,seed=7", 205, 12, 0.15),
        ("f0=150,q=3,deadzone=0.03,peak=1.4,seed=3", 150, 3, 0.03),
    ]

    @Test("an LRA's resonance is recovered within ±2 Hz and its dead zone within ±0.02", arguments: 0..<3)
    func lraResonanceAndDeadZone(_ index: Int) throws {
        let truth = Self.lraModels[index]
        let source = try CalibrationFixtures.source("recording:lra", model: truth.model.isEmpty ? nil : truth.model)
        let result = try Calibrator().calibrate(source)
        let channel = result.profile.channels[0]
        let f0 = try #require(channel.resonantFrequency)
        #expect(abs(f0 - truth.f0) <= 2, "fitted f0 \(f0) Hz, truth \(truth.f0) Hz")
        #expect(abs(channel.deadZone - truth.deadZone) <= 0.02, "fitted dead zone \(channel.deadZone), truth \(truth.deadZone)")
        let q = try #require(channel.qFactor)
        #expect(abs(q / truth.q - 1) <= 0.15, "fitted Q \(q), truth \(truth.q)")
        #expect(abs(channel.responseExponent - 1) <= 0.1, "an LRA's force is linear in drive: \(channel.responseExponent)")
        // The map peaks at 1 near resonance; the band sharpness spans contains resonance.
        let best = try #require(channel.frequencyResponse.max { $0.relativeOutput < $1.relativeOutput })
        #expect(best.relativeOutput == 1 && abs(best.frequency - truth.f0) < 8)
        let band = try #require(channel.usableBand)
        #expect(band.contains(truth.f0), "band \(band) contains \(truth.f0) Hz")
        #expect(result.profile.sharpness == .frequency)
        print("LRA \(truth): fitted f0 \(f0) Hz, Q \(q), dead zone \(channel.deadZone), exponent \(channel.responseExponent), band \(band)")
    }

    @Test("an ERM's dead zone is recovered within ±0.02 and its square-law response as exponent 2")
    func ermDeadZone() throws {
        let calibrated = try CalibrationFixtures.erm.get()
        let channel = calibrated.profile.channels[0]
        #expect(abs(channel.deadZone - 0.12) <= 0.02, "fitted \(channel.deadZone), truth 0.12")
        #expect(abs(channel.responseExponent - 2) <= 0.1, "fitted exponent \(channel.responseExponent)")
        #expect(abs(channel.fullScaleOutput - 2) <= 0.1, "fitted full scale \(channel.fullScaleOutput) g, truth 2 g")
        #expect(channel.resonantFrequency == nil && channel.usableBand == nil)
        #expect(calibrated.profile.sharpness == .none)
        print("ERM: fitted dead zone \(channel.deadZone) (truth 0.12), exponent \(channel.responseExponent), full scale \(channel.fullScaleOutput) g")
    }

    @Test("a gamepad's two motors: each dead zone within ±0.02, and sharpness mixes from the low-frequency motor to the high one")
    func gamepadChannels() throws {
        let calibrated = try CalibrationFixtures.gamepad.get()
        let channels = calibrated.profile.channels
        #expect(abs(channels[0].deadZone - 0.12) <= 0.02, "strong: \(channels[0].deadZone)")
        #expect(abs(channels[1].deadZone - 0.10) <= 0.02, "weak: \(channels[1].deadZone)")
        #expect(abs(channels[0].fullScaleOutput - 3) <= 0.15 && abs(channels[1].fullScaleOutput - 1.5) <= 0.1)
        #expect(calibrated.profile.sharpness == .motorMix(low: 0, high: 1))
        // Measured, not read from the description: the strong motor vibrates slower at full drive.
        let frequencies = calibrated.result.measurements.map { $0.dominantFrequency ?? 0 }
        #expect(abs(frequencies[0] - 55) < 5 && abs(frequencies[1] - 160) < 10, "\(frequencies)")
        print("gamepad: fitted dead zones \(channels.map(\.deadZone)) (truth 0.12, 0.10), full scales \(channels.map(\.fullScaleOutput)) g")
    }

    @Test("after calibration, requested intensity against measured output is linear (R² ≥ 0.98) on every device", arguments: ["lra", "erm", "gamepad"])
    func linearity(_ name: String) throws {
        let calibrated = try Self.fixture(name).get()
        let report = try calibrated.verify(calibrated.profile)
        #expect(report.toneLinearity.rSquared >= 0.98, "R² \(report.toneLinearity.rSquared)")
        #expect(abs(report.toneLinearity.slope - 1) <= 0.05, "slope \(report.toneLinearity.slope): intensity 1 asks for 1 g")
        print("\(name): tones R² \(report.toneLinearity.rSquared), slope \(report.toneLinearity.slope); mean error \(report.meanError), max \(report.maxError)")
        for tone in report.tones {
            #expect(abs(tone.relativeError) <= 0.06, "\(tone.name): asked \(tone.requested) g, measured \(tone.measured) g")
        }
        // Taps scale with intensity too. (Single taps on two motors beat, so one can be off by more:
        // the mean over the ladder is what the shape was fitted for.)
        let tapErrors = report.taps.map { abs($0.relativeError) }
        #expect(tapErrors.reduce(0, +) / Double(tapErrors.count) <= 0.08, "\(report.taps.map { "\($0.name): \($0.measured)" })")
        #expect(tapErrors.max()! <= 0.3)
    }

    @Test("without calibration the same ladder is not linear in the motors' square law: the test can fail")
    func uncalibratedIsWorse() throws {
        let calibrated = try CalibrationFixtures.erm.get()
        let uncalibrated = CalibrationProfile.uncalibrated(for: calibrated.source.device)
        let report = try calibrated.verify(uncalibrated)
        #expect(report.toneLinearity.rSquared < 0.98, "uncalibrated R² \(report.toneLinearity.rSquared)")
        #expect(report.tones.contains { abs($0.relativeError) > 0.3 })
    }

    @Test("fitting is measurement, not lookup: noiseless points give the parameters back exactly")
    func fitOnSyntheticPoints() throws {
        let points = stride(from: 0.0, through: 1.0, by: 0.05).map { drive in
            ResponsePoint(input: drive, output: drive > 0.2 ? 1.7 * pow((drive - 0.2) / 0.8, 1.6) : 0)
        }
        let fit = try #require(ResponseFitting.fitAmplitude(points, noiseFloor: 0))
        #expect(abs(fit.deadZone - 0.2) < 0.003 && abs(fit.exponent - 1.6) < 0.01 && abs(fit.fullScale - 1.7) < 0.01, "\(fit)")
        let sweep = stride(from: 100.0, through: 300, by: 5).map { frequency -> ResponsePoint in
            let r = frequency / 212.5, q = 9.0
            return ResponsePoint(input: frequency, output: 1.3 * r * r / (q * ((1 - r * r) * (1 - r * r) + (r / q) * (r / q)).squareRoot()))
        }
        let resonance = try #require(ResponseFitting.fitResonance(sweep, noiseFloor: 0))
        #expect(abs(resonance.resonantFrequency - 212.5) < 0.1 && abs(resonance.qFactor - 9) < 0.1 && abs(resonance.peak - 1.3) < 0.01)
        // A sweep whose highest point is at an end has no resonance inside it.
        #expect(ResponseFitting.fitResonance(Array(sweep.prefix(15)), noiseFloor: 0) == nil)
    }

    @Test("the profile a calibration writes is the one in memory: format round trip")
    func calibratedProfileRoundTrips() throws {
        for calibrated in [try CalibrationFixtures.lra.get(), try CalibrationFixtures.erm.get(), try CalibrationFixtures.gamepad.get()] {
            let decoded = try ProfileFormat.decode(Array(calibrated.profile.encodedJSON().utf8))
            #expect(decoded == calibrated.profile)
            try ProfileStore.check(decoded, file: "<memory>", device: calibrated.source.device)
        }
    }

    @Test("the calibration plots are one well-formed SVG document: sweeps, fitted curves and the verification, charts stacked", arguments: ["lra", "gamepad"])
    func plotsAreWellFormed(_ name: String) throws {
        let calibrated = try Self.fixture(name).get()
        let report = try calibrated.verify(calibrated.profile)
        let svg = CalibrationPlots.document(
            result: calibrated.result, device: calibrated.source.device, unit: calibrated.source.outputUnit, verification: report)
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "") at line \(parser.lineNumber)")
        // One document, a group per chart: two per channel swept in frequency, one per other channel, and the verification's.
        let charts = calibrated.result.measurements.map { $0.frequencySweep.isEmpty ? 1 : 2 }.reduce(1, +)
        #expect(svg.components(separatedBy: "<svg ").count == 2 && svg.components(separatedBy: "<g transform=").count == charts + 1, "\(charts) charts")
    }

    static func fixture(_ name: String) -> Result<CalibrationFixtures.Calibrated, CalibrationError> {
        switch name {
        case "lra": CalibrationFixtures.lra
        case "erm": CalibrationFixtures.erm
        default: CalibrationFixtures.gamepad
        }
    }
}

/// The response model on synthetic sweeps: each of its terms is recovered when it is there, and
/// not invented when it is not.
@Suite("Calibration: the response model")
struct CalibrationResponseModelTests {
    static func sweep(_ drives: [Double], noise: Double, seed: UInt64 = 5, _ output: (Double) -> Double) -> [ResponsePoint] {
        var random = SeededRandom(seed: seed)
        return drives.map { drive in
            let value = output(drive)
            // The sensor adds its noise in power, and each reading scatters a little.
            let measured = (value * value + noise * noise).squareRoot() * (1 + 0.01 * random.gaussian())
            return ResponsePoint(input: drive, output: drive == 0 ? noise : measured)
        }
    }

    static let drives = [0] + stride(from: 0.02, through: 0.3, by: 0.02).map { $0 } + stride(from: 0.35, through: 1.0001, by: 0.05).map { min($0, 1) }

    @Test("an output that does not start at zero (a backend lifting every drive over its dead zone) fits with the curve starting below drive 0")
    func offset() throws {
        // Speed ∝ level − 0.16 with level = 0.25 + 0.75 a: output ∝ (a + 0.12)².
        let points = Self.sweep(Self.drives, noise: 0.015) { $0 > 0 ? 1.5 * pow(($0 + 0.12) / 1.12, 2) : 0 }
        // The backend's offset 0.25 allows a curve down to −0.25/0.75.
        let fit = try #require(ResponseFitting.fitResponse(fromRest: points, noiseFloor: 0.015, lowestStart: -0.25 / 0.75))
        #expect(fit.deadZone < -0.08 && fit.deadZone > -0.16, "origin \(fit.deadZone), truth −0.12")
        #expect(abs(fit.exponent - 2) < 0.15, "exponent \(fit.exponent)")
        #expect(fit.startDrive == nil && fit.saturation == nil)
        #expect(fit.rSquared > 0.999)
        // Without an offset nothing can move at drive 0: the same data may not start the curve below it.
        let unlifted = try #require(ResponseFitting.fitResponse(fromRest: points, noiseFloor: 0.015))
        #expect(unlifted.deadZone >= 0, "origin \(unlifted.deadZone) without a backend offset")
        #expect(unlifted.rSquared < fit.rSquared)
    }

    @Test("a start threshold with hysteresis: from rest nothing below 0.2, running it goes on down to 0.1")
    func hysteresis() throws {
        let curve: (Double) -> Double = { 2 * pow($0, 1.5) }
        let fromRest = Self.sweep(Self.drives, noise: 0.015) { $0 >= 0.2 ? curve($0) : 0 }
        let running = Self.sweep(Self.drives.filter { $0 > 0 && $0 < 0.2 }, noise: 0.015, seed: 9) { $0 >= 0.1 ? curve($0) : 0 }
        let fit = try #require(ResponseFitting.fitResponse(fromRest: fromRest, running: running, noiseFloor: 0.015))
        #expect(fit.startDrive == 0.2, "start \(String(describing: fit.startDrive))")
        #expect(fit.stopDrive.map { $0 >= 0.1 && $0 <= 0.12 } == true, "stop \(String(describing: fit.stopDrive))")
        #expect(abs(fit.deadZone) < 0.03 && abs(fit.exponent - 1.5) < 0.15, "origin \(fit.deadZone), exponent \(fit.exponent)")
    }

    @Test("with no running sweep, the curve may not pass over drives that read nothing: an LRA read silent at 0.1 starts at 0.1, however its moving points bend")
    func silentDrivesBoundTheCurve() throws {
        // The guest's evdev LRA (truth: linear from 0.1 to 2 g) as one failed run measured it: exactly
        // nothing at 0.05 and 0.1 (the emulated sensor has no noise), the moving points bent upwards by
        // the emulator's timing. The curve free to rise over the silent drives started at 0.024.
        let readings: [(Double, Double)] = [
            (0, 0), (0.05, 0), (0.1, 0), (0.15, 0.1174), (0.2, 0.2155), (0.3, 0.3616), (0.45, 0.7105), (0.6, 1.1019), (0.8, 1.61), (1, 2.4503),
        ]
        let points = readings.map { ResponsePoint(input: $0.0, output: $0.1) }
        let fit = try #require(ResponseFitting.fitResponse(fromRest: points, noiseFloor: 0))
        #expect(fit.deadZone >= 0.095 && fit.deadZone < 0.15, "dead zone \(fit.deadZone), truth 0.1")
        #expect(fit.output(atDrive: 0.1) < 0.01, "the curve gives \(fit.output(atDrive: 0.1)) g where nothing was read")
        // Nothing shows a start from rest above where the curve starts: no kick to a start drive.
        #expect(fit.startDrive == nil && fit.stopDrive == nil, "start \(String(describing: fit.startDrive)), stop \(String(describing: fit.stopDrive))")
        // A running sweep that saw output under the start lets the curve start lower (the hysteresis test).
        let running = [ResponsePoint(input: 0.1, output: 0.05), ResponsePoint(input: 0.05, output: 0.01)]
        let hysteresis = try #require(ResponseFitting.fitResponse(fromRest: points, running: running, noiseFloor: 0))
        #expect(hysteresis.deadZone < 0.05, "dead zone \(hysteresis.deadZone) with output read down to 0.05 while running")
    }

    @Test("saturation is fitted where the output levels off, and not where it does not")
    func saturation() throws {
        let bent = Self.sweep(Self.drives, noise: 0.01) { drive in
            let raw = 3 * drive
            return raw / (1 + (raw / 1.6) * (raw / 1.6)).squareRoot()
        }
        let fit = try #require(ResponseFitting.fitResponse(fromRest: bent, noiseFloor: 0.01))
        let saturation = try #require(fit.saturation, "the curve levels off at 1.6 g")
        #expect(abs(saturation / 1.6 - 1) < 0.1 && abs(fit.exponent - 1) < 0.1, "S \(saturation), exponent \(fit.exponent)")
        let straight = Self.sweep(Self.drives, noise: 0.01) { 1.7 * $0 }
        #expect(try #require(ResponseFitting.fitResponse(fromRest: straight, noiseFloor: 0.01)).saturation == nil)
    }

    @Test("residuals are reported at each point the curve was fitted to")
    func residuals() throws {
        var points = Self.sweep(Self.drives, noise: 0.01) { 2 * $0 }
        points[20].output *= 1.2
        let fit = try #require(ResponseFitting.fitResponse(fromRest: points, noiseFloor: 0.01))
        let largest = try #require(fit.residuals.max { abs($0.output) < abs($1.output) })
        #expect(largest.input == points[20].input && largest.output > 0.1, "\(largest)")
        #expect(fit.relativeResidualRMS > 0.03)
    }
}
