/// A PWM output as the hardware makes it: high for `duty` of every `period` counted from `origin`,
/// low when disabled. Times are seconds on the bench's clock.
public struct PWMWaveform: Sendable, Hashable {
    /// The period, seconds (0: never configured).
    public var period: Double
    /// The fraction (0…1) of each period the output is high, polarity already applied.
    public var duty: Double
    /// Whether the output runs; a disabled output is low.
    public var enabled: Bool
    /// When the current run of periods started, seconds.
    public var origin: Double

    /// A waveform.
    public init(period: Double, duty: Double, enabled: Bool, origin: Double) {
        self.period = period
        self.duty = min(max(duty, 0), 1)
        self.enabled = enabled
        self.origin = origin
    }

    /// A low output.
    public static let low = PWMWaveform(period: 0, duty: 0, enabled: false, origin: 0)

    /// Whether the output is high at `time`, and the time its level next changes (∞ if never;
    /// always later than `time`, so a caller stepping edge to edge always moves on).
    public func level(at time: Double) -> (high: Bool, until: Double) {
        guard enabled, period > 0, duty > 0 else { return (false, .infinity) }
        guard duty < 1 else { return (true, .infinity) }
        var start = origin + ((time - origin) / period).rounded(.down) * period
        // Rounding may put the period's start a hair after `time`, or a whole period behind.
        if start > time { start -= period }
        if start + period <= time { start += period }
        let edge = start + duty * period
        if time < edge { return (true, edge) }
        let next = start + period
        return (false, next > time ? next : time.nextUp)
    }
}

/// A physical actuator on the bench: its state advances under the drive its circuit receives, and
/// it shakes the housing the accelerometer is taped to.
///
/// Implementations are written from the physics of the part (a DC motor with friction and an
/// eccentric mass, a magnet on a spring in a coil), not from the response the calibration fits:
/// the calibration has to find out what they do.
public protocol BenchActuator: Sendable {
    /// Advances from `start` to `end` (seconds on the bench's clock) with `drive` on the circuit's
    /// input (the PWM pin the board file names).
    mutating func advance(from start: Double, to end: Double, drive: PWMWaveform)
    /// The acceleration of the housing now, in g, in the sensor's axes (gravity not included).
    var acceleration: SIMD3<Double> { get }
}

/// Standard gravity, m/s² per g.
let standardGravity = 9.80665
