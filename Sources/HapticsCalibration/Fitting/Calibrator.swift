import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// What the fit made of one channel's measurements.
public struct ChannelFit: Sendable, Hashable {
    /// The channel's index in the device.
    public var channel: Int
    /// Dead zone, curve and full scale.
    public var amplitude: AmplitudeFit
    /// Resonance, when the channel's frequency can be chosen and the sweep shows a peak.
    public var resonance: ResonanceFit?
    /// Output relative to the best frequency, by frequency (Hz).
    public var frequencyMap: [ResponsePoint]
    /// Where the channel gives at full drive the reference output or half its peak, whichever is lower, Hz.
    public var reachBand: ClosedRange<Double>?
    /// Tap peak over the asked-for output, by frequency (Hz), measured across the reach band.
    public var tapConsistency: [ResponsePoint]
    /// The band sharpness spans: the reach band narrowed to where taps stay consistent, Hz.
    public var usableBand: ClosedRange<Double>?

    /// A fit of `channel`.
    public init(
        channel: Int, amplitude: AmplitudeFit, resonance: ResonanceFit? = nil, frequencyMap: [ResponsePoint] = [], reachBand: ClosedRange<Double>? = nil,
        tapConsistency: [ResponsePoint] = [], usableBand: ClosedRange<Double>? = nil
    ) {
        self.channel = channel
        self.amplitude = amplitude
        self.resonance = resonance
        self.frequencyMap = frequencyMap
        self.reachBand = reachBand
        self.tapConsistency = tapConsistency
        self.usableBand = usableBand
    }
}

/// The tap shape chosen, and how close its taps come to the outputs they ask for.
public struct TransientFit: Sendable, Hashable {
    /// The shape written to the profile.
    public var shape: CalibrationProfile.TransientShape
    /// The largest relative error of a tap's peak over the tap grid, with the shape's level (0.05 =
    /// 5 %; the mean of the winner's two measurements).
    public var maxError: Double
    /// How many shapes were tried.
    public var candidatesTried: Int
}

/// A calibration: the profile and everything it was fitted from.
public struct CalibrationResult: Sendable {
    /// The fitted profile, ready to write.
    public var profile: CalibrationProfile
    /// The raw measurements, per measured channel.
    public var measurements: [ChannelMeasurement]
    /// The fits, per measured channel.
    public var fits: [ChannelFit]
    /// The tap shape search, when the source can measure taps.
    public var transient: TransientFit?
    /// Things the user should know (a channel too weak for the reference output, a narrow band).
    public var notes: [String]
    /// The verification of the profile, for sources that can measure outputs.
    public var verification: VerificationReport?
    /// Why the profile should not be written (a poor fit, a large verification error), or nil.
    public var diagnosis: CalibrationDiagnosis?

    /// Whether the profile passed the quality gates (``CalibrationDiagnosis``).
    public var isAccepted: Bool { diagnosis == nil }
}

/// Turns measurements into a profile: amplitude response (dead zone, curve, full scale), resonance
/// and frequency map, usable band, sharpness mapping and tap shape.
///
/// **Usable band.** Sharpness 0…1 spans the band logarithmically. The band is the contiguous range
/// around the best frequency where (1) the channel gives at full drive the reference output
/// (Android's `getFrequencyRange(minOutputAccelerationGs)`) or half its own peak, whichever is
/// lower (so a channel under 2 g still gets its −6 dB band, where intensities near 1 saturate),
/// and (2) a tap's peak stays within ``bandTolerance`` of its value at the best frequency. (2) matters on resonant actuators: a short tap is broadband, so the frequency
/// map's boost off resonance over-drives taps there; a high-Q LRA therefore gets a narrow band.
///
/// **Taps.** A tap of intensity `i` should peak (``AccelerationTrace/envelopePeak(window:)``) at
/// ``tapTarget`` × `i` reference units on every device. Tap shapes are tried through the engine:
/// every duration without a kick first (on resonant actuators driven in pushes whose resonance was
/// measured, those of 8–21.5 ms that end between two pushes of the drive, ``pushPeriod(_:device:)``; else 8–20 ms
/// in 1 ms steps, since a click over 20 ms feels buzzy; 20–150 ms in 5 ms steps on motors), since
/// a tap without a kick scales exactly with its drive; kicks (overdrive gain and length) around the
/// two best durations only if none comes within ``bandTolerance``, because the renderer multiplies
/// the whole drive, dead zone included, so a kick makes weak taps relatively stronger. The smallest
/// worst-case error over a grid of intensities and sharpnesses wins; within half a percent, the
/// gentler and shorter shape. The winner is measured again, and its level
/// (``CalibrationProfile/TransientShape/level``) trims its peaks' mean onto the target.
/// Braking (reverse drive) is not tried: drive frames carry no polarity.
public struct Calibrator: Sendable {
    /// What to measure.
    public var plan: CalibrationPlan
    /// A tap of intensity `i` should peak at `tapTarget × i` reference units: 0.65, about what a
    /// typical LRA (175 Hz, Q 6) reaches in a 20 ms tap without overdrive. Slower actuators get
    /// longer or kicked taps to match it; no short tap reaches a tone's steady output.
    public static let tapTarget = 0.65
    /// How far the tap's level may trim its peaks (``CalibrationProfile/TransientShape/level``): a
    /// shape further off its target than this is the shape search's to fix.
    public static let levelTrim = 0.8...1.25
    /// How far (relative) a tap's peak may drift across the usable band.
    public static let bandTolerance = 0.05
    /// How far a sharpness's own trim of the taps may go (``CalibrationProfile/TransientShape/sharpnessTrim``):
    /// twice the band's tolerance, so noise cannot push it further.
    public static let sharpnessTrim = 0.9...1.1

    /// `count` sharpnesses spread evenly from 0 to 1, where ``CalibrationProfile/TransientShape/sharpnessTrim`` holds its values.
    static func evenlySpread(_ count: Int) -> [Double] {
        (0..<count).map { Double($0) / Double(max(count - 1, 1)) }
    }

    /// A calibrator following `plan`.
    public init(plan: CalibrationPlan = .standard) {
        self.plan = plan
    }

    /// Measures `source`'s device, fits its profile and, for sensor sources and when `verify` is
    /// set, verifies it; the result's ``CalibrationResult/diagnosis`` says if it fails the quality
    /// gates (``CalibrationDiagnosis``) and should not be written.
    public func calibrate(_ source: MeasurementSource, verify: Bool = true, progress: ProgressReporter = SilentProgress()) throws(CalibrationError)
        -> CalibrationResult
    {
        let device = source.device
        var measurements = try source.measureChannels(plan: plan, progress: progress)
        let envelope = (source as? any VibrationSensorSource)?.envelope
        var profile = CalibrationProfile.uncalibrated(for: device)
        profile.deviceID = device.id
        profile.deviceName = device.name
        profile.source = source.method
        profile.drive = .measured(on: device)
        // In amplitudes, as the engine sends them: the backend lifts and limits them itself.
        profile.limits = CalibrationProfile.DriveLimits(
            ratedLevel: max(envelope?.steadyAmplitudeLimit ?? 1, ProfileFormat.Range.ratedLevel.lowerBound),
            overdriveLevel: envelope?.kickAmplitudeLimit ?? 1)
        var fits: [ChannelFit] = []
        var notes: [String] = []
        for measurement in measurements {
            let fit = try fitChannel(measurement, device: device, unit: source.outputUnit)
            let description = device.channels[measurement.channel]
            let amplitude = fit.amplitude
            profile.channels[measurement.channel] = ChannelCalibration(
                name: description.name, deadZone: amplitude.deadZone, responseExponent: amplitude.exponent, fullScaleOutput: amplitude.fullScale,
                resonantFrequency: fit.resonance?.resonantFrequency, qFactor: fit.resonance?.qFactor,
                frequencyResponse: fit.frequencyMap.map { .init(frequency: $0.input, relativeOutput: $0.output) }, usableBand: fit.reachBand,
                saturationOutput: amplitude.saturation, startDrive: amplitude.startDrive,
                stopDrive: amplitude.stopDrive,
                riseTime: measurement.timing?.rise, fallTime: measurement.timing?.fall)
            let reach = profile.channels[measurement.channel].output(atDrive: measurement.largestSteadyDrive, frequency: 0)
            if reach < CalibrationProfile.referenceOutput {
                notes.append(
                    "\(description.name) reaches \(format(reach)) \(unitName(source.outputUnit)) at its largest steady drive: "
                        + "intensities above \(format(reach / CalibrationProfile.referenceOutput)) saturate")
            }
            if let start = amplitude.startDrive {
                let stop = amplitude.stopDrive ?? start
                notes.append(
                    "\(description.name) starts from rest only at drive \(format(start))"
                        + (stop < start ? "; once running it keeps going down to \(format(stop)) (hysteresis)" : ""))
            }
            fits.append(fit)
        }
        profile.sharpness = sharpnessMapping(profile: profile, measurements: measurements, device: device)

        // Band narrowing and the tap shape need outputs the source can measure directly.
        var transient: TransientFit?
        if source.outputUnit == .acceleration {
            if profile.sharpness == .frequency {
                for index in fits.indices where fits[index].reachBand != nil {
                    try narrowBand(&fits[index], profile: &profile, source: source, progress: progress)
                }
                dropNarrowBands(&profile)
                profile.sharpness = sharpnessMapping(profile: profile, measurements: measurements, device: device)
                // Where the resonance moves with amplitude, the band measured again at other outputs.
                if profile.sharpness == .frequency, let sensor = source as? any VibrationSensorSource {
                    for measurement in measurements where profile.channels[measurement.channel].usableBand != nil {
                        profile.channels[measurement.channel].frequencyResponseByOutput = try outputMaps(
                            channel: measurement.channel, profile: profile, measurement: measurement, sensor: sensor, progress: progress)
                    }
                }
            }
            // A channel left without a band plays at its own frequency: measure its curve there, not
            // where the sweep found the most output (a resonance that moves with amplitude makes
            // the two curves differ).
            if let sensor = source as? any VibrationSensorSource {
                for index in fits.indices {
                    let channel = fits[index].channel
                    guard device.channels[channel].frequencyRange != nil, profile.channels[channel].usableBand == nil,
                        let measurementIndex = measurements.firstIndex(where: { $0.channel == channel }), measurements[measurementIndex].amplitudeFrequency > 0
                    else { continue }
                    measurements[measurementIndex] = try sensor.remeasureAmplitude(measurements[measurementIndex], frequency: 0, plan: plan, progress: progress)
                    let refit = try fitChannel(measurements[measurementIndex], device: device, unit: source.outputUnit)
                    fits[index].amplitude = refit.amplitude
                    let amplitude = refit.amplitude
                    profile.channels[channel].deadZone = amplitude.deadZone
                    profile.channels[channel].responseExponent = amplitude.exponent
                    profile.channels[channel].fullScaleOutput = amplitude.fullScale
                    profile.channels[channel].saturationOutput = amplitude.saturation
                    profile.channels[channel].startDrive = amplitude.startDrive
                    profile.channels[channel].stopDrive = amplitude.stopDrive
                    // The map stays for reference, relative to where the device now plays.
                    profile.channels[channel].frequencyResponse = []
                }
            }
            let search = try fitTransient(profile: profile, source: source, envelope: envelope, progress: progress)
            profile.transient = search.shape
            transient = search
            if search.maxError > 0.15 {
                notes.append("taps come within \(Int((search.maxError * 100).rounded())) % of their target at best; this actuator is slow for short taps")
            }
        }
        dropNarrowBands(&profile)
        if profile.sharpness == .frequency, !profile.channels.contains(where: { $0.usableBand != nil }) {
            profile.sharpness = sharpnessMapping(profile: profile, measurements: measurements, device: device)
        }
        for fit in fits {
            // A reach band at least 10 % wide that taps narrowed to under 10 %, or away altogether.
            guard let reach = fit.reachBand, reach.upperBound >= reach.lowerBound * 1.1 else { continue }
            let narrowed = fit.usableBand.map { $0.upperBound < $0.lowerBound * 1.1 } ?? true
            guard narrowed, source.outputUnit == .acceleration else { continue }
            let span = fit.usableBand.map { "only \(format(Self.round($0.lowerBound, 1)))–\(format(Self.round($0.upperBound, 1))) Hz" } ?? "no band"
            notes.append(
                "\(device.channels[fit.channel].name): sharpness spans \(span): off resonance a tap would not match a tone "
                    + "(Q \(format(Self.round(fit.resonance?.qFactor ?? 0, 1))))")
        }
        let final = Self.rounded(profile)
        var verification: VerificationReport?
        if verify, source.outputUnit == .acceleration {
            verification = try Verifier.verify(final, source: source, plan: plan, progress: progress)
        }
        // The gates apply to what a sensor measured; a person's few answers make no R² worth gating on.
        let diagnosis =
            source.outputUnit == .acceleration
            ? CalibrationDiagnosis.check(fits: fits, measurements: measurements, verification: verification, device: device.id) : nil
        return CalibrationResult(
            profile: final, measurements: measurements, fits: fits, transient: transient, notes: notes, verification: verification, diagnosis: diagnosis)
    }

    /// A band under 2 % wide plays as one frequency: the channel's own (sharpness is not rendered there).
    func dropNarrowBands(_ profile: inout CalibrationProfile) {
        for index in profile.channels.indices {
            if let band = profile.channels[index].usableBand, band.upperBound < band.lowerBound * 1.02 { profile.channels[index].usableBand = nil }
        }
    }

    func unitName(_ unit: OutputUnit) -> String { unit == .acceleration ? "g" : "(relative)" }

    /// Fits one channel: amplitude, resonance, frequency map, reach band.
    func fitChannel(_ measurement: ChannelMeasurement, device: DeviceDescription, unit: OutputUnit) throws(CalibrationError) -> ChannelFit {
        let name = device.channels[measurement.channel].name
        // A person's threshold fixes the dead zone; a sensor's sweep says where the curve starts, and
        // whether the actuator needs more to start than to keep going.
        let fitted =
            measurement.threshold != nil
            ? ResponseFitting.fitAmplitude(measurement.amplitude, noiseFloor: measurement.noiseFloor, deadZone: measurement.threshold)
            : ResponseFitting.fitResponse(
                fromRest: measurement.amplitude, running: measurement.runningAmplitude, noiseFloor: measurement.noiseFloor,
                lowestStart: measurement.amplitudeOffset < 1 ? -measurement.amplitudeOffset / (1 - measurement.amplitudeOffset) : 0)
        guard let amplitude = fitted else {
            let peak = measurement.amplitude.map(\.output).max() ?? 0
            throw .measurement(
                "no output above the noise on \(name) (largest \(format(peak)), noise \(format(measurement.noiseFloor))); "
                    + "is the sensor on the device and the device playing?")
        }
        var fit = ChannelFit(
            channel: measurement.channel, amplitude: amplitude, resonance: nil, frequencyMap: [], reachBand: nil, tapConsistency: [], usableBand: nil)
        guard !measurement.frequencySweep.isEmpty else { return fit }
        fit.resonance = ResponseFitting.fitResonance(measurement.frequencySweep, noiseFloor: measurement.noiseFloor)
        fit.frequencyMap = ResponseFitting.frequencyMap(measurement.frequencySweep, noiseFloor: measurement.noiseFloor).map {
            ResponsePoint(input: Self.round($0.input, 1), output: Self.round($0.output, 4))
        }
        // Dedupe frequencies that rounding made equal (the map must increase strictly).
        var seen = Set<Double>()
        fit.frequencyMap = fit.frequencyMap.filter { seen.insert($0.input).inserted }
        // Full scale is the output at the best frequency; the amplitude sweep may have been made
        // elsewhere (a person's reference at the nominal resonance).
        let calibration = ChannelCalibration(
            name: name, frequencyResponse: fit.frequencyMap.map { .init(frequency: $0.input, relativeOutput: $0.output) })
        let relative = calibration.relativeOutput(at: measurement.amplitudeFrequency)
        if measurement.amplitudeFrequency > 0, relative > 0.05 {
            fit.amplitude.fullScale /= relative
            fit.amplitude.saturation = fit.amplitude.saturation.map { $0 / relative }
        }
        let fullScale = fit.amplitude.fullScale
        let target = min(CalibrationProfile.referenceOutput, 0.5 * fullScale)
        fit.reachBand = ResponseFitting.band(
            around: fit.frequencyMap, where: { fullScale * $0.output >= target - 1e-12 }, score: { fullScale * $0.output - target })
        fit.usableBand = fit.reachBand
        return fit
    }

    /// How sharpness reaches this device: a frequency band if any channel has one at least 2 %
    /// wide, else the mix of the lowest- and highest-frequency motors if there are two, else nothing.
    func sharpnessMapping(profile: CalibrationProfile, measurements: [ChannelMeasurement], device: DeviceDescription)
        -> CalibrationProfile.SharpnessMapping
    {
        if profile.channels.contains(where: { $0.usableBand.map { $0.upperBound >= $0.lowerBound * 1.02 } ?? false }) { return .frequency }
        let motors = CalibrationPlan.measuredChannels(of: device)
        guard motors.count >= 2 else { return .none }
        func frequency(_ index: Int) -> Double {
            measurements.first { $0.channel == index }?.dominantFrequency ?? device.channels[index].nominalFrequency ?? Double(index)
        }
        let ordered = motors.sorted { frequency($0) < frequency($1) }
        return .motorMix(low: ordered.first!, high: ordered.last!)
    }

    /// Narrows a channel's band to where a tap's peak, over the output it asks for, stays within
    /// ``bandTolerance`` of its value at the best frequency; a band under 2 % wide is dropped.
    func narrowBand(_ fit: inout ChannelFit, profile: inout CalibrationProfile, source: MeasurementSource, progress: ProgressReporter)
        throws(CalibrationError)
    {
        guard let reach = fit.reachBand else { return }
        var probe = profile
        for index in probe.channels.indices where index != fit.channel { probe.channels[index].usableBand = nil }
        probe.channels[fit.channel].usableBand = reach
        probe.sharpness = .frequency
        var frequencies = fit.frequencyMap.map(\.input).filter { reach.contains($0) }
        frequencies = Array(Set(frequencies + [reach.lowerBound, reach.upperBound])).sorted()
        guard frequencies.count >= 2, reach.upperBound > reach.lowerBound else {
            fit.usableBand = nil
            profile.channels[fit.channel].usableBand = nil
            return
        }
        let intensity = 0.5
        let best = fit.frequencyMap.max { $0.output < $1.output }?.input ?? reach.lowerBound
        if best > 0, Self.pushPeriod(profile, device: source.device) != nil {
            // Whole pushes at the best frequency (the count nearest the probe's own duration): the
            // band then ends where a tap of that length gets another push, or loses one.
            let period = 1 / best
            let count = max(Int((probe.transient.duration / period + 0.25).rounded()), 1)
            probe.transient.duration = Self.betweenPushes(count, period: period)
            probe.transient.overdriveDuration = min(probe.transient.overdriveDuration, probe.transient.duration)
        }
        let stimuli = frequencies.map { frequency in
            Stimulus.tap(
                intensity: intensity, sharpness: log(frequency / reach.lowerBound) / log(reach.upperBound / reach.lowerBound),
                captureLength: probe.transient.duration + plan.tapCapture)
        }
        guard let peaks = try source.measure(stimuli, profile: probe, progress: progress) else { return }
        let ratios = zip(frequencies, peaks).map { ResponsePoint(input: $0, output: $1 / (Self.tapTarget * intensity * CalibrationProfile.referenceOutput)) }
        fit.tapConsistency = ratios
        let centre = ratios.indices.min { abs(ratios[$0].input - best) < abs(ratios[$1].input - best) }!
        let reference = ratios[centre].output
        guard reference > 0 else { return }
        let band = ResponseFitting.band(
            around: ratios, centre: centre, where: { abs($0.output / reference - 1) <= Self.bandTolerance },
            score: { Self.bandTolerance - abs($0.output / reference - 1) })
        if let band, band.upperBound >= band.lowerBound * 1.02 {
            fit.usableBand = Self.round(band.lowerBound, 1)...Self.round(band.upperBound, 1)
        } else {
            fit.usableBand = nil
        }
        profile.channels[fit.channel].usableBand = fit.usableBand
    }

    /// Durations to try, seconds: on resonant actuators driven in pushes whose resonance was measured, every duration
    /// between 8 and 21.5 ms that ends a quarter of a drive period before a period's start (see
    /// ``pushPeriod(_:device:)``); on other resonant actuators 8–20 ms in 1 ms steps; on motors from
    /// 20 ms to 150 ms, or to the measured spin-up time when that is longer (up to 300 ms), in 26
    /// steps; never under two of the device's update intervals.
    func candidateDurations(profile: CalibrationProfile, device: DeviceDescription) -> [Double] {
        let list: [Double]
        if let period = Self.pushPeriod(profile, device: device) {
            // Lifted to the floor below, a duration would no longer end between pushes: left out.
            let floor = 2 * device.minimumUpdateInterval
            let ends = Self.pushEnds(period: period).filter { $0 >= floor }
            let inRange = ends.filter { $0 >= 0.008 && $0 <= 0.0215 }
            list = inRange.isEmpty ? [ends.min { abs($0 - 0.014) < abs($1 - 0.014) }!] : inRange
        } else if Self.isResonant(profile, device: device) {
            list = stride(from: 8, through: 20, by: 1).map { Double($0) / 1000 }
        } else {
            let rise = profile.channels.compactMap(\.riseTime).max() ?? 0
            let longest = min(max(0.150, rise), 0.300)
            list = stride(from: 0.020, through: longest + 1e-9, by: (longest - 0.020) / 26).map { ($0 * 1000).rounded() / 1000 }
        }
        let floor = 2 * device.minimumUpdateInterval
        return Array(Set(list.map { max($0, floor) })).sorted()
    }

    /// The drive period of a resonant actuator whose resonance was measured, seconds: at the
    /// lowest frequency its channels are driven at (the bottom of the usable band, else the
    /// resonance); nil for motors and unmeasured resonances.
    ///
    /// An LRA is driven in whole periods: an H-bridge pushes once per PWM period, and its PWM starts
    /// a period when a drive starts. A tap that ends, or a kick that hands over to the held level,
    /// during a push cuts that push short by however late the write lands, so the tap's strength
    /// would scatter with the write path's timing. Ending a quarter period before the next push
    /// leaves the last push whole (a push lasts at most half a period) and a quarter of a period
    /// (1.4 ms at 175 Hz) to spare on either side; the band's higher frequencies move the pushes
    /// less than that within a tap. A device that takes samples (a voice coil on a sound card) has
    /// no pushes: its sine is rendered to the sample, whenever the tap ends, so it has none (nil).
    static func pushPeriod(_ profile: CalibrationProfile, device: DeviceDescription) -> Double? {
        guard device.sampleStream == nil, isResonant(profile, device: device) else { return nil }
        let lowest = profile.channels.compactMap { channel -> Double? in
            guard let resonance = channel.resonantFrequency, resonance > 0 else { return nil }
            return profile.sharpness == .frequency ? min(channel.usableBand?.lowerBound ?? resonance, resonance) : resonance
        }.min()
        return lowest.map { 1 / $0 }
    }

    /// Whether the actuator is driven in periods: an LRA or voice coil, or a profile that renders
    /// sharpness as frequency.
    static func isResonant(_ profile: CalibrationProfile, device: DeviceDescription) -> Bool {
        profile.sharpness == .frequency || [.lra, .voiceCoil].contains(device.actuator)
    }

    /// A quarter of `period` before the start of push `count` + 1: after `count` whole pushes, seconds.
    static func betweenPushes(_ count: Int, period: Double) -> Double {
        (Double(count) - 0.25) * period
    }

    /// Every end between pushes after 1 … 16 whole pushes (``betweenPushes(_:period:)``), seconds.
    static func pushEnds(period: Double) -> [Double] {
        (1...16).map { betweenPushes($0, period: period) }
    }

    /// Tries tap shapes through the engine and keeps the one whose peaks come closest to their
    /// targets: every duration without a kick first (a tap without a kick scales exactly with its
    /// drive, so it keeps intensity linear), then, only if none comes within ``bandTolerance``,
    /// kicks around the two best durations.
    func fitTransient(profile: CalibrationProfile, source: MeasurementSource, envelope: DriveEnvelope?, progress: ProgressReporter) throws(CalibrationError)
        -> TransientFit
    {
        let device = source.device
        let sharpnesses: [Double] = profile.sharpness == .none ? [0.5] : plan.tapSharpnesses
        let grid = plan.tapIntensities.flatMap { intensity in sharpnesses.map { (intensity, $0) } }
        let all = candidateDurations(profile: profile, device: device)
        // About seven durations across the range first (or every n-th with the plan's stride, if
        // sparser), then the one where the peaks cross their targets, found by interpolation.
        // Between pushes there are only two or three durations: each is tried.
        let pushPeriod = Self.pushPeriod(profile, device: device)
        let stride = pushPeriod != nil ? 1 : max(plan.tapDurationStride, Int((Double(all.count) / 7).rounded(.up)))
        let durations = all.enumerated().filter { $0.offset % stride == 0 || $0.offset == all.count - 1 }.map(\.element)
        let interval = max(device.minimumUpdateInterval, 0.001)
        var tried = 0
        var total = durations.count + 1

        /// The worst relative error over the grid, the mean ratio of peak to target, and each ratio
        /// (with the intensity exponent fitted to them), and the ratios as measured (`raw`: played
        /// with the shape's exponent, 1 for every shape tried).
        func trial(_ shape: CalibrationProfile.TransientShape) throws(CalibrationError) -> (
            shape: CalibrationProfile.TransientShape, error: Double, ratio: Double, ratios: [Double], raw: [Double]
        ) {
            var trial = profile
            trial.transient = shape
            let stimuli = grid.map { Stimulus.tap(intensity: $0.0, sharpness: $0.1, captureLength: shape.duration + plan.tapCapture) }
            tried += 1
            progress.report(phase: "tap shape", done: min(tried, total), total: total)
            guard let peaks = try source.measure(stimuli, profile: trial, progress: SilentProgress()) else { return (shape, .infinity, .nan, [], []) }
            let ratios = zip(grid, peaks).map { $1 / (Self.tapTarget * $0.0 * CalibrationProfile.referenceOutput) }
            let (exponent, adjusted) = Self.intensityExponent(intensities: grid.map(\.0), ratios: ratios, threshold: 0.03)
            var fitted = shape
            fitted.intensityExponent = exponent
            return (fitted, adjusted.map { abs($0 - 1) }.max() ?? .infinity, adjusted.reduce(0, +) / Double(max(adjusted.count, 1)), adjusted, ratios)
        }

        /// Where `ratio` crosses 1 between two neighbouring `values` of a family of shapes, by linear interpolation.
        func crossing(_ family: [(value: Double, ratio: Double)]) -> Double? {
            let sorted = family.filter { $0.ratio.isFinite }.sorted { $0.value < $1.value }
            for (a, b) in zip(sorted, sorted.dropFirst()) where (a.ratio - 1) * (b.ratio - 1) <= 0 && a.ratio != b.ratio {
                return a.value + (b.value - a.value) * (1 - a.ratio) / (b.ratio - a.ratio)
            }
            return nil
        }

        /// The kick lengths tried with a tap of `duration` seconds: fractions of it, or, on a resonant
        /// actuator, every hand-over between pushes; within the backend's kick window.
        func kickDurations(for duration: Double) -> [Double] {
            // A kick longer than the backend's kick window would be cut to the rated level.
            let longestKick = envelope.map { min(duration, $0.kickDuration) } ?? duration
            guard let pushPeriod else {
                return Set(plan.kickFractions.map { min(max((duration * $0 / interval).rounded() * interval, interval), longestKick) }).sorted()
            }
            // A hair over the window is rounding: the backend ends the kick at its window. The engine
            // changes a device's drive at most once per update interval.
            let ends = Self.pushEnds(period: pushPeriod).filter {
                $0 < duration && $0 <= longestKick * 1.01 && $0 >= device.minimumUpdateInterval
            }
            return ends.isEmpty ? [min(longestKick, duration / 2)] : ends.map { min($0, longestKick) }
        }

        var results: [(shape: CalibrationProfile.TransientShape, error: Double, ratio: Double, ratios: [Double], raw: [Double])] = []
        for duration in durations { results.append(try trial(CalibrationProfile.TransientShape(duration: duration))) }
        if pushPeriod == nil, let target = crossing(results.map { ($0.shape.duration, $0.ratio) }) {
            let duration = max((target / interval).rounded() * interval, all.first ?? interval)
            if !results.contains(where: { $0.shape.duration == duration }) { results.append(try trial(CalibrationProfile.TransientShape(duration: duration))) }
        }
        if (results.map(\.error).min() ?? .infinity) > Self.bandTolerance {
            let bestDurations = results.sorted { $0.error < $1.error }.prefix(2).map(\.shape.duration)
            total += bestDurations.map { kickDurations(for: $0).count }.reduce(0, +) * (plan.kickGains.count + 1)
            for duration in bestDurations {
                for kick in kickDurations(for: duration) {
                    var family: [(value: Double, ratio: Double)] = []
                    for gain in plan.kickGains {
                        let result = try trial(CalibrationProfile.TransientShape(duration: duration, overdriveGain: gain, overdriveDuration: kick))
                        results.append(result)
                        family.append((gain, result.ratio))
                    }
                    // The gain where this kick's peaks cross their targets.
                    if let gain = crossing(family).map({ ($0 * 100).rounded() / 100 }), gain > 1, !plan.kickGains.contains(gain) {
                        results.append(try trial(CalibrationProfile.TransientShape(duration: duration, overdriveGain: gain, overdriveDuration: kick)))
                    }
                }
            }
        }
        // The smallest error wins; within half a percent, the gentler and shorter shape.
        let smallest = results.map(\.error).min() ?? .infinity
        var chosen = results.filter { $0.error <= smallest + 0.005 }.min { a, b in
            (a.shape.overdriveGain, a.shape.duration, a.shape.overdriveDuration) < (b.shape.overdriveGain, b.shape.duration, b.shape.overdriveDuration)
        }!
        // The winner of many noisy trials looks better than it is: measure it again, and fit the
        // shape's intensity exponent to both measurements together (twice the points: an exponent
        // 1 % from 1 is applied, where one trial's must be 3 % off to be told from noise). Their
        // peaks' mean sets the tap's level, the trim the shape's steps (whole milliseconds, whole
        // pushes, a few kick gains) cannot make.
        var base = chosen.shape
        base.intensityExponent = 1
        let again = try trial(base)
        let twice = grid + grid  // the grid, once per measurement
        let pooled = Self.intensityExponent(intensities: twice.map(\.0), ratios: chosen.raw + again.raw, threshold: 0.01)
        chosen.shape.intensityExponent = pooled.exponent
        let mean = pooled.adjusted.reduce(0, +) / Double(max(pooled.adjusted.count, 1))
        if mean.isFinite, mean > 0 {
            let level = Self.round(min(max(1 / mean, Self.levelTrim.lowerBound), Self.levelTrim.upperBound), 3)
            chosen.shape.level = level
            // Where sharpness moves the drive frequency, each sharpness's taps get their own trim:
            // the mean of its column (five intensities, both measurements) against the mean of all.
            var trims = sharpnesses.map { _ in 1.0 }
            if profile.sharpness == .frequency, sharpnesses.count >= 2, sharpnesses == Self.evenlySpread(sharpnesses.count) {
                trims = sharpnesses.map { sharpness in
                    let column = zip(twice, pooled.adjusted).filter { $0.0.1 == sharpness }.map(\.1)
                    let columnMean = column.reduce(0, +) / Double(max(column.count, 1))
                    guard columnMean.isFinite, columnMean > 0 else { return 1 }
                    return Self.round(min(max(mean / columnMean, Self.sharpnessTrim.lowerBound), Self.sharpnessTrim.upperBound), 3)
                }
                if trims.contains(where: { $0 != 1 }) { chosen.shape.sharpnessTrim = trims }
            }
            // Each measurement's worst, averaged.
            func worst(_ ratios: ArraySlice<Double>) -> Double {
                zip(grid, ratios).map { abs($1 * level * trims[sharpnesses.firstIndex(of: $0.1)!] - 1) }.max() ?? .infinity
            }
            chosen.error = (worst(pooled.adjusted[..<grid.count]) + worst(pooled.adjusted[grid.count...])) / 2
        } else {
            chosen.error = (chosen.error + again.error) / 2
        }
        progress.report(phase: "tap shape", done: total, total: total)
        return TransientFit(shape: chosen.shape, maxError: chosen.error, candidatesTried: tried)
    }

    /// The exponent taps of `intensities` are played with (``CalibrationProfile/TransientShape/intensityExponent``,
    /// rounded to 3 digits) so their peaks grow in proportion, from their peak-to-target `ratios`
    /// played as they are; 1 when it is within `threshold` of 1. Taps growing as i^γ are played at
    /// i^(1/γ); `adjusted` is what that does to each ratio.
    static func intensityExponent(intensities: [Double], ratios: [Double], threshold: Double) -> (exponent: Double, adjusted: [Double]) {
        guard let growth = growth(intensities: intensities, ratios: ratios) else { return (1, ratios) }
        let range = ProfileFormat.Range.intensityExponent
        let exponent = round(min(max(1 / growth, range.lowerBound), range.upperBound), 3)
        guard abs(exponent - 1) >= threshold else { return (1, ratios) }
        return (exponent, zip(intensities, ratios).map { $1 * pow($0, growth * (exponent - 1)) })
    }

    /// γ in "a tap's peak grows as intensity^γ", from its peak-to-target ratios at `intensities`
    /// (a least-squares line through log ratio against log intensity has slope γ − 1); nil with
    /// fewer than two intensities.
    static func growth(intensities: [Double], ratios: [Double]) -> Double? {
        let points = zip(intensities, ratios).filter { $0 > 0 && $1 > 0 }.map { (x: log($0), y: log($1)) }
        guard Set(points.map(\.x)).count >= 2 else { return nil }
        return 1 + LinearFit(points).slope
    }

    /// The profile with its numbers rounded to what the measurements support (so the file and the
    /// profile in memory are the same).
    static func rounded(_ profile: CalibrationProfile) -> CalibrationProfile {
        var result = profile
        result.channels = profile.channels.map { channel in
            var channel = channel
            channel.deadZone = round(channel.deadZone, 4)
            channel.responseExponent = round(channel.responseExponent, 3)
            channel.fullScaleOutput = max(round(channel.fullScaleOutput, 4), 0.001)
            channel.resonantFrequency = channel.resonantFrequency.map { round($0, 2) }
            channel.qFactor = channel.qFactor.map { round($0, 2) }
            channel.usableBand = channel.usableBand.map { round($0.lowerBound, 1)...round($0.upperBound, 1) }
            if let band = channel.usableBand, band.upperBound <= band.lowerBound { channel.usableBand = nil }
            channel.saturationOutput = channel.saturationOutput.map { max(round($0, 4), 0.001) }
            channel.startDrive = channel.startDrive.map { round($0, 4) }
            channel.stopDrive = channel.stopDrive.map { round($0, 4) }
            channel.riseTime = channel.riseTime.map { round($0, 4) }
            channel.fallTime = channel.fallTime.map { round($0, 4) }
            return channel
        }
        // Rounded down: a rated level a hair above the backend's would be clipped by it.
        result.limits = CalibrationProfile.DriveLimits(
            ratedLevel: (profile.limits.ratedLevel * 10000).rounded(.down) / 10000, overdriveLevel: (profile.limits.overdriveLevel * 10000).rounded(.down) / 10000)
        result.transient = CalibrationProfile.TransientShape(
            duration: round(profile.transient.duration, 4), overdriveGain: round(profile.transient.overdriveGain, 3),
            overdriveDuration: round(profile.transient.overdriveDuration, 4), intensityExponent: round(profile.transient.intensityExponent, 3),
            level: round(profile.transient.level, 3), sharpnessTrim: profile.transient.sharpnessTrim.map { round($0, 3) })
        return result
    }

    static func round(_ value: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }
}
