/// What a backend does to a drive before it reaches the hardware, as its device description states
/// it (ABI 1.1 `haptics_device_info_v1`): the GPIO backend lifts amplitudes over a motor's dead zone
/// and limits them to the board's rated level, with a short kick above it at the start of a drive
/// and a cut after a continuous-drive limit.
///
/// Levels are fractions of the hardware's full scale (0…1, after the offset); amplitudes are what a
/// drive frame asks for (0…1). Calibration uses it to keep stimuli inside what the backend holds
/// steadily, so nothing the limiter changes is measured as if it were the motor's response.
public struct DriveEnvelope: Sendable, Hashable, Codable {
    /// A non-zero amplitude `a` reaches the hardware as the level `offset + a × (1 − offset)`, 0…1.
    public var amplitudeOffset: Double
    /// The highest level held steadily, 0…1.
    public var ratedLevel: Double
    /// The highest level allowed during the first ``kickDuration`` of a drive, ``ratedLevel``…1.
    public var kickLevel: Double
    /// How long a kick may last, in seconds (0: no kick).
    public var kickDuration: Double
    /// A drive longer than this is cut to zero, in seconds; `nil`: never cut.
    public var maxContinuousDuration: Double?
    /// How long the drive must be off to end a drive (re-arming the kick, lifting a cut), in seconds.
    public var restDuration: Double
    /// Whether the backend also takes frames of levels as they are (``DriveFrame/levels``, ABI 1.3
    /// `HAPTICS_DEVICE_ACCEPTS_LEVELS`): any level from 0, below ``amplitudeOffset`` too.
    public var acceptsLevels: Bool

    /// An envelope. Values are clamped into their ranges (levels 0…1, kick level ≥ rated level,
    /// durations ≥ 0; a non-finite value counts as 0, a non-finite or non-positive continuous
    /// limit as none).
    public init(
        amplitudeOffset: Double = 0, ratedLevel: Double = 1, kickLevel: Double? = nil, kickDuration: Double = 0,
        maxContinuousDuration: Double? = nil, restDuration: Double = 0, acceptsLevels: Bool = false
    ) {
        self.acceptsLevels = acceptsLevels
        func unit(_ value: Double) -> Double { value.isFinite ? min(max(value, 0), 1) : 0 }
        func duration(_ value: Double) -> Double { value.isFinite ? max(value, 0) : 0 }
        self.amplitudeOffset = unit(amplitudeOffset)
        self.ratedLevel = unit(ratedLevel)
        self.kickLevel = max(unit(kickLevel ?? ratedLevel), self.ratedLevel)
        self.kickDuration = duration(kickDuration)
        self.maxContinuousDuration = maxContinuousDuration.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        self.restDuration = duration(restDuration)
    }

    /// The level the hardware receives for `amplitude` (0…1) before any limit: 0 for 0, else
    /// lifted over the offset.
    public func level(forAmplitude amplitude: Double) -> Double {
        let clamped = amplitude.isFinite ? min(max(amplitude, 0), 1) : 0
        return clamped > 0 ? amplitudeOffset + clamped * (1 - amplitudeOffset) : 0
    }

    /// The level held once the kick window is over: ``level(forAmplitude:)`` capped at ``ratedLevel``.
    public func steadyLevel(forAmplitude amplitude: Double) -> Double {
        min(level(forAmplitude: amplitude), ratedLevel)
    }

    /// The largest amplitude whose level the backend holds steadily (its level is ``ratedLevel``);
    /// larger amplitudes all give the same steady output. 0 when even the smallest non-zero
    /// amplitude is lifted to the rated level or above.
    public var steadyAmplitudeLimit: Double {
        guard ratedLevel > amplitudeOffset else { return 0 }
        return min((ratedLevel - amplitudeOffset) / (1 - amplitudeOffset), 1)
    }

    /// The envelope as frames of levels meet it (``DriveFrame/levels``): no offset, the same limits.
    /// A profile measured in levels sees its device through this one.
    public var forLevels: DriveEnvelope {
        var envelope = self
        envelope.amplitudeOffset = 0
        return envelope
    }

    /// The amplitude that reaches the hardware as `level` (0…1), the inverse of
    /// ``level(forAmplitude:)``: 0 at or below the offset (which no non-zero amplitude goes under),
    /// 1 at full scale.
    public func amplitude(forLevel level: Double) -> Double {
        guard amplitudeOffset < 1, level.isFinite else { return 0 }
        return min(max((level - amplitudeOffset) / (1 - amplitudeOffset), 0), 1)
    }

    /// The envelope of a backend that passes amplitudes through unchanged.
    public static let passThrough = DriveEnvelope()
}
