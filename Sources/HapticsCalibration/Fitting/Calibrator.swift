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
}

/// The tap shape chosen, and how close its taps come to the outputs they ask for.
public struct TransientFit: Sendable, Hashable {
    /// The shape written to the profile.
    public var shape: CalibrationProfile.TransientShape
    /// The largest relative error of a tap's peak over the tap grid (0.05 = 5 %).
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
/// every duration without a kick first (8–20 ms in 1 ms steps on resonant actuators, since a click
/// over 20 ms feels buzzy; 20–150 ms in 5 ms steps on motors), since a tap without a kick scales
/// exactly with its drive; kicks (overdrive gain and length) around the two best durations only if
/// none comes within ``bandTolerance``, because the renderer multiplies the whole drive, dead zone
/// included, so a kick makes weak taps relatively stronger. The smallest worst-case error over a
/// grid of intensities and sharpnesses wins; within half a percent, the gentler and shorter shape.
/// Braking (reverse drive) is not tried: drive frames carry no polarity.
public struct Calibrator: Sendable {
    /// What to measure.
    public var plan: CalibrationPlan
    /// A tap of intensity `i` should peak at `tapTarget × i` reference units: 0.65, about what a
    /// typical LRA (175 Hz, Q 6) reaches in a 20 ms tap without overdrive. Slower actuators get
    /// longer or kicked taps to match it; no short tap reaches a tone's steady output.
    public static let tapTarget = 0.65
    /// How far (relative) a tap's peak may drift across the usable band.
    public static let bandTolerance = 0.05

    /// A calibrator following `plan`.
    public init(plan: CalibrationPlan = .standard) {
        self.plan = plan
    }

    /// Measures `source`'s device and fits its profile.
    public func calibrate(_ source: MeasurementSource, progress: ProgressReporter = SilentProgress()) throws(CalibrationError) -> CalibrationResult {
        let device = source.device
        let measurements = try source.measureChannels(plan: plan, progress: progress)
        var profile = CalibrationProfile.uncalibrated(for: device)
        profile.deviceID = device.id
        profile.deviceName = device.name
        profile.source = source.method
        profile.limits = CalibrationProfile.DriveLimits()
        var fits: [ChannelFit] = []
        var notes: [String] = []
        for measurement in measurements {
            let fit = try fitChannel(measurement, device: device, unit: source.outputUnit)
            let description = device.channels[measurement.channel]
            profile.channels[measurement.channel] = ChannelCalibration(
                name: description.name, deadZone: fit.amplitude.deadZone, responseExponent: fit.amplitude.exponent,
                fullScaleOutput: fit.amplitude.fullScale, resonantFrequency: fit.resonance?.resonantFrequency, qFactor: fit.resonance?.qFactor,
                frequencyResponse: fit.frequencyMap.map { .init(frequency: $0.input, relativeOutput: $0.output) }, usableBand: fit.reachBand)
            if fit.amplitude.fullScale < CalibrationProfile.referenceOutput {
                notes.append(
                    "\(description.name) peaks at \(format(fit.amplitude.fullScale)) \(unitName(source.outputUnit)) at full drive: "
                        + "intensities above \(format(fit.amplitude.fullScale / CalibrationProfile.referenceOutput)) saturate")
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
                profile.sharpness = sharpnessMapping(profile: profile, measurements: measurements, device: device)
            }
            let search = try fitTransient(profile: profile, source: source, progress: progress)
            profile.transient = search.shape
            transient = search
            if search.maxError > 0.15 {
                notes.append("taps come within \(Int((search.maxError * 100).rounded())) % of their target at best; this actuator is slow for short taps")
            }
        }
        // A band under 2 % wide plays as one frequency: the channel's own (sharpness is not rendered there).
        for index in profile.channels.indices {
            if let band = profile.channels[index].usableBand, band.upperBound < band.lowerBound * 1.02 { profile.channels[index].usableBand = nil }
        }
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
        return CalibrationResult(profile: Self.rounded(profile), measurements: measurements, fits: fits, transient: transient, notes: notes)
    }

    func unitName(_ unit: OutputUnit) -> String { unit == .acceleration ? "g" : "(relative)" }

    /// Fits one channel: amplitude, resonance, frequency map, reach band.
    func fitChannel(_ measurement: ChannelMeasurement, device: DeviceDescription, unit: OutputUnit) throws(CalibrationError) -> ChannelFit {
        let name = device.channels[measurement.channel].name
        guard let amplitude = ResponseFitting.fitAmplitude(measurement.amplitude, noiseFloor: measurement.noiseFloor, deadZone: measurement.threshold)
        else {
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
        if measurement.amplitudeFrequency > 0, relative > 0.05 { fit.amplitude.fullScale /= relative }
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
        let stimuli = frequencies.map { frequency in
            Stimulus.tap(
                intensity: intensity, sharpness: log(frequency / reach.lowerBound) / log(reach.upperBound / reach.lowerBound),
                captureLength: probe.transient.duration + plan.tapCapture)
        }
        guard let peaks = try source.measure(stimuli, profile: probe, progress: progress) else { return }
        let ratios = zip(frequencies, peaks).map { ResponsePoint(input: $0, output: $1 / (Self.tapTarget * intensity * CalibrationProfile.referenceOutput)) }
        fit.tapConsistency = ratios
        let best = fit.frequencyMap.max { $0.output < $1.output }?.input ?? reach.lowerBound
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

    /// Durations to try, seconds: 8–20 ms in 1 ms steps on resonant actuators, 20–150 ms in 5 ms
    /// steps on motors, never under two of the device's update intervals.
    func candidateDurations(profile: CalibrationProfile, device: DeviceDescription) -> [Double] {
        let resonant = profile.sharpness == .frequency || [.lra, .voiceCoil].contains(device.actuator)
        let list = resonant ? stride(from: 8, through: 20, by: 1).map { Double($0) / 1000 } : stride(from: 20, through: 150, by: 5).map { Double($0) / 1000 }
        let floor = 2 * device.minimumUpdateInterval
        return Array(Set(list.map { max($0, floor) })).sorted()
    }

    /// Tries tap shapes through the engine and keeps the one whose peaks come closest to their
    /// targets: every duration without a kick first (a tap without a kick scales exactly with its
    /// drive, so it keeps intensity linear), then, only if none comes within ``bandTolerance``,
    /// kicks around the two best durations.
    func fitTransient(profile: CalibrationProfile, source: MeasurementSource, progress: ProgressReporter) throws(CalibrationError) -> TransientFit {
        let device = source.device
        let sharpnesses: [Double] = profile.sharpness == .none ? [0.5] : plan.tapSharpnesses
        let grid = plan.tapIntensities.flatMap { intensity in sharpnesses.map { (intensity, $0) } }
        let all = candidateDurations(profile: profile, device: device)
        // With a stride, keep every n-th duration, always including the longest.
        let durations = all.enumerated().filter { $0.offset % plan.tapDurationStride == 0 || $0.offset == all.count - 1 }.map(\.element)
        let interval = max(device.minimumUpdateInterval, 0.001)
        var tried = 0
        var total = durations.count

        func error(of shape: CalibrationProfile.TransientShape) throws(CalibrationError) -> Double {
            var trial = profile
            trial.transient = shape
            let stimuli = grid.map { Stimulus.tap(intensity: $0.0, sharpness: $0.1, captureLength: shape.duration + plan.tapCapture) }
            tried += 1
            progress.report(phase: "tap shape", done: min(tried, total), total: total)
            guard let peaks = try source.measure(stimuli, profile: trial, progress: SilentProgress()) else { return .infinity }
            return zip(grid, peaks).map { abs($1 / (Self.tapTarget * $0.0 * CalibrationProfile.referenceOutput) - 1) }.max() ?? .infinity
        }

        var results: [(shape: CalibrationProfile.TransientShape, error: Double)] = []
        for duration in durations {
            let shape = CalibrationProfile.TransientShape(duration: duration)
            results.append((shape, try error(of: shape)))
        }
        if (results.map(\.error).min() ?? .infinity) > Self.bandTolerance {
            let bestDurations = results.sorted { $0.error < $1.error }.prefix(2).map(\.shape.duration)
            total += bestDurations.count * plan.kickGains.count * plan.kickFractions.count
            for duration in bestDurations {
                var kicks: Set<Double> = []
                for fraction in plan.kickFractions {
                    kicks.insert(min(max((duration * fraction / interval).rounded() * interval, interval), duration))
                }
                for gain in plan.kickGains {
                    for kick in kicks.sorted() {
                        let shape = CalibrationProfile.TransientShape(duration: duration, overdriveGain: gain, overdriveDuration: kick)
                        results.append((shape, try error(of: shape)))
                    }
                }
            }
        }
        progress.report(phase: "tap shape", done: total, total: total)
        // The smallest error wins; within half a percent, the gentler and shorter shape.
        let smallest = results.map(\.error).min() ?? .infinity
        let chosen = results.filter { $0.error <= smallest + 0.005 }.min { a, b in
            (a.shape.overdriveGain, a.shape.duration, a.shape.overdriveDuration) < (b.shape.overdriveGain, b.shape.duration, b.shape.overdriveDuration)
        }!
        return TransientFit(shape: chosen.shape, maxError: chosen.error, candidatesTried: tried)
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
            return channel
        }
        result.transient = CalibrationProfile.TransientShape(
            duration: round(profile.transient.duration, 4), overdriveGain: round(profile.transient.overdriveGain, 3),
            overdriveDuration: round(profile.transient.overdriveDuration, 4))
        return result
    }

    static func round(_ value: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }
}
