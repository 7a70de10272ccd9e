import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// A source that measures acceleration while the engine plays: the accelerometer and the
/// simulation. It only has to capture traces; sweeps and summaries are shared.
public protocol VibrationSensorSource: MeasurementSource {
    /// Plays each stimulus through the engine with `profile` (one after another, with silence
    /// between) and returns the acceleration of each, from its start, for its capture length.
    /// `phase` names the work for progress reports.
    func capture(_ stimuli: [Stimulus], profile: CalibrationProfile, phase: String, progress: ProgressReporter) throws(CalibrationError)
        -> [AccelerationTrace]
}

extension VibrationSensorSource {
    /// Sensors report g.
    public var outputUnit: OutputUnit { .acceleration }

    /// Captures every stimulus and summarises it as it asks.
    public func measure(_ stimuli: [Stimulus], profile: CalibrationProfile, progress: ProgressReporter) throws(CalibrationError) -> [Double]? {
        let traces = try capture(stimuli, profile: profile, phase: "measuring", progress: progress)
        return zip(stimuli, traces).map { $0.summarise($1) }
    }

    /// Frequency sweep (coarse, then fine around the peak) and amplitude sweep at the best
    /// frequency, channel by channel, through ``ChannelProbe`` profiles.
    public func measureChannels(plan: CalibrationPlan, progress: ProgressReporter) throws(CalibrationError) -> [ChannelMeasurement] {
        try SensorSweep(source: self, plan: plan, progress: progress).run()
    }
}

/// The sweeps every sensor source runs.
struct SensorSweep<Source: VibrationSensorSource> {
    let source: Source
    let plan: CalibrationPlan
    let progress: ProgressReporter

    func run() throws(CalibrationError) -> [ChannelMeasurement] {
        var result: [ChannelMeasurement] = []
        for channel in CalibrationPlan.measuredChannels(of: source.device) {
            result.append(try measure(channel: channel))
        }
        return result
    }

    func tone(drive: Double, frequency: Double, channel: ChannelDescription) -> Stimulus {
        Stimulus.tone(
            intensity: drive, sharpness: ChannelProbe.sharpness(for: frequency, channel: channel), duration: plan.toneDuration,
            window: plan.steadyWindow)
    }

    func measure(channel index: Int) throws(CalibrationError) -> ChannelMeasurement {
        let description = source.device.channels[index]
        let probe = ChannelProbe.profile(for: source.device, channel: index)
        var measurement = ChannelMeasurement(channel: index)
        if let range = description.frequencyRange, range.upperBound > range.lowerBound {
            measurement.sweepDrive = plan.sweepDrive
            let count = max(plan.coarseFrequencies, 3)
            let coarse = (0..<count).map { range.lowerBound * pow(range.upperBound / range.lowerBound, Double($0) / Double(count - 1)) }
            let coarseOutputs = try outputs(coarse.map { tone(drive: plan.sweepDrive, frequency: $0, channel: description) }, probe, "\(description.name): frequency sweep")
            var sweep = zip(coarse, coarseOutputs).map { ResponsePoint(input: $0, output: $1) }
            let peak = coarseOutputs.indices.max { coarseOutputs[$0] < coarseOutputs[$1] }!
            let low = coarse[max(peak - 2, 0)], high = coarse[min(peak + 2, count - 1)]
            let fineCount = max(plan.fineFrequencies, 2)
            let fine = (0..<fineCount).map { low + (high - low) * Double($0 + 1) / Double(fineCount + 1) }
            let fineOutputs = try outputs(fine.map { tone(drive: plan.sweepDrive, frequency: $0, channel: description) }, probe, "\(description.name): fine sweep")
            sweep += zip(fine, fineOutputs).map { ResponsePoint(input: $0, output: $1) }
            sweep.sort { $0.input < $1.input }
            measurement.frequencySweep = sweep
            measurement.amplitudeFrequency = sweep.max { $0.output < $1.output }!.input
        }
        let stimuli = plan.driveLevels.map { tone(drive: $0, frequency: measurement.amplitudeFrequency, channel: description) }
        let traces = try source.capture(stimuli, profile: probe, phase: "\(description.name): amplitude sweep", progress: progress)
        measurement.amplitude = zip(plan.driveLevels, zip(stimuli, traces)).map { ResponsePoint(input: $0, output: $1.0.summarise($1.1)) }
        measurement.noiseFloor = measurement.amplitude.first { $0.input == 0 }?.output ?? 0
        if let strongest = plan.driveLevels.indices.max(by: { plan.driveLevels[$0] < plan.driveLevels[$1] }),
            case .steady(let from, let to) = stimuli[strongest].measure
        {
            measurement.dominantFrequency = traces[strongest].dominantFrequency(from: from, to: to)
        }
        return measurement
    }

    private func outputs(_ stimuli: [Stimulus], _ profile: CalibrationProfile, _ phase: String) throws(CalibrationError) -> [Double] {
        let traces = try source.capture(stimuli, profile: profile, phase: phase, progress: progress)
        return zip(stimuli, traces).map { $0.summarise($1) }
    }
}
