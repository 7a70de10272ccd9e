import Haptics

/// How well a profile makes a device do what intensity asks.
public struct VerificationReport: Sendable {
    /// One reference played: what it asked for and what was measured, in reference units.
    public struct Item: Sendable, Hashable {
        /// What was played: `tone 0.6 @ sharpness 0.5`, `tap 0.8 @ 1`, `impact.medium`.
        public var name: String
        /// The output asked for.
        public var requested: Double
        /// The output measured.
        public var measured: Double

        /// Whether it asked for less than the profile's declared floor
        /// (``CalibrationProfile/floorOutput``): reported, but not counted in the errors.
        public var belowFloor: Bool

        /// measured / requested − 1.
        public var relativeError: Double { requested > 0 ? measured / requested - 1 : 0 }

        /// An item.
        public init(name: String, requested: Double, measured: Double, belowFloor: Bool = false) {
            self.name = name
            self.requested = requested
            self.measured = measured
            self.belowFloor = belowFloor
        }
    }

    /// Sustained tones at intensities 0.1…1 (sharpness 0.5) and, where sharpness changes how the
    /// device plays, at the ends of its range (sharpness 0 and 1, intensities
    /// ``Verifier/edgeToneIntensities``): their steady amplitude.
    public var tones: [Item]
    /// Taps at intensities 0.2…1 and sharpness 0, 0.5, 1: their envelope peak.
    public var taps: [Item]
    /// The vocabulary's single-tap effects: their envelope peak against the tap target (the mean of
    /// ``Verifier/effectMeasurements`` measurements of each).
    public var effects: [Item]
    /// The line through (requested, measured) of the tones.
    public var toneLinearity: LinearFit
    /// The sensor's noise as a tone reads it: a tone at intensity 0, measured like the others
    /// (reference units). The tones' ``Item/measured`` have it taken out in power, as the fit's
    /// curve does (`√(measured² − noise²)`): a 0.1 g tone does not read higher for a noisy sensor.
    public var toneNoise: Double

    /// A report.
    public init(tones: [Item], taps: [Item], effects: [Item], toneNoise: Double = 0) {
        self.tones = tones
        self.taps = taps
        self.effects = effects
        self.toneNoise = toneNoise
        toneLinearity = LinearFit(tones.filter { !$0.belowFloor }.map { (x: $0.requested, y: $0.measured) })
    }

    /// Every item.
    public var all: [Item] { tones + taps + effects }
    /// The items the device claims to reach: those not under the profile's floor.
    public var judged: [Item] { all.filter { !$0.belowFloor } }
    /// The items under the profile's declared floor (``CalibrationProfile/floorOutput``).
    public var unreachable: [Item] { all.filter(\.belowFloor) }
    /// The mean of |relative error| over the judged items (0.03 = 3 %).
    public var meanError: Double { judged.map { abs($0.relativeError) }.reduce(0, +) / Double(max(judged.count, 1)) }
    /// The largest |relative error| of a judged item.
    public var maxError: Double { judged.map { abs($0.relativeError) }.max() ?? 0 }
}

/// Plays reference effects through a profile, measures them and reports the error.
public enum Verifier {
    /// The intensities of the tone ladder.
    public static let toneIntensities = stride(from: 0.1, through: 1.0001, by: 0.1).map { min($0, 1) }
    /// The intensities of the tones also played at sharpness 0 and 1 where sharpness changes how
    /// the device plays (a frequency band, a mix of motors): an LRA's resonance moves with
    /// amplitude, so the band's ends are where a map measured at one drive misses the most.
    public static let edgeToneIntensities = [0.2, 0.6, 1.0]
    /// How many times over each reference effect is measured (each played until precise) and averaged.
    public static let effectMeasurements = 3
    /// The intensities of the tap ladder.
    public static let tapIntensities = [0.2, 0.4, 0.6, 0.8, 1.0]

    /// The vocabulary effects played as references: those made of a single tap (impacts,
    /// selection, clicks, ticks) of at least ``minimumReferenceIntensity``, each shape once (the
    /// first name of it: SwiftUI's and Android's constants repeat UIKit's and Android's taps).
    /// Rhythms of taps closer than a slow motor's tap overlap on it by nature, and short buzzes
    /// and ramps cannot reach a steady level on a motor that takes 70 ms to start, so their peaks
    /// say more about the actuator's speed than the calibration; a tap at a fifth of full scale
    /// (Android's texture tick) sits on a coin motor's start threshold and measures its scatter.
    public static var referenceEffects: [FeedbackEffect] {
        var shapes: [HapticPattern] = []
        return FeedbackEffect.vocabulary.filter { effect in
            let events = effect.pattern.hapticEvents
            guard events.count == 1, events[0].type == .hapticTransient, events[0].value(of: .hapticIntensity) >= minimumReferenceIntensity,
                !shapes.contains(effect.pattern)
            else { return false }
            shapes.append(effect.pattern)
            return true
        }
    }

    /// The weakest tap played as a reference.
    public static let minimumReferenceIntensity = 0.25

    /// Verifies `profile` on `source`'s device.
    /// - Throws: ``CalibrationError/measurement(_:)`` when the source cannot measure outputs (a person).
    public static func verify(
        _ profile: CalibrationProfile, source: MeasurementSource, plan: CalibrationPlan = .standard, progress: ProgressReporter = SilentProgress()
    ) throws(CalibrationError) -> VerificationReport {
        guard source.outputUnit == .acceleration else {
            throw .measurement("verification needs a sensor: use --source simulated or --source accelerometer")
        }
        let reference = CalibrationProfile.referenceOutput
        let duration = toneDuration(profile, source: source, plan: plan)
        var names: [String] = [], requested: [Double] = [], stimuli: [Stimulus] = []
        for intensity in toneIntensities {
            names.append("tone \(format(intensity)) @ sharpness 0.5")
            requested.append(intensity * reference)
            stimuli.append(.tone(intensity: intensity, sharpness: 0.5, duration: duration, window: plan.steadyWindow))
        }
        if profile.sharpness != .none {
            for sharpness in [0.0, 1.0] {
                for intensity in edgeToneIntensities {
                    names.append("tone \(format(intensity)) @ sharpness \(format(sharpness))")
                    requested.append(intensity * reference)
                    stimuli.append(.tone(intensity: intensity, sharpness: sharpness, duration: duration, window: plan.steadyWindow))
                }
            }
        }
        let toneCount = stimuli.count
        let sharpnesses: [Double] = profile.sharpness == .none ? [0.5] : [0, 0.5, 1]
        for intensity in tapIntensities {
            for sharpness in sharpnesses {
                names.append("tap \(format(intensity)) @ sharpness \(format(sharpness))")
                requested.append(Calibrator.tapTarget * intensity * reference)
                stimuli.append(.tap(intensity: intensity, sharpness: sharpness, captureLength: profile.transient.duration + plan.tapCapture))
            }
        }
        let tapEnd = stimuli.count
        // The effects are what devices are compared by: each is measured three times over (three
        // stimuli, each played until precise) and the three averaged, so its standard error is
        // 1/√3 of the source's target. Measured twice, the weakest (android.lightTick, 0.19 g) still
        // spread 9.7 % across the benches in one run, against the 10 % they are held to.
        let effects = referenceEffects
        for effect in effects {
            names.append(effect.name)
            requested.append(expectedPeak(of: effect.pattern) * reference)
            stimuli.append(.effect(effect.pattern, transientDuration: profile.transient.duration, ringDown: plan.tapCapture))
        }
        let once = stimuli[tapEnd...]
        for _ in 1..<effectMeasurements { stimuli += once }
        // The noise as the tones read it, last: the fit's noise floor is the same, a tone at drive 0.
        stimuli.append(.tone(intensity: 0, sharpness: 0.5, duration: duration, window: plan.steadyWindow))
        guard let outputs = try source.measure(stimuli, profile: profile, progress: progress) else {
            throw .measurement("\(source.method.rawValue) source cannot measure outputs for verification")
        }
        let noise = outputs[outputs.count - 1]
        let measured = names.indices.map { index -> Double in
            if index < toneCount { return withoutNoise(outputs[index], noise: noise) }
            guard index >= tapEnd else { return outputs[index] }
            return (0..<effectMeasurements).map { outputs[index + $0 * effects.count] }.reduce(0, +) / Double(effectMeasurements)
        }
        // A tone under the floor the profile declares cannot be held as asked: reported, not judged.
        let floor = profile.floorOutput
        let items = names.indices.map {
            VerificationReport.Item(name: names[$0], requested: requested[$0], measured: measured[$0], belowFloor: $0 < toneCount && requested[$0] < floor * 0.999)
        }
        return VerificationReport(
            tones: Array(items[0..<toneCount]), taps: Array(items[toneCount..<tapEnd]), effects: Array(items[tapEnd...]), toneNoise: noise)
    }

    /// A steady amplitude with the sensor's `noise` (the same measure at rest) taken out in power:
    /// noise and vibration are uncorrelated, so their powers add. Never below 0.
    static func withoutNoise(_ amplitude: Double, noise: Double) -> Double {
        (max(amplitude * amplitude - noise * noise, 0)).squareRoot()
    }

    /// How long a tone must last to be measured steady: the plan's length, or three times the
    /// profile's slowest rise time (measured at the largest drive; smaller drives start slower) and
    /// a window, within the backend's continuous-drive limit.
    static func toneDuration(_ profile: CalibrationProfile, source: MeasurementSource, plan: CalibrationPlan) -> Double {
        let rise = profile.channels.compactMap(\.riseTime).max() ?? 0
        let limit = ((source as? any VibrationSensorSource)?.envelope?.maxContinuousDuration).map { $0 * 0.8 } ?? .infinity
        return min(max(plan.toneDuration, 3 * rise + plan.steadyWindow), limit)
    }

    /// The strongest output a pattern asks for, relative to the reference (0…1): for each haptic
    /// event, its intensity times the largest intensity control it meets, a tap counting as
    /// ``Calibrator/tapTarget``.
    public static func expectedPeak(of pattern: HapticPattern) -> Double {
        var peak = 0.0
        for event in pattern.hapticEvents {
            let start = event.relativeTime, end = event.type == .hapticTransient ? event.relativeTime : event.endTime
            var control = 1.0
            let curves = pattern.parameterCurves.filter { $0.id == .hapticIntensityControl }
            if !curves.isEmpty {
                let values = curves.flatMap { curve in
                    curve.controlPoints.filter { curve.relativeTime + $0.relativeTime <= end + 1e-9 && curve.relativeTime + $0.relativeTime >= start - 1e-9 }
                        .map(\.value)
                }
                control = values.max() ?? 1
            }
            let factor = event.type == .hapticTransient ? Calibrator.tapTarget : 1
            peak = max(peak, event.value(of: .hapticIntensity) * control * factor)
        }
        return min(peak, 1)
    }
}
