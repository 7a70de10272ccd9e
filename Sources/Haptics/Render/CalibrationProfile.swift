/// What the renderer knows about one device: how drive level becomes output, how sharpness maps
/// onto the hardware, how a transient is shaped, and the limits. `haptic-cal calibrate` measures
/// it; ``uncalibrated(for:)`` gives a sensible default from the device's description alone.
///
/// Output is in *reference units*: intensity 1 asks every device for ``referenceOutput`` units, so
/// a calibrated "medium impact" (intensity ≈ 0.6) asks a DualSense and a 175 Hz LRA for the same
/// physical output. A device that cannot reach the asked output saturates at its rated level.
public struct CalibrationProfile: Sendable, Hashable {
    /// The current version of the profile format (versions 1 to 3 are still read).
    public static let formatVersion = 5
    /// The output intensity 1 asks for, in reference units (g of peak acceleration when measured with an accelerometer).
    public static let referenceOutput = 1.0

    /// Where the numbers came from.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        /// Defaults derived from the device's description; nothing was measured.
        case uncalibrated
        /// A default shipped in `Hardware/profiles/`.
        case shipped
        /// Measured on a simulated actuator model.
        case simulated
        /// Measured by a person at the terminal.
        case interactive
        /// Measured with an accelerometer through Linux IIO.
        case accelerometer
        /// The device's own calibration (a driver IC's auto-calibration, ``CalibrationProfile/deviceCalibration``);
        /// the rest is the uncalibrated default.
        case device
    }

    /// What a profile's drives are (its channels' dead zone, start and stop drives, its limits).
    public enum DriveScale: String, Sendable, Hashable, CaseIterable {
        /// Amplitudes as a frame asks for them: a backend with a drive envelope lifts every
        /// non-zero one over its board's offset (the default).
        case amplitude
        /// Levels of the hardware's full scale from 0, sent as frames of levels
        /// (``DriveFrame/levels``): measured from zero on a device whose envelope
        /// ``DriveEnvelope/acceptsLevels``. Replaces the board's offset for the device.
        case level
    }

    /// How sharpness (0 … 1) reaches the hardware.
    public enum SharpnessMapping: Sendable, Hashable {
        /// The device has one feel (a single ERM): sharpness is ignored.
        case none
        /// Every channel with a ``ChannelCalibration/usableBand`` plays sharpness as a drive frequency,
        /// logarithmically from the band's low end (0) to its high end (1).
        case frequency
        /// Sharpness moves energy from the `low` channel (strong, low-frequency motor) at 0 to the
        /// `high` channel (weak, high-frequency motor) at 1, keeping total power.
        case motorMix(low: Int, high: Int)
    }

    /// How a transient (a tap) is rendered.
    public struct TransientShape: Sendable, Hashable {
        /// The whole pulse, in seconds (≤ 0.02 s on fast actuators, or it feels buzzy).
        public var duration: Double
        /// Drive multiplier during the kick at the pulse's start (1 = no kick); bounded by ``DriveLimits/overdriveLevel``.
        public var overdriveGain: Double
        /// How long the kick lasts, in seconds.
        public var overdriveDuration: Double
        /// A tap of intensity `i` is rendered as intensity `i^intensityExponent` (1: as is), for
        /// actuators whose short taps grow with drive differently from their steady output (an
        /// LRA whose resonance moves with amplitude: its steady output bends over at the top, its
        /// taps do not).
        public var intensityExponent: Double
        /// A tap's intensity (after ``intensityExponent``) is multiplied by this (1: as is), a trim
        /// of a few percent: calibration sets it so the taps' peaks meet their targets on average,
        /// which the shape's own choices (whole milliseconds, whole pushes of an LRA, a few kick
        /// gains) come only close to.
        public var level: Double
        /// Further trims of ``level`` at sharpnesses spread evenly from 0 to 1 (three: at 0, 0.5
        /// and 1), interpolated linearly between them; empty: none. Calibration measures them
        /// where one level cannot serve every sharpness: an LRA's taps across its usable band
        /// peak a few percent apart (the band is chosen to keep them within 10 %), so a tap at
        /// sharpness 0 and one at 1 would otherwise feel unlike by that much.
        public var sharpnessTrim: [Double]

        /// A transient shape.
        public init(
            duration: Double, overdriveGain: Double = 1, overdriveDuration: Double = 0, intensityExponent: Double = 1, level: Double = 1,
            sharpnessTrim: [Double] = []
        ) {
            self.duration = duration
            self.overdriveGain = overdriveGain
            self.overdriveDuration = overdriveDuration
            self.intensityExponent = intensityExponent
            self.level = level
            self.sharpnessTrim = sharpnessTrim
        }

        /// The largest multiplier of a tap's intensity at any sharpness.
        public var highestLevel: Double { level * (sharpnessTrim.max() ?? 1) }

        /// The multiplier of a tap's intensity at `sharpness` (0 … 1, clamped): ``level`` times
        /// ``sharpnessTrim`` interpolated there.
        public func level(atSharpness sharpness: Double) -> Double {
            guard sharpnessTrim.count >= 2 else { return level * (sharpnessTrim.first ?? 1) }
            let position = min(max(sharpness, 0), 1) * Double(sharpnessTrim.count - 1)
            let lower = min(Int(position), sharpnessTrim.count - 2)
            let fraction = position - Double(lower)
            return level * (sharpnessTrim[lower] * (1 - fraction) + sharpnessTrim[lower + 1] * fraction)
        }
    }

    /// The drive the device may take.
    public struct DriveLimits: Sendable, Hashable {
        /// Highest sustained drive, 0 … 1 of full scale.
        public var ratedLevel: Double
        /// Highest drive during a transient's kick, 0 … 1, at least ``ratedLevel``.
        public var overdriveLevel: Double

        /// Limits; the overdrive level is raised to the rated level if lower.
        public init(ratedLevel: Double = 1, overdriveLevel: Double = 1) {
            self.ratedLevel = ratedLevel
            self.overdriveLevel = max(overdriveLevel, ratedLevel)
        }
    }

    /// The device the profile was made for (its stable id), if it is device-specific.
    public var deviceID: String?
    /// The device's name when measured.
    public var deviceName: String?
    /// Where the numbers came from.
    public var source: Source
    /// One entry per device channel, in the device's channel order.
    public var channels: [ChannelCalibration]
    /// How sharpness reaches the hardware.
    public var sharpness: SharpnessMapping
    /// How transients are rendered.
    public var transient: TransientShape
    /// The drive limits.
    public var limits: DriveLimits
    /// What the drives are: amplitudes (lifted by the backend over its offset) or levels from 0.
    public var drive: DriveScale
    /// What the device's own calibration measured (a DRV2605L's `a_cal_comp`, `a_cal_bemf`,
    /// `bemf_gain`, `lra_period`: register values), given back to the device at each open so it
    /// needs no new calibration; empty when the device does not calibrate itself.
    public var deviceCalibration: [String: Double]

    /// A profile.
    public init(
        deviceID: String?, deviceName: String?, source: Source, channels: [ChannelCalibration], sharpness: SharpnessMapping,
        transient: TransientShape, limits: DriveLimits = DriveLimits(), drive: DriveScale = .amplitude, deviceCalibration: [String: Double] = [:]
    ) {
        self.drive = drive
        self.deviceCalibration = deviceCalibration
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.source = source
        self.channels = channels
        self.sharpness = sharpness
        self.transient = transient
        self.limits = limits
    }
}

/// How one channel turns drive into output.
///
/// While the actuator runs, output at drive `d` and frequency `f` is
/// `sat(fullScaleOutput × response(f) × ((d − deadZone) / (1 − deadZone))^responseExponent)` above
/// the dead zone and nothing below it, where `sat(x) = x / √(1 + (x / saturationOutput)²)` (no
/// saturation: `sat(x) = x`). A negative dead zone means the smallest drive already gives output
/// (a backend that lifts every non-zero drive over its board's dead zone). From rest the actuator
/// starts only at ``startDrive``; once running it keeps going down to ``stopDrive``.
public struct ChannelCalibration: Sendable, Hashable {
    /// A point of the frequency-to-output map.
    public struct FrequencyPoint: Sendable, Hashable {
        /// Drive frequency in Hz.
        public var frequency: Double
        /// Output there relative to the best frequency (0 … 1).
        public var relativeOutput: Double

        /// A point.
        public init(frequency: Double, relativeOutput: Double) {
            self.frequency = frequency
            self.relativeOutput = relativeOutput
        }
    }

    /// The frequency map measured again at one steady output: for an actuator whose resonance
    /// moves with amplitude (an LRA's spring that softens or stiffens), where the main map,
    /// measured at one drive, misses at others.
    public struct OutputFrequencyMap: Sendable, Hashable {
        /// The output this map was measured at, reference units: what the channel gave at the
        /// frequency where ``ChannelCalibration/frequencyResponse`` is 1 (the frequency its
        /// output curve was measured at).
        public var output: Double
        /// Output by frequency relative to that frequency's (which is 1 here too; others may be
        /// above 1 where the resonance has moved towards them), sorted by frequency.
        public var points: [FrequencyPoint]

        /// A map measured at `output`.
        public init(output: Double, points: [FrequencyPoint]) {
            self.output = output
            self.points = points
        }
    }

    /// The channel's name, as the device describes it.
    public var name: String
    /// Drive level (−1 … 0.9) where the output curve starts: no output below it; negative when
    /// every non-zero drive gives output.
    public var deadZone: Double
    /// Exponent of the output curve above the dead zone (1 = linear).
    public var responseExponent: Double
    /// Output at full drive and the best frequency, in reference units.
    public var fullScaleOutput: Double
    /// Resonant frequency in Hz, if resonant.
    public var resonantFrequency: Double?
    /// Quality factor of the resonance, if measured.
    public var qFactor: Double?
    /// Output relative to the best frequency, by frequency (sorted by frequency); empty means flat.
    public var frequencyResponse: [FrequencyPoint]
    /// The frequency map measured again at other outputs, sorted by output (at least two, or
    /// none): within the frequencies they span, a drive for output `o` reads the relative output
    /// interpolated linearly between the two maps measured nearest `o` (the nearest one's under
    /// the first or over the last), instead of ``frequencyResponse``. Empty: the one map serves
    /// every output.
    public var frequencyResponseByOutput: [OutputFrequencyMap] = []
    /// The frequencies sharpness 0 … 1 spans, in Hz; nil when the channel's frequency cannot be chosen.
    public var usableBand: ClosedRange<Double>?
    /// The output the curve levels off at, in reference units; nil when it does not.
    public var saturationOutput: Double?
    /// The smallest drive (0 … 1) that starts the actuator from rest; nil when every drive does.
    public var startDrive: Double?
    /// The smallest drive (0 … 1) that keeps a running actuator going; nil when not known.
    public var stopDrive: Double?
    /// Seconds from a drive's start to 90 % of the steady vibration (spin-up, ring-up), if measured.
    public var riseTime: Double?
    /// Seconds from a drive's end until the vibration falls under 10 % (spin-down, ring-down), if measured.
    public var fallTime: Double?

    /// A channel calibration.
    public init(
        name: String, deadZone: Double = 0, responseExponent: Double = 1, fullScaleOutput: Double = CalibrationProfile.referenceOutput,
        resonantFrequency: Double? = nil, qFactor: Double? = nil, frequencyResponse: [FrequencyPoint] = [],
        usableBand: ClosedRange<Double>? = nil, saturationOutput: Double? = nil, startDrive: Double? = nil, stopDrive: Double? = nil,
        riseTime: Double? = nil, fallTime: Double? = nil
    ) {
        self.name = name
        self.deadZone = deadZone
        self.responseExponent = responseExponent
        self.fullScaleOutput = fullScaleOutput
        self.resonantFrequency = resonantFrequency
        self.qFactor = qFactor
        self.frequencyResponse = frequencyResponse
        self.usableBand = usableBand
        self.saturationOutput = saturationOutput
        self.startDrive = startDrive
        self.stopDrive = stopDrive
        self.riseTime = riseTime
        self.fallTime = fallTime
    }

    /// Output relative to the best frequency at `frequency` (linear between map points, flat outside).
    public func relativeOutput(at frequency: Double) -> Double {
        guard frequency > 0 else { return 1 }
        return Self.interpolate(frequencyResponse, at: frequency)
    }

    /// Output relative to the best frequency at `frequency` for a steady `output` (reference
    /// units): from ``frequencyResponseByOutput`` where its maps span `frequency`, else
    /// ``relativeOutput(at:)``.
    public func relativeOutput(at frequency: Double, output: Double) -> Double {
        guard frequency > 0, let first = frequencyResponseByOutput.first, let last = frequencyResponseByOutput.last,
            let low = first.points.first?.frequency, let high = first.points.last?.frequency, frequency >= low, frequency <= high
        else { return relativeOutput(at: frequency) }
        if output <= first.output || frequencyResponseByOutput.count == 1 { return Self.interpolate(first.points, at: frequency) }
        if output >= last.output { return Self.interpolate(last.points, at: frequency) }
        let upper = frequencyResponseByOutput.firstIndex { $0.output >= output }!
        let a = frequencyResponseByOutput[upper - 1], b = frequencyResponseByOutput[upper]
        let fraction = (output - a.output) / (b.output - a.output)
        let below = Self.interpolate(a.points, at: frequency)
        return below + (Self.interpolate(b.points, at: frequency) - below) * fraction
    }

    /// `points` at `frequency`: linear between points, flat outside; 1 for no points.
    static func interpolate(_ points: [FrequencyPoint], at frequency: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 1 }
        if frequency <= first.frequency { return first.relativeOutput }
        if frequency >= last.frequency { return last.relativeOutput }
        let upper = points.firstIndex { $0.frequency >= frequency }!
        let a = points[upper - 1], b = points[upper]
        let fraction = (frequency - a.frequency) / (b.frequency - a.frequency)
        return a.relativeOutput + (b.relativeOutput - a.relativeOutput) * fraction
    }

    /// The drive level (0 … 1, before limits) that makes `output` reference units at `frequency`
    /// on a running actuator; 0 for no output, more than 1 when the channel cannot reach it.
    ///
    /// Where every drive gives output (a negative dead zone), an output under what the smallest
    /// drive gives is rendered as that smallest drive if it asks for at least half of it, else as
    /// nothing: `Double.leastNonzeroMagnitude` stands for "the smallest drive the device has".
    public func drive(forOutput output: Double, at frequency: Double) -> Double {
        guard output > 0 else { return 0 }
        var target = output
        if let saturation = saturationOutput, saturation > 0 {
            guard target < saturation * 0.999 else { return 1 + target / saturation }
            target /= (1 - (target / saturation) * (target / saturation)).squareRoot()
        }
        let reachable = fullScaleOutput * max(relativeOutput(at: frequency, output: output), 1e-6)
        let drive = deadZone + (1 - deadZone) * pow(target / reachable, 1 / responseExponent)
        guard drive <= 0 else { return drive }
        return output >= 0.5 * self.output(atDrive: .leastNonzeroMagnitude, frequency: frequency) ? .leastNonzeroMagnitude : 0
    }

    /// The lowest steady output the channel gives when started from rest, reference units, at
    /// `frequency` (0: its best): what its ``startDrive`` gives (less does not start it), or, where
    /// every drive gives output (a negative dead zone), what its smallest drive gives; 0 when its
    /// output grows from nothing. A tap asking for less leaves the actuator at rest; a sustained
    /// vibration is started at the threshold and held lower (``lowestRunningOutput(at:)``).
    public func lowestOutputFromRest(at frequency: Double = 0) -> Double {
        if let start = startDrive { return output(atDrive: start, frequency: frequency) }
        return deadZone < 0 ? output(atDrive: .leastNonzeroMagnitude, frequency: frequency) : 0
    }

    /// The lowest steady output the channel holds once running, reference units, at `frequency`
    /// (0: its best): what its ``stopDrive`` gives, else ``lowestOutputFromRest(at:)``. Outputs
    /// under it are the profile's declared floor (``CalibrationProfile/floorOutput``):
    /// calibration's verification reports them as unreachable rather than wrong.
    public func lowestRunningOutput(at frequency: Double = 0) -> Double {
        if let stop = stopDrive { return output(atDrive: stop, frequency: frequency) }
        return lowestOutputFromRest(at: frequency)
    }

    /// The output (reference units) a running channel gives at `drive` and `frequency`: the inverse of ``drive(forOutput:at:)``.
    public func output(atDrive drive: Double, frequency: Double) -> Double {
        guard drive > 0, drive > deadZone else { return 0 }
        let curve = fullScaleOutput * pow((drive - deadZone) / (1 - deadZone), responseExponent)
        func saturated(_ raw: Double) -> Double {
            guard let saturation = saturationOutput, saturation > 0 else { return raw }
            return raw / (1 + (raw / saturation) * (raw / saturation)).squareRoot()
        }
        var output = saturated(curve * relativeOutput(at: frequency))
        // Maps by output: the output depends on the map it selects; a few rounds settle it (the
        // maps differ by a few percent, so each round shrinks the difference as much).
        if !frequencyResponseByOutput.isEmpty, frequency > 0 {
            for _ in 0..<4 { output = saturated(curve * relativeOutput(at: frequency, output: output)) }
        }
        return output
    }
}

extension CalibrationProfile {
    /// The lowest steady output every driven channel holds, reference units: the profile's floor
    /// for sustained vibrations (the largest of its channels'
    /// ``ChannelCalibration/lowestRunningOutput(at:)`` at their best frequency). The renderer
    /// starts a channel with a start threshold at it and then holds the drive asked for, so a
    /// sustained vibration reaches down to what a running actuator holds; a sustained intensity
    /// asking for less is not rendered as asked.
    public var floorOutput: Double {
        channels.filter { $0.fullScaleOutput > 0 }.map { $0.lowestRunningOutput() }.max() ?? 0
    }

    /// The default for a device nothing was measured on: linear, no dead zone, full scale equal to
    /// the reference, and a sharpness mapping and transient shape chosen from the device's kind.
    ///
    /// - LRA / voice coil with frequency control: sharpness spans a band around resonance
    ///   (0.75×–1.5× f₀ where the resonance is known, else the channel's range); a 12 ms tap.
    /// - A single ERM: sharpness ignored; a 30 ms tap with a 10 ms kick at 1.6× (ERMs start slowly).
    /// - Dual rumble: sharpness mixes the strong and weak motor; a 40 ms tap with a kick.
    /// Taps are never shorter than two of the device's update intervals, so they can be rendered.
    public static func uncalibrated(for device: DeviceDescription) -> CalibrationProfile {
        let channels = device.channels.map { channel in
            var band = channel.frequencyRange
            if let range = channel.frequencyRange, let f0 = channel.resonantFrequency {
                let low = max(range.lowerBound, f0 * 0.75), high = min(range.upperBound, f0 * 1.5)
                if low < high { band = low...high }
            }
            return ChannelCalibration(name: channel.name, resonantFrequency: channel.resonantFrequency, usableBand: band)
        }
        let drivable = device.channels.indices.filter { device.channels[$0].actuator != .trigger }
        let sharpness: SharpnessMapping
        var transient: TransientShape
        if channels.contains(where: { $0.usableBand != nil }) {
            sharpness = .frequency
            transient = TransientShape(duration: 0.012)
        } else if drivable.count >= 2 {
            // The strong motor is the one with the lower nominal frequency, else the first.
            let ordered = drivable.sorted {
                (device.channels[$0].nominalFrequency ?? Double($0)) < (device.channels[$1].nominalFrequency ?? Double($1))
            }
            sharpness = .motorMix(low: ordered[0], high: ordered[1])
            transient = TransientShape(duration: 0.040, overdriveGain: 1.4, overdriveDuration: 0.015)
        } else {
            sharpness = .none
            transient = TransientShape(duration: 0.030, overdriveGain: 1.6, overdriveDuration: 0.010)
        }
        let floor = 2 * device.minimumUpdateInterval
        if transient.duration < floor {
            transient.duration = floor
            transient.overdriveDuration = transient.overdriveDuration > 0 ? min(max(transient.overdriveDuration, device.minimumUpdateInterval), floor / 2) : 0
        }
        return CalibrationProfile(
            deviceID: nil, deviceName: device.name, source: .uncalibrated, channels: channels, sharpness: sharpness, transient: transient)
    }
}

#if canImport(Glibc)
import Glibc
#endif
