import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// A line-based conversation with the person calibrating: lines out, answers in. Works over a
/// plain TTY, a pipe, or a pty driven by another program.
public protocol LineDialog: AnyObject {
    /// Shows a line.
    func say(_ line: String)
    /// Shows `prompt` (no newline) and returns the next input line without its newline, or nil at end of input.
    func ask(_ prompt: String) -> String?
}

/// The terminal: standard output and standard input.
public final class TerminalDialog: LineDialog {
    /// The process's terminal.
    public init() {}

    /// Prints `line`.
    public func say(_ line: String) {
        print(line)
        fflush(nil)
    }

    /// Prints `prompt`, flushes, and reads one line from standard input.
    public func ask(_ prompt: String) -> String? {
        print(prompt, terminator: "")
        fflush(nil)
        return readLine(strippingNewline: true)
    }
}

/// How long the interactive procedures take. Durations in seconds, levels in drive (0…1).
public struct InteractiveSettings: Sendable, Hashable {
    /// Length of each test vibration.
    public var toneDuration: Double
    /// Silence between A and B of a comparison.
    public var pause: Double
    /// The staircase's first level and step.
    public var staircaseStart: Double
    /// The staircase's first step (halved at each reversal down to ``minimumStep``).
    public var staircaseStep: Double
    /// The staircase's smallest step.
    public var minimumStep: Double
    /// Reversals before the staircase stops.
    public var reversals: Int
    /// A magnitude match stops when the bracket is narrower than this.
    public var matchTolerance: Double
    /// Frequencies of the sharpness sweep (channels whose frequency can be chosen).
    public var sweepPoints: Int
    /// The level of the reference in the sharpness sweep.
    public var sweepReference: Double

    /// Settings.
    public init(
        toneDuration: Double, pause: Double, staircaseStart: Double, staircaseStep: Double, minimumStep: Double, reversals: Int,
        matchTolerance: Double, sweepPoints: Int, sweepReference: Double
    ) {
        self.toneDuration = toneDuration
        self.pause = pause
        self.staircaseStart = staircaseStart
        self.staircaseStep = staircaseStep
        self.minimumStep = minimumStep
        self.reversals = reversals
        self.matchTolerance = matchTolerance
        self.sweepPoints = sweepPoints
        self.sweepReference = sweepReference
    }

    /// For a person: 0.3 s vibrations, 8 reversals, matches to 0.02, 7 sweep frequencies against a reference at level 0.25.
    public static let standard = InteractiveSettings(
        toneDuration: 0.3, pause: 0.35, staircaseStart: 0.3, staircaseStep: 0.08, minimumStep: 0.01, reversals: 8, matchTolerance: 0.02,
        sweepPoints: 7, sweepReference: 0.25)

    /// Shorter, for a scripted respondent or a quick check: 0.12 s vibrations, 6 reversals, 6 sweep frequencies.
    public static let quick = InteractiveSettings(
        toneDuration: 0.12, pause: 0.05, staircaseStart: 0.3, staircaseStep: 0.08, minimumStep: 0.01, reversals: 6, matchTolerance: 0.02,
        sweepPoints: 6, sweepReference: 0.25)
}

/// A person at the terminal measures the device by feel.
///
/// Per channel: (1) the detection threshold by a 1-up/2-down staircase (it converges on the level
/// felt 70.7 % of the time), which becomes the dead zone; (2) magnitude matching against a
/// reference pulse at full drive: the person brackets the level that feels half, then a quarter,
/// as strong, which gives the response curve; (3) where the channel's frequency can be chosen, a
/// sharpness sweep: at each test frequency the person matches a pulse to a reference at the
/// channel's resonance, which gives the frequency-to-output map; (4) with several channels, each
/// channel at full drive is matched against the first, which gives their relative strength.
///
/// Outputs are perceived magnitudes relative to the first channel at full drive at its reference
/// frequency (1), not g: an interactive profile linearises perceived intensity and balances
/// frequencies and motors, but cannot say how strong the device is against another. A person
/// cannot judge a 12 ms peak either, so taps keep the default shape for the actuator kind.
///
/// Every prompt ends with its answers in brackets (`[y/n]`, `[s/w/=]`) so another program can
/// answer through a pty; `q` stops the calibration.
public final class InteractiveSource: MeasurementSource {
    /// Measured by a person.
    public let method = CalibrationProfile.Source.interactive
    /// Perceived units.
    public let outputUnit = OutputUnit.perceived
    /// The device measured.
    public var device: DeviceDescription { playback.device.description }
    /// How long the procedures take.
    public var settings: InteractiveSettings

    let playback: RealtimePlayback
    let dialog: LineDialog
    private var trial = 0

    /// A session playing on `playback`'s device and talking through `dialog`.
    public init(playback: RealtimePlayback, dialog: LineDialog, settings: InteractiveSettings = .standard) {
        self.playback = playback
        self.dialog = dialog
        self.settings = settings
    }

    /// A person cannot measure outputs in g.
    public func measure(_ stimuli: [Stimulus], profile: CalibrationProfile, progress: ProgressReporter) throws(CalibrationError) -> [Double]? {
        nil
    }

    /// The frequency the channel is referred to: its resonance, else the middle of its range (0 when it cannot be chosen).
    func referenceFrequency(_ channel: ChannelDescription) -> Double {
        guard let range = channel.frequencyRange else { return 0 }
        if let f0 = channel.resonantFrequency, range.contains(f0) { return f0 }
        return (range.lowerBound * range.upperBound).squareRoot()
    }

    /// Runs the four procedures on every channel the renderer drives.
    public func measureChannels(plan: CalibrationPlan, progress: ProgressReporter) throws(CalibrationError) -> [ChannelMeasurement] {
        let channels = CalibrationPlan.measuredChannels(of: device)
        dialog.say("Interactive calibration of \(device.id) (\(device.name)).")
        dialog.say("Hold or touch the device as you will use it. Answer each question and press Enter; q stops.")
        var measurements: [ChannelMeasurement] = []
        for (number, index) in channels.enumerated() {
            let channel = device.channels[index]
            dialog.say("")
            dialog.say("Channel \(channel.name) (\(number + 1) of \(channels.count))")
            measurements.append(try measure(channel: index))
        }
        if measurements.count >= 2 { try balance(&measurements) }
        dialog.say("")
        dialog.say("Done: \(trial) questions answered.")
        return measurements
    }

    func measure(channel index: Int) throws(CalibrationError) -> ChannelMeasurement {
        let description = device.channels[index]
        let probe = ChannelProbe.profile(for: device, channel: index)
        let reference = referenceFrequency(description)
        var measurement = ChannelMeasurement(channel: index)
        measurement.amplitudeFrequency = reference

        // 1. Detection threshold.
        dialog.say("1. Detection: a short vibration plays, or is too weak to feel. Did you feel it?")
        var staircase = Staircase(
            start: settings.staircaseStart, step: settings.staircaseStep, minimumStep: settings.minimumStep, reversals: settings.reversals)
        while !staircase.isFinished {
            try play(drive: staircase.level, frequency: reference, channel: description, probe: probe)
            staircase.record(detected: try askYesNo("   Trial \(staircase.trials + 1): did you feel a vibration? [y/n]: "))
        }
        let threshold = min(max(staircase.threshold, 0), 0.9)
        measurement.threshold = threshold
        dialog.say("   Threshold: level \(format(threshold)) (after \(staircase.trials) trials).")

        // 2. Magnitude matching against the full-strength reference.
        dialog.say("2. Magnitude: A is the reference at full strength; then B plays.")
        var points = [ResponsePoint(input: threshold, output: 0)]
        for (fraction, word) in [(0.5, "half"), (0.25, "a quarter")] {
            let start = threshold + (1 - threshold) * fraction
            let level = try match(
                question: "Is B stronger or weaker than \(word) of A?",
                reference: { () throws(CalibrationError) in try self.play(drive: 1, frequency: reference, channel: description, probe: probe) },
                test: { drive throws(CalibrationError) in try self.play(drive: drive, frequency: reference, channel: description, probe: probe) },
                range: threshold...1, start: start)
            points.append(ResponsePoint(input: level.drive, output: fraction))
        }
        points.append(ResponsePoint(input: 1, output: 1))
        measurement.amplitude = points.sorted { $0.input < $1.input }
        guard let curve = ResponseFitting.fitAmplitude(measurement.amplitude, noiseFloor: 0, deadZone: threshold) else {
            throw .measurement("the answers for \(description.name) do not give a rising response; run the calibration again")
        }
        dialog.say("   Response: exponent \(format(curve.exponent)) above the threshold.")

        // 3. Sharpness sweep: match each frequency to the reference at resonance.
        if let range = description.frequencyRange, settings.sweepPoints >= 2 {
            dialog.say("3. Sharpness: A plays at the reference frequency, B at another; B changes until they feel equally strong.")
            let low = max(range.lowerBound, reference * 0.8), high = min(range.upperBound, reference * 1.25)
            let count = settings.sweepPoints
            let frequencies = (0..<count).map { low * pow(high / low, Double($0) / Double(count - 1)) }
            let referenceLevel = settings.sweepReference
            var sweep = [ResponsePoint(input: reference, output: 1)]
            for frequency in frequencies where abs(frequency / reference - 1) > 0.01 {
                let result = try match(
                    question: "Is B stronger or weaker than A?",
                    reference: { () throws(CalibrationError) in
                        try self.play(drive: referenceLevel, frequency: reference, channel: description, probe: probe)
                    },
                    test: { drive throws(CalibrationError) in try self.play(drive: drive, frequency: frequency, channel: description, probe: probe) },
                    range: threshold...1, start: referenceLevel)
                if result.saturated {
                    // Only a bound (weaker than the reference even at full strength): left out of the map.
                    dialog.say("   (still weaker at full strength at \(format(frequency.rounded())) Hz: left out)")
                    continue
                }
                // Equal feel: rel(f) × curve(d_B) = rel(reference) × curve(d_ref).
                let relative = curve.output(atDrive: referenceLevel) / max(curve.output(atDrive: result.drive), 1e-6)
                sweep.append(ResponsePoint(input: frequency, output: min(relative, 10)))
            }
            measurement.frequencySweep = sweep.sorted { $0.input < $1.input }
            measurement.sweepDrive = referenceLevel
        }
        return measurement
    }

    /// Matches every other channel at full drive against the first one, and scales its outputs.
    func balance(_ measurements: inout [ChannelMeasurement]) throws(CalibrationError) {
        let first = measurements[0]
        let firstChannel = device.channels[first.channel]
        let firstProbe = ChannelProbe.profile(for: device, channel: first.channel)
        guard let firstCurve = ResponseFitting.fitAmplitude(first.amplitude, noiseFloor: 0, deadZone: first.threshold) else { return }
        dialog.say("")
        dialog.say("4. Balance: A is \(firstChannel.name), B another motor; one of them changes until they feel equally strong.")
        for index in measurements.indices.dropFirst() {
            let other = measurements[index]
            let channel = device.channels[other.channel]
            let probe = ChannelProbe.profile(for: device, channel: other.channel)
            guard let curve = ResponseFitting.fitAmplitude(other.amplitude, noiseFloor: 0, deadZone: other.threshold) else { continue }
            let playFirst = { (drive: Double) throws(CalibrationError) in
                try self.play(drive: drive, frequency: first.amplitudeFrequency, channel: firstChannel, probe: firstProbe)
            }
            let playOther = { (drive: Double) throws(CalibrationError) in
                try self.play(drive: drive, frequency: other.amplitudeFrequency, channel: channel, probe: probe)
            }
            try playFirst(1)
            pause()
            try playOther(1)
            let answer = try askComparison("   A: \(firstChannel.name) at full strength, B: \(channel.name) at full strength. Is B stronger or weaker than A? [s/w/=]: ")
            let factor: Double
            switch answer {
            case .same:
                factor = 1
            case .weaker:
                // B at full is weaker: find the level of A that matches it. The answer is about B,
                // so "B stronger" means A is too strong.
                let result = try match(
                    question: "Is B stronger or weaker than A?", reference: { () throws(CalibrationError) in try playOther(1) }, test: playFirst,
                    range: (first.threshold ?? 0)...1, start: 0.7, invert: true)
                factor = firstCurve.output(atDrive: result.drive)
            case .stronger:
                let result = try match(
                    question: "Is B stronger or weaker than A?", reference: { () throws(CalibrationError) in try playFirst(1) }, test: playOther,
                    range: (other.threshold ?? 0)...1, start: 0.7)
                factor = 1 / max(curve.output(atDrive: result.drive), 1e-3)
            }
            measurements[index].amplitude = other.amplitude.map { ResponsePoint(input: $0.input, output: $0.output * factor) }
            measurements[index].frequencySweep = other.frequencySweep.map { ResponsePoint(input: $0.input, output: $0.output * factor) }
            dialog.say("   \(channel.name) at full strength feels \(format(factor)) × \(firstChannel.name).")
        }
    }

    // MARK: - Playing and asking

    func play(drive: Double, frequency: Double, channel: ChannelDescription, probe: CalibrationProfile) throws(CalibrationError) {
        let stimulus = Stimulus.tone(
            intensity: min(max(drive, 0), 1), sharpness: ChannelProbe.sharpness(for: frequency, channel: channel), duration: settings.toneDuration,
            window: settings.toneDuration)
        try playback.play(stimulus.pattern, profile: probe, length: settings.toneDuration)
    }

    func pause() { RealtimePlayback.sleep(seconds: settings.pause) }

    /// Brackets the drive of `test` that matches `reference` (A, then B, each round).
    /// - Parameter invert: the adjusted stimulus is A (so "B stronger" means A must go up).
    func match(
        question: String, reference: () throws(CalibrationError) -> Void, test: (Double) throws(CalibrationError) -> Void,
        range: ClosedRange<Double>, start: Double, invert: Bool = false
    ) throws(CalibrationError) -> (drive: Double, saturated: Bool) {
        var search = MatchSearch(range: range, start: start, tolerance: settings.matchTolerance)
        var round = 1
        while !search.isFinished {
            if invert {
                try test(search.level)
                pause()
                try reference()
            } else {
                try reference()
                pause()
                try test(search.level)
            }
            var answer = try askComparison("   Round \(round): \(question) [s/w/=]: ")
            if invert {
                // The answer is about B (fixed); the level adjusted is A's.
                answer = answer == .stronger ? .weaker : answer == .weaker ? .stronger : .same
            }
            search.record(answer)
            round += 1
        }
        return (search.level, search.saturated)
    }

    func askYesNo(_ prompt: String) throws(CalibrationError) -> Bool {
        for _ in 0..<5 {
            switch try answer(prompt) {
            case "y", "yes": return true
            case "n", "no": return false
            default: dialog.say("   Please answer y (yes) or n (no); q stops.")
            }
        }
        throw .input("no usable answer after 5 tries")
    }

    func askComparison(_ prompt: String) throws(CalibrationError) -> MatchSearch.Answer {
        for _ in 0..<5 {
            switch try answer(prompt) {
            case "s", "stronger": return .stronger
            case "w", "weaker": return .weaker
            case "=", "e", "same", "equal": return .same
            default: dialog.say("   Please answer s (stronger), w (weaker) or = (the same); q stops.")
            }
        }
        throw .input("no usable answer after 5 tries")
    }

    private func answer(_ prompt: String) throws(CalibrationError) -> String {
        guard let line = dialog.ask(prompt) else { throw .input("the input ended before the calibration finished") }
        trial += 1
        let answer = line.trimmed.lowercased()
        if answer == "q" || answer == "quit" { throw .input("stopped by the user") }
        return answer
    }
}
