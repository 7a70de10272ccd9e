import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// A source that measures acceleration while the engine plays: the accelerometer and the
/// simulation. It only has to capture traces; sweeps and summaries are shared.
public protocol VibrationSensorSource: MeasurementSource {
    /// Plays each stimulus through the engine with `profile` (one after another, each from a quiet
    /// actuator) and returns the acceleration of each, from its start, for its capture length.
    /// `phase` names the work for progress reports.
    func capture(_ stimuli: [Stimulus], profile: CalibrationProfile, phase: String, progress: ProgressReporter) throws(CalibrationError)
        -> [AccelerationTrace]
    /// What the backend does to a drive before the hardware (nil: amplitudes pass through).
    var envelope: DriveEnvelope? { get }
    /// The vibration amplitude the sensor reads with nothing driven, g.
    func noiseAmplitude() throws(CalibrationError) -> Double
    /// How many times a short event is played at first and its traces pooled, so a sensor that
    /// reads at hundreds of hertz, at random phases, measures it as well as a long tone.
    var repetitions: Int { get }
    /// How precisely a short event's peak is measured: one whose plays leave it uncertain by more
    /// than this fraction of it (one standard error) is played again and pooled, up to
    /// ``maximumPlays`` times (0: never played again).
    var targetStandardError: Double { get }
    /// The most times one short event is played for ``targetStandardError``.
    var maximumPlays: Int { get }
}

extension VibrationSensorSource {
    /// Sensors report g.
    public var outputUnit: OutputUnit { .acceleration }

    /// Sources that do not say play every short event ``repetitions`` times.
    public var targetStandardError: Double { 0 }
    /// Sources that do not say play a short event at most ``repetitions`` times.
    public var maximumPlays: Int { max(repetitions, 1) }

    /// Captures every stimulus (short events ``repetitions`` times and more while uncertain, see
    /// ``targetStandardError``, pooled) and summarises it as it asks.
    public func measure(_ stimuli: [Stimulus], profile: CalibrationProfile, progress: ProgressReporter) throws(CalibrationError) -> [Double]? {
        let noise = try noiseAmplitude()
        return try pooledTraces(stimuli, profile: profile, noise: noise, phase: "measuring", progress: progress).enumerated().map {
            stimuli[$0].summarise($1, noise: noise)
        }
    }

    /// The traces of `stimuli`, tones played once and short events ``repetitions`` times, then
    /// each short event whose peak is uncertain by more than ``targetStandardError`` played again,
    /// up to ``maximumPlays`` times; each one's plays pooled.
    ///
    /// A peak's uncertainty comes from its plays: the scatter of their peaks over the square root
    /// of their number. Those still needed are played in rounds, all stimuli of a round together in turns,
    /// at most three rounds after the first. Peaks within three times the noise are not played again
    /// (their relative error means nothing).
    func pooledTraces(_ stimuli: [Stimulus], profile: CalibrationProfile, noise: Double, phase: String, progress: ProgressReporter)
        throws(CalibrationError) -> [AccelerationTrace]
    {
        var plays = [[AccelerationTrace]](repeating: [], count: stimuli.count)
        // Each play's peak, summarised once, for the short events played until precise.
        var peaks = [[Double]](repeating: [], count: stimuli.count)
        let precise = targetStandardError > 0
        var wanted = stimuli.map { $0.isTransient ? max(repetitions, 1) : 1 }
        for round in 0..<4 {
            let pending = stimuli.indices.filter { plays[$0].count < wanted[$0] }
            guard !pending.isEmpty else { break }
            // In turns (a, b, c, a, b, c, …), not each stimulus's plays in a row: whatever drifts while
            // a batch plays (the machine's load, the actuator's warmth) then spreads over every
            // stimulus's plays instead of shifting one stimulus's peak, and shows in its scatter.
            let remaining = pending.map { wanted[$0] - plays[$0].count }
            var batch: [Int] = []
            for turn in 0..<(remaining.max() ?? 0) {
                for (index, count) in zip(pending, remaining) where turn < count { batch.append(index) }
            }
            let traces = try capture(batch.map { stimuli[$0] }, profile: profile, phase: round == 0 ? phase : "\(phase), played again", progress: progress)
            for (index, trace) in zip(batch, traces) {
                plays[index].append(trace)
                if precise, stimuli[index].isTransient { peaks[index].append(stimuli[index].summarise(trace, noise: noise)) }
            }
            guard precise else { break }
            for index in pending where stimuli[index].isTransient {
                let needed = Self.playsNeeded(peaks[index], noise: noise, target: targetStandardError)
                wanted[index] = min(max(needed, plays[index].count), max(maximumPlays, 1))
            }
        }
        return plays.map { AccelerationTrace.pooled($0) }
    }

    /// How many plays bring the standard error of the mean of `peaks` (one per play so far)
    /// within `target` of it: (scatter / target)²; as many as there are when fewer than three, or
    /// the peaks are within three times the noise.
    static func playsNeeded(_ peaks: [Double], noise: Double, target: Double) -> Int {
        let mean = peaks.reduce(0, +) / Double(max(peaks.count, 1))
        guard peaks.count >= 3, mean > 3 * noise, mean > 0, target > 0 else { return peaks.count }
        let variance = peaks.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(peaks.count - 1)
        let scatter = variance.squareRoot() / mean
        return Int((scatter * scatter / (target * target)).rounded(.up))
    }

    /// The amplitude sweep of `channel` again, at `frequency` Hz (0: the channel's own), for a
    /// channel that will play there rather than where it was first swept.
    public func remeasureAmplitude(_ measurement: ChannelMeasurement, frequency: Double, plan: CalibrationPlan, progress: ProgressReporter)
        throws(CalibrationError) -> ChannelMeasurement
    {
        try SensorSweep(source: self, plan: plan, progress: progress).remeasure(measurement, frequency: frequency)
    }

    /// Steady outputs of `channel` at each of `tones` (a frequency in Hz and a drive 0…1), in the
    /// order given, as the sweeps measure them (the sensor's noise still in them); `rise` is the
    /// channel's spin-up, seconds, so each tone lasts long enough to be steady.
    public func measureTones(
        _ tones: [(frequency: Double, drive: Double)], channel: Int, rise: Double, plan: CalibrationPlan, progress: ProgressReporter
    ) throws(CalibrationError) -> [Double] {
        try SensorSweep(source: self, plan: plan, progress: progress).tones(tones, channel: channel, rise: rise)
    }

    /// Timing, frequency sweep (coarse, then fine around the peak), amplitude sweep at the best
    /// frequency from rest, and, where the actuator does not start at every drive, the same drives
    /// reached while it runs; channel by channel, through ``ChannelProbe`` profiles.
    public func measureChannels(plan: CalibrationPlan, progress: ProgressReporter) throws(CalibrationError) -> [ChannelMeasurement] {
        try SensorSweep(source: self, plan: plan, progress: progress).run()
    }
}

/// The sweeps every sensor source runs.
///
/// Everything stays within the backend's envelope: tones only up to the largest drive it holds
/// steadily (a drive it would cut back after its kick is not a steady measurement), each shorter
/// than its continuous-drive limit. The first tone, at the largest steady drive, measures how long
/// the actuator takes to start and to stop; the tones after it last long enough to be steady twice
/// over, and each is measured only over the part its own trace shows steady.
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

    /// The largest amplitude the backend holds steadily.
    var largestSteadyDrive: Double { source.envelope?.steadyAmplitudeLimit ?? 1 }

    /// The longest tone the backend lets run, seconds.
    var longestTone: Double { (source.envelope?.maxContinuousDuration).map { $0 * 0.8 } ?? 5 }

    func tone(drive: Double, frequency: Double, channel: ChannelDescription, duration: Double, tail: Double = 0) -> Stimulus {
        Stimulus.tone(
            intensity: drive, sharpness: ChannelProbe.sharpness(for: frequency, channel: channel), duration: duration, window: plan.steadyWindow,
            tail: tail)
    }

    func measure(channel index: Int) throws(CalibrationError) -> ChannelMeasurement {
        let description = source.device.channels[index]
        let probe = ChannelProbe.profile(for: source.device, channel: index)
        let noise = try source.noiseAmplitude()
        var measurement = ChannelMeasurement(channel: index)
        let top = largestSteadyDrive
        measurement.largestSteadyDrive = top
        measurement.amplitudeOffset = source.envelope?.amplitudeOffset ?? 0

        // How long the actuator takes to start and stop, at the largest steady drive.
        let nominal = description.resonantFrequency ?? description.frequencyRange.map { ($0.lowerBound * $0.upperBound).squareRoot() } ?? 0
        let timing = try probeTiming(channel: description, frequency: nominal, probe: probe, noise: noise)
        measurement.timing = timing
        let duration = min(max(plan.toneDuration, 3 * timing.rise + plan.steadyWindow), longestTone)
        var counts = (measured: 0, settled: 0)
        func outputs(_ stimuli: [Stimulus], _ phase: String) throws(CalibrationError) -> [(amplitude: Double, trace: AccelerationTrace)] {
            try self.outputs(stimuli, probe: probe, noise: noise, phase: phase, counts: &counts)
        }

        if let range = description.frequencyRange, range.upperBound > range.lowerBound {
            let drive = plan.sweepDrive * top
            measurement.sweepDrive = drive
            let count = max(plan.coarseFrequencies, 3)
            // At frequencies the device really plays (a device that plays whole periods has gaps), once each.
            let device = source.device
            func playable(_ frequencies: [Double], besides taken: [Double] = []) -> [Double] {
                var result: [Double] = []
                for frequency in frequencies.map({ device.playedFrequency($0, within: range) }) {
                    let same = { (other: Double) in abs(other - frequency) < 1e-6 }
                    if !result.contains(where: same), !taken.contains(where: same) { result.append(frequency) }
                }
                return result
            }
            let coarse = playable((0..<count).map { range.lowerBound * pow(range.upperBound / range.lowerBound, Double($0) / Double(count - 1)) })
            let coarseOutputs = try outputs(
                coarse.map { tone(drive: drive, frequency: $0, channel: description, duration: duration) }, "\(description.name): frequency sweep"
            ).map(\.amplitude)
            var sweep = zip(coarse, coarseOutputs).map { ResponsePoint(input: $0, output: $1) }
            let peak = coarseOutputs.indices.max { coarseOutputs[$0] < coarseOutputs[$1] }!
            let low = coarse[max(peak - 2, 0)], high = coarse[min(peak + 2, coarse.count - 1)]
            let fineCount = max(plan.fineFrequencies, 2)
            let fine = playable((0..<fineCount).map { low + (high - low) * Double($0 + 1) / Double(fineCount + 1) }, besides: coarse)
            let fineOutputs = try outputs(
                fine.map { tone(drive: drive, frequency: $0, channel: description, duration: duration) }, "\(description.name): fine sweep"
            ).map(\.amplitude)
            sweep += zip(fine, fineOutputs).map { ResponsePoint(input: $0, output: $1) }
            sweep.sort { $0.input < $1.input }
            measurement.frequencySweep = sweep
            measurement.amplitudeFrequency = sweep.max { $0.output < $1.output }!.input
        }

        try sweepAmplitude(&measurement, channel: description, duration: duration, probe: probe, noise: noise, counts: &counts)
        measurement.unsettledTones = counts.measured - counts.settled
        measurement.tonesMeasured = counts.measured
        return measurement
    }

    /// The amplitude sweep of `measurement` again at `frequency`, with the timing already measured.
    func remeasure(_ original: ChannelMeasurement, frequency: Double) throws(CalibrationError) -> ChannelMeasurement {
        var measurement = original
        let description = source.device.channels[measurement.channel]
        let probe = ChannelProbe.profile(for: source.device, channel: measurement.channel, ownFrequency: frequency <= 0)
        let noise = try source.noiseAmplitude()
        let rise = measurement.timing?.rise ?? 0
        let duration = min(max(plan.toneDuration, 3 * rise + plan.steadyWindow), longestTone)
        measurement.amplitudeFrequency = frequency
        measurement.runningAmplitude = []
        var counts = (measured: measurement.tonesMeasured, settled: measurement.tonesMeasured - measurement.unsettledTones)
        try sweepAmplitude(&measurement, channel: description, duration: duration, probe: probe, noise: noise, counts: &counts)
        measurement.unsettledTones = counts.measured - counts.settled
        measurement.tonesMeasured = counts.measured
        return measurement
    }

    /// Steady outputs of `tones` (frequency, drive), with the timing already measured.
    func tones(_ tones: [(frequency: Double, drive: Double)], channel index: Int, rise: Double) throws(CalibrationError) -> [Double] {
        let description = source.device.channels[index]
        let probe = ChannelProbe.profile(for: source.device, channel: index)
        let noise = try source.noiseAmplitude()
        let duration = min(max(plan.toneDuration, 3 * rise + plan.steadyWindow), longestTone)
        var counts = (measured: 0, settled: 0)
        let stimuli = tones.map { tone(drive: $0.drive, frequency: $0.frequency, channel: description, duration: duration) }
        return try outputs(stimuli, probe: probe, noise: noise, phase: "\(description.name): band by output", counts: &counts).map(\.amplitude)
    }

    /// Steady outputs of `stimuli`, counting the tones that settled.
    func outputs(_ stimuli: [Stimulus], probe: CalibrationProfile, noise: Double, phase: String, counts: inout (measured: Int, settled: Int))
        throws(CalibrationError) -> [(amplitude: Double, trace: AccelerationTrace)]
    {
        let traces = try source.capture(stimuli, profile: probe, phase: phase, progress: progress)
        return zip(stimuli, traces).map { stimulus, trace in
            guard case .settled(let end, let window) = stimulus.measure else { return (stimulus.summarise(trace, noise: noise), trace) }
            let reading = trace.steadyPart(end: end, window: window, noise: noise)
            counts.measured += 1
            if reading.settled { counts.settled += 1 }
            return (reading.amplitude, trace)
        }
    }

    /// From rest: each drive of the plan after the actuator has come to a stop, at the measurement's
    /// amplitude frequency; then, for a motor that low drives did not start, the same drives while it runs.
    func sweepAmplitude(
        _ measurement: inout ChannelMeasurement, channel description: ChannelDescription, duration: Double, probe: CalibrationProfile, noise: Double,
        counts: inout (measured: Int, settled: Int)
    ) throws(CalibrationError) {
        let top = largestSteadyDrive
        let drives = plan.driveLevels.map { min(max($0, 0), 1) * top }
        let stimuli = drives.map { tone(drive: $0, frequency: measurement.amplitudeFrequency, channel: description, duration: duration) }
        let results = try outputs(stimuli, probe: probe, noise: noise, phase: "\(description.name): amplitude sweep", counts: &counts)
        measurement.amplitude = zip(drives, results).map { ResponsePoint(input: $0, output: $1.amplitude) }
        measurement.noiseFloor = measurement.amplitude.first { $0.input == 0 }?.output ?? noise
        if let strongest = drives.indices.max(by: { drives[$0] < drives[$1] }) {
            let trace = results[strongest].trace
            measurement.dominantFrequency = trace.dominantFrequency(from: duration - plan.steadyWindow, to: duration)
            if trace.sampleRate == nil { measurement.sampleInterval = trace.typicalInterval }
        }

        // Where low drives do not start a motor from rest, the same drives while it runs: a start
        // threshold with hysteresis shows as output there. They are stepped down finely, a fortieth
        // of the range, so the lowest drive it is seen turning at, its stop, is found to that. Only
        // a motor (a channel without a chosen frequency): a resonant actuator follows its drive
        // signal and has no stiction to find, and running points at its noise only moved its fitted
        // curve. Under emulation a step down the staircase that reached the device late read as
        // output at a drive under the dead zone, and pulled an evdev LRA's fitted dead zone from
        // 0.1 to 0 (tones then verified with R² 0.85–0.89).
        let floor = max(1.5 * measurement.noiseFloor, 1e-6)
        let silent = measurement.amplitude.filter { $0.input > 0 && $0.output <= floor }.map(\.input)
        if description.frequencyRange == nil, let highestSilent = silent.max(), let timing = measurement.timing,
            let lowestMoving = measurement.amplitude.filter({ $0.input > highestSilent && $0.output > floor }).map(\.input).min()
        {
            // From a step under the lowest drive that started it: between there and the highest silent
            // drive it may still turn once running (the hysteresis), with output near the noise, and
            // those readings are what pins where its running curve starts. From the highest silent
            // drive only, a coin ERM's running sweep saw nothing (its running output there is a tenth
            // of the noise) and its stop was the curve's origin extrapolated from the points over the
            // start: 0.124 and 0.069 in one CI run against 0.172 and 0.110.
            let fine = stride(from: lowestMoving - top / 40, to: 0, by: -top / 40).map { $0 }
            let steps = Set(drives.filter { $0 > 0 && $0 <= highestSilent } + fine.filter { $0 > 1e-9 })
            measurement.runningAmplitude = try runningSweep(
                drives: steps.sorted(by: >), channel: description, frequency: measurement.amplitudeFrequency, timing: timing, probe: probe, noise: noise)
        }
    }

    /// A tone at the largest steady drive, watched until it has rung down: its rise and fall times.
    func probeTiming(channel: ChannelDescription, frequency: Double, probe: CalibrationProfile, noise: Double) throws(CalibrationError) -> ActuatorTiming {
        var duration = min(max(plan.toneDuration, 1.0), longestTone)
        while true {
            let stimulus = tone(drive: largestSteadyDrive, frequency: frequency, channel: channel, duration: duration, tail: min(duration, 1.0))
            // Played a few times and pooled: the rise of an LRA lasts a few readings of a slow sensor.
            let traces = try source.capture(
                Array(repeating: stimulus, count: max(source.repetitions, 1)), profile: probe, phase: "\(channel.name): timing", progress: progress)
            guard !traces.isEmpty else { throw .measurement("no trace for the timing tone") }
            let trace = AccelerationTrace.pooled(traces)
            let reading = trace.steadyPart(end: duration, window: plan.steadyWindow, noise: noise)
            if reading.amplitude <= 3 * noise {
                throw .measurement(
                    "no vibration above the noise on \(channel.name) at its largest steady drive (\(format(reading.amplitude)) g, noise \(format(noise)) g); "
                        + "is the sensor on the actuator and the actuator playing?")
            }
            if reading.settled, let rise = reading.riseTime {
                return ActuatorTiming(rise: rise, fall: trace.fallTime(after: duration, level: reading.amplitude), level: reading.amplitude)
            }
            guard duration < longestTone else {
                throw .notSettling(
                    "\(channel.name) had not reached a steady vibration after \(format(duration)) s at its largest steady drive (the longest drive the backend allows)")
            }
            duration = min(duration * 2, longestTone)
        }
    }

    /// The steady output at each of `drives` (highest first) reached from the largest steady
    /// drive without stopping, in as few continuous drives as the backend's limit allows.
    func runningSweep(
        drives: [Double], channel: ChannelDescription, frequency: Double, timing: ActuatorTiming, probe: CalibrationProfile, noise: Double
    ) throws(CalibrationError) -> [ResponsePoint] {
        // A step down is a partial stop: it takes up to the fall time to settle, then a window.
        let step = 2 * max(timing.rise, timing.fall ?? timing.rise) + plan.steadyWindow + 0.02
        // Each continuous drive starts at the largest steady drive (to break the motor away), then
        // holds its first step for two: from full speed down to one near the stop is most of a full
        // stop, and in one step a gamepad motor still read 10–30 % over its running output there,
        // which bent the running curve.
        let perDrive = max(Int(((longestTone - 2 * step) / step).rounded(.down)), 1)
        let sharpness = ChannelProbe.sharpness(for: frequency, channel: channel)
        var points: [ResponsePoint] = []
        var index = 0
        while index < drives.count {
            let chunk = Array(drives[index..<min(index + perDrive, drives.count)])
            // Start at the largest steady drive, then step down, the first step held for two.
            let stimulus = Stimulus.staircase(intensities: [largestSteadyDrive, chunk[0]] + chunk, sharpness: sharpness, step: step)
            guard let trace = try source.capture([stimulus], profile: probe, phase: "\(channel.name): running sweep", progress: progress).first else {
                throw .measurement("no trace for the running sweep")
            }
            for (offset, drive) in chunk.enumerated() {
                let end = Double(offset + 3) * step
                points.append(ResponsePoint(input: drive, output: trace.amplitude(from: end - plan.steadyWindow, to: end)))
            }
            index += chunk.count
        }
        return points.sorted { $0.input < $1.input }
    }
}
