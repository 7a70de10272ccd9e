#if canImport(Glibc)
import Glibc
#endif

// Android 16's envelope effects (`VibrationEffect.BasicEnvelopeBuilder` and
// `WaveformEnvelopeBuilder`, API 36) as values, checked as Android's `build()` checks them, and
// rendered as patterns.
//
// An envelope starts at intensity (or amplitude) 0 and moves linearly to each control point in
// turn, over the point's duration. Its pattern is one continuous event per 30 s (intensity 1,
// sharpness 0) under a `HapticIntensityControl` curve and a `HapticSharpnessControl` curve that
// carry the envelope's values (intensity multiplies, sharpness adds), so the engine interpolates
// them as Android does, and a waveform device plays the frequency glide phase-continuously.

/// Why an envelope cannot be built: which control point, which parameter, the value and the range,
/// as Android's `build()` refuses it.
public enum EnvelopeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No control point.
    case empty
    /// A basic envelope must end at intensity 0 (Android: `IllegalStateException`).
    case doesNotEndAtZero(lastIntensity: Double)
    /// A value outside its range (`point` is the control point's index; nil: the initial value).
    case outOfRange(point: Int?, parameter: String, value: Double, range: String)
    /// A duration that is not positive, or longer than the pattern can hold, in milliseconds.
    case badDuration(point: Int, milliseconds: Double)
    /// A frequency the device cannot play (Android plays nothing then; this says so instead).
    case frequencyOutsideDevice(point: Int?, hertz: Double, band: ClosedRange<Double>)
    /// The device has no frequency control (a motor whose speed is its frequency): a waveform
    /// envelope's frequencies cannot be rendered on it.
    case noFrequencyControl(deviceID: String)

    public var description: String {
        func at(_ point: Int?) -> String { point.map { "control point \($0)" } ?? "the initial value" }
        switch self {
        case .empty:
            return "an envelope needs at least one control point"
        case .doesNotEndAtZero(let last):
            return "a basic envelope must end at a zero intensity control point; the last has intensity \(last) (add addControlPoint(intensity: 0, …))"
        case .outOfRange(let point, let parameter, let value, let range):
            return "\(at(point)): \(parameter) \(value) is outside \(range)"
        case .badDuration(let point, let milliseconds):
            return "control point \(point): duration \(milliseconds) ms must be greater than zero (and the envelope at most \(Int(HapticPattern.maximumTime)) s)"
        case .frequencyOutsideDevice(let point, let hertz, let band):
            return "\(at(point)): \(hertz) Hz is outside the device's frequencies \(band.lowerBound)…\(band.upperBound) Hz (FrequencyProfile); Android would not play the effect"
        case .noFrequencyControl(let deviceID):
            return "\(deviceID) has no frequency control: play a BasicEnvelope (sharpness) on it instead"
        }
    }
}

/// Android's `BasicEnvelopeBuilder`: control points of intensity and sharpness (0 … 1), each
/// reached linearly over its duration, from intensity 0; the last must be at intensity 0.
///
/// ```swift
/// let swell = try BasicEnvelope.Builder()
///     .setInitialSharpness(0)
///     .addControlPoint(intensity: 1, sharpness: 1, durationMillis: 500)
///     .addControlPoint(intensity: 0, sharpness: 1, durationMillis: 100)
///     .build()
/// try engine.makePlayer(with: swell.pattern).start(atTime: 0)
/// ```
public struct BasicEnvelope: Sendable, Hashable {
    /// One control point: the intensity and sharpness reached at its end, and how long it takes.
    public struct ControlPoint: Sendable, Hashable {
        /// Intensity reached, 0 … 1.
        public var intensity: Double
        /// Sharpness reached, 0 … 1.
        public var sharpness: Double
        /// Time to reach them from the previous point, in seconds.
        public var duration: Double

        /// A control point.
        public init(intensity: Double, sharpness: Double, duration: Double) {
            self.intensity = intensity
            self.sharpness = sharpness
            self.duration = duration
        }
    }

    /// Where the sharpness starts (0 … 1); the first point's when not set, as on Android.
    public let initialSharpness: Double
    /// The control points, in order.
    public let controlPoints: [ControlPoint]

    /// An envelope, checked as Android's `build()` checks it.
    /// - Throws: ``EnvelopeError`` naming the point, the parameter, the value and its range.
    public init(initialSharpness: Double? = nil, controlPoints: [ControlPoint]) throws(EnvelopeError) {
        guard let first = controlPoints.first, let last = controlPoints.last else { throw .empty }
        guard last.intensity == 0 else { throw .doesNotEndAtZero(lastIntensity: last.intensity) }
        if let initialSharpness { try Envelopes.check(initialSharpness, "sharpness", point: nil, in: 0...1) }
        try Envelopes.checkDurations(controlPoints.map(\.duration))
        for (index, point) in controlPoints.enumerated() {
            try Envelopes.check(point.intensity, "intensity", point: index, in: 0...1)
            try Envelopes.check(point.sharpness, "sharpness", point: index, in: 0...1)
        }
        self.initialSharpness = initialSharpness ?? first.sharpness
        self.controlPoints = controlPoints
    }

    /// How long it plays, in seconds.
    public var duration: Double { controlPoints.reduce(0) { $0 + $1.duration } }

    /// The envelope as a pattern: one continuous event per 30 s (intensity 1, sharpness 0) under a
    /// `HapticIntensityControl` curve and a `HapticSharpnessControl` curve holding the envelope's
    /// values, which the engine interpolates linearly, as Android does.
    public var pattern: HapticPattern {
        Envelopes.pattern(
            intensities: [0] + controlPoints.map(\.intensity), sharpnesses: [initialSharpness] + controlPoints.map(\.sharpness),
            durations: controlPoints.map(\.duration))
    }

    /// Android's builder, method for method: each call returns a new builder, so calls chain.
    public struct Builder: Sendable, Hashable {
        private var initialSharpness: Double?
        private var points: [ControlPoint] = []

        /// An empty builder.
        public init() {}

        /// Where the sharpness starts (0 … 1); by default the first point's.
        public func setInitialSharpness(_ sharpness: Double) -> Builder {
            var copy = self
            copy.initialSharpness = sharpness
            return copy
        }

        /// Adds a point reached `durationMillis` milliseconds after the previous one.
        public func addControlPoint(intensity: Double, sharpness: Double, durationMillis: Int) -> Builder {
            var copy = self
            copy.points.append(ControlPoint(intensity: intensity, sharpness: sharpness, duration: Double(durationMillis) / 1000))
            return copy
        }

        /// The envelope. Like Android's, nothing is checked until here.
        /// - Throws: ``EnvelopeError``.
        public func build() throws(EnvelopeError) -> BasicEnvelope {
            try BasicEnvelope(initialSharpness: initialSharpness, controlPoints: points)
        }
    }
}

/// Android's `WaveformEnvelopeBuilder`: control points of amplitude (0 … 1 of the output the device
/// reaches at that frequency) and frequency in Hz, each reached linearly over its duration, from
/// amplitude 0. Unlike a ``BasicEnvelope`` it need not end at 0. Its frequencies are the device's
/// own, so it becomes a pattern for one device: ``pattern(for:)``.
public struct WaveformEnvelope: Sendable, Hashable {
    /// One control point.
    public struct ControlPoint: Sendable, Hashable {
        /// Amplitude reached, 0 … 1.
        public var amplitude: Double
        /// Frequency reached, Hz (> 0).
        public var frequency: Double
        /// Time to reach them from the previous point, in seconds.
        public var duration: Double

        /// A control point.
        public init(amplitude: Double, frequency: Double, duration: Double) {
            self.amplitude = amplitude
            self.frequency = frequency
            self.duration = duration
        }
    }

    /// Where the frequency starts, Hz; the first point's when not set.
    public let initialFrequency: Double
    /// The control points, in order.
    public let controlPoints: [ControlPoint]

    /// An envelope, checked as Android's `build()` checks it.
    /// - Throws: ``EnvelopeError``.
    public init(initialFrequency: Double? = nil, controlPoints: [ControlPoint]) throws(EnvelopeError) {
        guard let first = controlPoints.first else { throw .empty }
        let positive = Double.leastNonzeroMagnitude...Double.greatestFiniteMagnitude
        if let initialFrequency { try Envelopes.check(initialFrequency, "frequency (Hz)", point: nil, in: positive, range: "> 0 Hz") }
        try Envelopes.checkDurations(controlPoints.map(\.duration))
        for (index, point) in controlPoints.enumerated() {
            try Envelopes.check(point.amplitude, "amplitude", point: index, in: 0...1)
            try Envelopes.check(point.frequency, "frequency (Hz)", point: index, in: positive, range: "> 0 Hz")
        }
        self.initialFrequency = initialFrequency ?? first.frequency
        self.controlPoints = controlPoints
    }

    /// How long it plays, in seconds.
    public var duration: Double { controlPoints.reduce(0) { $0 + $1.duration } }

    /// The envelope as a pattern for the device `profile` describes: each frequency becomes the
    /// sharpness that plays it there (the inverse of the profile's sharpness → frequency map over
    /// its usable band), and each amplitude an intensity in proportion to the output the device
    /// reaches at that frequency, its best frequency's being intensity 1 (``FrequencyProfile``):
    /// the shape Android's amplitude gives, within what intensity can ask for. Frequencies glide
    /// linearly in Hz between points, as on Android.
    /// - Throws: ``EnvelopeError/frequencyOutsideDevice(point:hertz:band:)`` (Android plays nothing
    ///   then), or ``EnvelopeError/noFrequencyControl(deviceID:)``.
    public func pattern(for profile: CalibrationProfile) throws(EnvelopeError) -> HapticPattern {
        guard case .frequency = profile.sharpness, let band = profile.channels.compactMap(\.usableBand).first(where: { $0.lowerBound > 0 }) else {
            throw .noFrequencyControl(deviceID: profile.deviceID ?? "the device")
        }
        func sharpness(_ hertz: Double, point: Int?) throws(EnvelopeError) -> Double {
            // A rounding's room at the band's edges: the device plays them.
            guard hertz >= band.lowerBound * (1 - 1e-9), hertz <= band.upperBound * (1 + 1e-9) else {
                throw .frequencyOutsideDevice(point: point, hertz: hertz, band: band)
            }
            guard band.upperBound > band.lowerBound else { return 0 }
            return max(0, min(1, log(hertz / band.lowerBound) / log(band.upperBound / band.lowerBound)))
        }
        let frequencyProfile = FrequencyProfile(profile: profile)
        let peak = frequencyProfile?.maximumOutputAcceleration ?? 0
        func intensity(_ amplitude: Double, at hertz: Double) -> Double {
            // Amplitude 1 is all the device gives at that frequency; intensity 1 asks for the
            // reference output. Without measured outputs the two are the same.
            guard let frequencyProfile, peak > 0 else { return amplitude }
            return min(1, amplitude * frequencyProfile.outputAcceleration(atFrequency: hertz) / peak)
        }
        for (index, point) in controlPoints.enumerated() { _ = try sharpness(point.frequency, point: index) }
        var sharpnesses = [try sharpness(initialFrequency, point: nil)]
        var intensities = [0.0]
        var durations: [Double] = []
        var frequency = initialFrequency, amplitude = 0.0
        for (index, point) in controlPoints.enumerated() {
            // Android glides linearly in Hz; sharpness is logarithmic in Hz, so a glide is cut into
            // pieces of at most 5 % in frequency, each a straight line in sharpness.
            let pieces = max(1, Int((abs(log(point.frequency / frequency)) / 0.05).rounded(.up)))
            for piece in 1...pieces {
                let fraction = Double(piece) / Double(pieces)
                let hertz = frequency + (point.frequency - frequency) * fraction
                sharpnesses.append(try sharpness(hertz, point: index))
                intensities.append(intensity(amplitude + (point.amplitude - amplitude) * fraction, at: hertz))
                durations.append(point.duration / Double(pieces))
            }
            frequency = point.frequency
            amplitude = point.amplitude
        }
        return Envelopes.pattern(intensities: intensities, sharpnesses: sharpnesses, durations: durations)
    }

    /// Android's builder, method for method: each call returns a new builder, so calls chain.
    public struct Builder: Sendable, Hashable {
        private var initialFrequency: Double?
        private var points: [ControlPoint] = []

        /// An empty builder.
        public init() {}

        /// Where the frequency starts, Hz; by default the first point's.
        public func setInitialFrequencyHz(_ hertz: Double) -> Builder {
            var copy = self
            copy.initialFrequency = hertz
            return copy
        }

        /// Adds a point reached `durationMillis` milliseconds after the previous one.
        public func addControlPoint(amplitude: Double, frequencyHz: Double, durationMillis: Int) -> Builder {
            var copy = self
            copy.points.append(ControlPoint(amplitude: amplitude, frequency: frequencyHz, duration: Double(durationMillis) / 1000))
            return copy
        }

        /// The envelope. Like Android's, nothing is checked until here.
        /// - Throws: ``EnvelopeError``.
        public func build() throws(EnvelopeError) -> WaveformEnvelope {
            try WaveformEnvelope(initialFrequency: initialFrequency, controlPoints: points)
        }
    }
}

/// What envelopes a device plays (Android's `VibratorEnvelopeEffectInfo`): this engine renders
/// envelopes itself, so the limits are the pattern format's, the same on every device.
public enum EnvelopeEffectInfo {
    /// Control points per curve before the pattern splits it (Android guarantees at least 16).
    public static let maximumSize = HapticParameterCurve.maximumControlPoints
    /// The shortest time between two control points the engine renders as a ramp, in seconds: a
    /// device's update interval (4 ms or more); shorter ones become steps.
    public static let minimumControlPointDuration = 0.004
    /// The longest time between two points, in seconds (Android guarantees at least 1 s).
    public static let maximumControlPointDuration = HapticPattern.maximumTime
    /// The longest envelope, in seconds.
    public static let maximumDuration = HapticPattern.maximumTime
}

/// The checks and the pattern both envelopes share.
enum Envelopes {
    static func check(_ value: Double, _ parameter: String, point: Int?, in range: ClosedRange<Double>, range text: String? = nil) throws(EnvelopeError) {
        guard value.isFinite, range.contains(value) else {
            throw .outOfRange(point: point, parameter: parameter, value: value, range: text ?? "\(range.lowerBound)…\(range.upperBound)")
        }
    }

    static func checkDurations(_ durations: [Double]) throws(EnvelopeError) {
        var total = 0.0
        for (index, duration) in durations.enumerated() {
            total += duration
            guard duration.isFinite, duration > 0, total <= HapticPattern.maximumTime else { throw .badDuration(point: index, milliseconds: duration * 1000) }
        }
    }

    /// Continuous events of intensity 1 and sharpness 0, at most 30 s each, covering the envelope,
    /// under curves holding `intensities` and `sharpnesses` at each point's end (the first at 0).
    static func pattern(intensities: [Double], sharpnesses: [Double], durations: [Double]) -> HapticPattern {
        var times = [0.0]
        for duration in durations { times.append(times[times.count - 1] + duration) }
        let total = times[times.count - 1]
        var events: [HapticEvent] = []
        var start = 0.0
        while start < total {
            let length = min(HapticEvent.maximumContinuousDuration, total - start)
            events.append(HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0)],
                relativeTime: start, duration: length))
            start += length
        }
        func curve(_ id: HapticDynamicParameter.ID, _ values: [Double]) -> [HapticParameterCurve] {
            HapticParameterCurve.split(HapticParameterCurve(
                parameterID: id, controlPoints: zip(times, values).map { HapticParameterCurve.ControlPoint(relativeTime: $0.0, value: $0.1) }))
        }
        do {
            return try HapticPattern(events: events, parameterCurves: curve(.hapticIntensityControl, intensities) + curve(.hapticSharpnessControl, sharpnesses))
        } catch {
            // Every value was checked: times within the pattern's bound, values within 0 … 1.
            preconditionFailure("an envelope's pattern is invalid: \(error)")
        }
    }
}
