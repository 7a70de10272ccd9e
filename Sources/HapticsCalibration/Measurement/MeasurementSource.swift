import Haptics

/// Where calibration numbers come from: a person at the terminal (``InteractiveSource``), an
/// accelerometer read through Linux IIO (``AccelerometerSource``), or a physical model fed with
/// what the engine really sent (``SimulatedSource``). The calibrator and the verifier see every
/// source through this one interface.
public protocol MeasurementSource: AnyObject {
    /// How the source measures; it becomes the profile's ``CalibrationProfile/source``.
    var method: CalibrationProfile.Source { get }
    /// The device measured.
    var device: DeviceDescription { get }
    /// Units of the outputs this source reports: reference units (g) for sensors, or relative to
    /// the device's strongest output for a person.
    var outputUnit: OutputUnit { get }

    /// Measures every channel the renderer drives: where the channel's frequency can be chosen, a
    /// sweep across its range; then, at its best frequency, the output at each drive level (or, for a
    /// person, the detection threshold and matched magnitudes).
    func measureChannels(plan: CalibrationPlan, progress: ProgressReporter) throws(CalibrationError) -> [ChannelMeasurement]

    /// Plays each stimulus through the engine with `profile` and returns its output (the
    /// stimulus's ``Stimulus/measure``), or nil when the source cannot measure outputs directly
    /// (a person cannot judge a 12 ms peak in g).
    func measure(_ stimuli: [Stimulus], profile: CalibrationProfile, progress: ProgressReporter) throws(CalibrationError) -> [Double]?
}

/// The unit of a source's outputs.
public enum OutputUnit: String, Sendable, Hashable {
    /// Reference units: g of peak acceleration.
    case acceleration
    /// Perceived strength relative to the device at full drive and its best frequency (1).
    case perceived
}

/// A point of a measured response: an input (drive 0…1, or frequency in Hz) and the output there.
public struct ResponsePoint: Sendable, Hashable {
    /// Drive (0…1) or frequency (Hz).
    public var input: Double
    /// Output in the source's ``OutputUnit``.
    public var output: Double

    /// A point.
    public init(input: Double, output: Double) {
        self.input = input
        self.output = output
    }
}

/// What was measured on one channel.
public struct ChannelMeasurement: Sendable, Hashable {
    /// The channel's index in the device.
    public var channel: Int
    /// Output by frequency (Hz) at ``sweepDrive``; empty when the frequency cannot be chosen.
    public var frequencySweep: [ResponsePoint] = []
    /// The drive (0…1) of the frequency sweep.
    public var sweepDrive = 0.0
    /// The frequency the amplitude response was measured at, Hz (0: the channel's default).
    public var amplitudeFrequency = 0.0
    /// Output by drive (0…1) at ``amplitudeFrequency``.
    public var amplitude: [ResponsePoint] = []
    /// Output with no drive: the sensor's noise floor (0 for a person).
    public var noiseFloor = 0.0
    /// The detection threshold found by a staircase (drive, 0…1), for a person.
    public var threshold: Double?
    /// The vibration frequency at full drive, Hz, when a signed trace shows it.
    public var dominantFrequency: Double?
    /// Output by drive, each step reached from a higher drive while the actuator runs (falling
    /// through where it would not start from rest); empty when it starts at every drive measured.
    public var runningAmplitude: [ResponsePoint] = []
    /// The largest drive held steadily (the backend's rated level, as an amplitude); drives above
    /// it are not measured as if they were steady.
    public var largestSteadyDrive = 1.0
    /// The level the backend lifts the smallest drive to (its envelope's offset; 0 without one): a
    /// curve may start below drive 0 only when this is above 0.
    public var amplitudeOffset = 0.0
    /// Spin-up and spin-down at the largest steady drive, measured from a trace.
    public var timing: ActuatorTiming?
    /// Tones of the sweeps that had not reached their steady level with a window to spare.
    public var unsettledTones = 0
    /// Tones measured in the sweeps.
    public var tonesMeasured = 0
    /// The median interval between sensor readings, seconds (nil: a person).
    public var sampleInterval: Double?

    /// A measurement of `channel`.
    public init(channel: Int) {
        self.channel = channel
    }
}

/// How an actuator starts and stops, measured from a trace at its largest steady drive.
public struct ActuatorTiming: Sendable, Hashable {
    /// Seconds from the drive's start to 90 % of the steady vibration (spin-up, ring-up).
    public var rise: Double
    /// Seconds from the drive's end until the vibration fell under 10 % (spin-down, ring-down); nil
    /// if it had not within the capture.
    public var fall: Double?
    /// The steady vibration the times refer to, g.
    public var level: Double

    /// A timing.
    public init(rise: Double, fall: Double?, level: Double) {
        self.rise = rise
        self.fall = fall
        self.level = level
    }
}

/// How much to measure. Durations are in seconds.
public struct CalibrationPlan: Sendable, Hashable {
    /// Length of a sustained test tone.
    public var toneDuration: Double
    /// The last part of a tone its steady amplitude is measured over.
    public var steadyWindow: Double
    /// Silence between stimuli (the actuator rings down).
    public var gap: Double
    /// How long a tap is watched.
    public var tapCapture: Double
    /// Points of the coarse frequency sweep, log-spaced across the channel's range.
    public var coarseFrequencies: Int
    /// Points of the fine sweep around the coarse peak.
    public var fineFrequencies: Int
    /// Drive of the frequency sweep, 0…1.
    public var sweepDrive: Double
    /// Drive levels of the amplitude sweep as fractions (0…1) of the largest drive the backend holds
    /// steadily (all of 1 for a backend without a drive envelope); 0 measures the noise floor.
    public var driveLevels: [Double]
    /// Intensities of the tap grid a tap shape is judged on (the verification's tap ladder: a single
    /// intensity far from the others would set a tap's intensity exponent by itself).
    public var tapIntensities: [Double]
    /// Sharpnesses of the tap grid (only 0.5 where sharpness is not rendered).
    public var tapSharpnesses: [Double]
    /// Every how many candidate tap durations one is tried (1: all of them).
    public var tapDurationStride: Int
    /// Kick gains tried when no duration alone comes close enough.
    public var kickGains: [Double]
    /// Kick lengths tried, as fractions of the tap's duration.
    public var kickFractions: [Double]

    /// A plan.
    public init(
        toneDuration: Double, steadyWindow: Double, gap: Double, tapCapture: Double, coarseFrequencies: Int, fineFrequencies: Int,
        sweepDrive: Double, driveLevels: [Double], tapIntensities: [Double] = [0.2, 0.4, 0.6, 0.8, 1.0], tapSharpnesses: [Double] = [0, 0.5, 1],
        tapDurationStride: Int = 1, kickGains: [Double] = [1.25, 1.5, 1.75, 2.0, 2.5, 3.0], kickFractions: [Double] = [0.25, 0.5, 0.75, 1.0]
    ) {
        self.toneDuration = toneDuration
        self.steadyWindow = steadyWindow
        self.gap = gap
        self.tapCapture = tapCapture
        self.coarseFrequencies = coarseFrequencies
        self.fineFrequencies = fineFrequencies
        self.sweepDrive = sweepDrive
        self.driveLevels = driveLevels
        self.tapIntensities = tapIntensities
        self.tapSharpnesses = tapSharpnesses
        self.tapDurationStride = max(tapDurationStride, 1)
        self.kickGains = kickGains
        self.kickFractions = kickFractions
    }

    /// The full plan: 0.5 s tones measured over their last 0.2 s, 25 + 15 sweep points, 30 drive
    /// levels (every 0.02 up to 0.3, where dead zones are, then every 0.05), every tap duration on
    /// a 3 × 3 grid.
    public static let standard = CalibrationPlan(
        toneDuration: 0.5, steadyWindow: 0.2, gap: 0.25, tapCapture: 0.1, coarseFrequencies: 25, fineFrequencies: 15, sweepDrive: 0.7,
        driveLevels: [0] + stride(from: 0.02, through: 0.3, by: 0.02).map { $0 } + stride(from: 0.35, through: 1.0001, by: 0.05).map { min($0, 1) })

    /// A shorter plan for real-time sources in a hurry: 0.35 s tones, 12 + 8 sweep points, 16 drive
    /// levels, tap durations judged on a 5 × 3 grid (the middle of a band too: taps there can fall
    /// below both ends), four kicks.
    public static let quick = CalibrationPlan(
        toneDuration: 0.35, steadyWindow: 0.15, gap: 0.15, tapCapture: 0.08, coarseFrequencies: 12, fineFrequencies: 8, sweepDrive: 0.7,
        driveLevels: [0, 0.03, 0.06, 0.09, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1], tapIntensities: [0.2, 0.4, 0.6, 0.8, 1.0],
        tapSharpnesses: [0, 0.5, 1], tapDurationStride: 3, kickGains: [1.5, 2.0], kickFractions: [0.5, 1.0])

    /// The channels the renderer drives (trigger motors are never driven by intensity and sharpness).
    static func measuredChannels(of device: DeviceDescription) -> [Int] {
        device.channels.indices.filter { device.channels[$0].actuator != .trigger }
    }
}

/// Receives progress: a titled phase and how far through it the work is.
public protocol ProgressReporter: Sendable {
    /// `done` of `total` steps of `phase` are finished.
    func report(phase: String, done: Int, total: Int)
}

/// Discards progress.
public struct SilentProgress: ProgressReporter {
    /// A reporter that discards everything.
    public init() {}
    /// Does nothing.
    public func report(phase: String, done: Int, total: Int) {}
}
