/// The safety rules between what the engine asks and what reaches an actuator, as a value driven
/// by explicit times (`CLOCK_MONOTONIC` nanoseconds), so every rule is exact in tests.
///
/// - A *drive* is a run of non-zero output; gaps shorter than ``ActuatorLimits/restNanoseconds``
///   do not end it (a train of taps is one drive).
/// - The level never exceeds ``ActuatorLimits/ratedLevel``, except during the first
///   ``ActuatorLimits/overdriveMaxNanoseconds`` of a drive, when it may reach
///   ``ActuatorLimits/overdriveLevel`` (the kick that starts a motor quickly). One kick per drive.
/// - A drive longer than ``ActuatorLimits/maxContinuousNanoseconds`` is cut: the output goes to 0
///   and stays there until the engine has asked for nothing for the rest time.
///
/// The owner calls ``limit(_:at:)`` for every new request and again at ``Decision/recheckAt``
/// (a deadline with no new request: a kick's end, the cut), with the last request.
public struct DriveLimiter: Sendable, Hashable {
    /// What the actuator tolerates.
    public let limits: ActuatorLimits
    /// When the current drive started, nil while none runs.
    public private(set) var driveStart: UInt64?
    /// Since when the request has been 0 (nil while driving).
    public private(set) var zeroSince: UInt64?
    /// Whether the current drive was cut at the continuous-drive limit.
    public private(set) var isCut = false

    /// A limiter with nothing driven yet.
    public init(limits: ActuatorLimits) {
        self.limits = limits
    }

    /// The outcome of one request.
    public struct Decision: Sendable, Hashable {
        /// The level to output, 0…1 of full scale.
        public var level: Double
        /// Whether the level is above the rated level (a kick).
        public var isKick: Bool
        /// Whether the output is held at 0 by the continuous-drive cut.
        public var isCut: Bool
        /// When the level must be recomputed even without a new request (`CLOCK_MONOTONIC` ns): the
        /// end of the kick or the cut. Nil when nothing will change by itself.
        public var recheckAt: UInt64?

        /// A decision.
        public init(level: Double, isKick: Bool, isCut: Bool, recheckAt: UInt64?) {
            self.level = level
            self.isKick = isKick
            self.isCut = isCut
            self.recheckAt = recheckAt
        }
    }

    /// Applies the rules to `requested` (0…1 of full scale) at `now`.
    public mutating func limit(_ requested: Double, at now: UInt64) -> Decision {
        let requested = requested.isFinite ? min(max(requested, 0), 1) : 0
        guard requested > 0 else {
            if zeroSince == nil { zeroSince = now }
            return Decision(level: 0, isKick: false, isCut: isCut, recheckAt: nil)
        }
        if let since = zeroSince {
            if driveStart == nil || now &- since >= limits.restNanoseconds {
                driveStart = now
                isCut = false
            }
            zeroSince = nil
        } else if driveStart == nil {
            driveStart = now
            isCut = false
        }
        let start = driveStart!
        let elapsed = now &- start
        if isCut || elapsed >= limits.maxContinuousNanoseconds {
            isCut = true
            return Decision(level: 0, isKick: false, isCut: true, recheckAt: nil)
        }
        let kickEnd = start &+ limits.overdriveMaxNanoseconds
        let cap = now < kickEnd ? limits.overdriveLevel : limits.ratedLevel
        let level = min(requested, cap)
        let isKick = level > limits.ratedLevel
        let cut = start &+ limits.maxContinuousNanoseconds
        return Decision(level: level, isKick: isKick, isCut: false, recheckAt: isKick ? min(kickEnd, cut) : cut)
    }
}

extension ActuatorLimits {
    /// What a backend logs when a drive is cut at ``maxContinuousNanoseconds`` (once per cut).
    public func cutWarning(deviceID: String) -> String {
        "\(deviceID): continuous drive cut at \(Self.milliseconds(maxContinuousNanoseconds)) ms (limits.max_continuous_ms); "
            + "output stays off until the drive stops for \(Self.milliseconds(restNanoseconds)) ms"
    }

    /// `12.5` or `200`: nanoseconds as milliseconds, to a tenth.
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let value = Double(nanoseconds) / 1e6
        return value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
    }
}
