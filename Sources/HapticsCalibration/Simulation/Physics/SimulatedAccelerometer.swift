/// An ADXL345-class accelerometer as a maker tapes it to an actuator and reads it through IIO
/// sysfs: conversions at its output data rate, each read by the host at an uneven moment,
/// with noise, quantisation and a limited range.
///
/// Figures (Analog Devices ADXL345 data sheet, rev. E): full-resolution scale 3.9 mg/LSB (the
/// kernel's `in_accel_scale` 0.038300 m/s² per count); noise at 400 Hz data rate typically under
/// 1.5 LSB rms on x and y and 2.2 LSB rms on z, growing by about √2 per doubling of the data rate;
/// ranges ±2, ±4, ±8, ±16 g; a bandwidth of half the output data rate (Table 7). The bench
/// (``SimulatedBench``) makes each conversion the mean acceleration over the time since the one
/// before, the simplest filter with that bandwidth (a mean over one period is 3 dB down at 0.44 ×
/// the rate): a vibration well inside the band reads as it is (175 Hz at 800 Hz: 8 % less), while
/// the microsecond force pulses of an H-bridge drive do not reach the readings. Without it, a
/// reading that met one of them read several times the vibration around it, and the weak tones
/// of an LRA scattered by 7–11 % from play to play instead of 1.3–1.9 %.
public struct SimulatedAccelerometer: Sendable, Hashable {
    /// Conversions per second, Hz (`in_accel_sampling_frequency`).
    public var outputDataRate: Double
    /// How uneven the conversions reach the host: each one lands up to this fraction of a period
    /// early or late (the I²C transfer and the reader's scheduling).
    public var timingJitter: Double
    /// The chance that a conversion is never seen (overwritten before it was read).
    public var dropProbability: Double
    /// Noise per axis, g rms.
    public var noise: SIMD3<Double>
    /// g per count.
    public var resolution: Double
    /// The largest magnitude each axis reports, g (readings clip there).
    public var range: Double
    /// Gravity in the sensor's axes, g.
    public var gravity: SIMD3<Double>

    /// A sensor.
    public init(
        outputDataRate: Double, timingJitter: Double = 0.3, dropProbability: Double = 0.02, noise: SIMD3<Double>, resolution: Double = 0.0383 / 9.80665,
        range: Double = 16, gravity: SIMD3<Double> = SIMD3(0, 0, 1)
    ) {
        self.outputDataRate = outputDataRate
        self.timingJitter = timingJitter
        self.dropProbability = dropProbability
        self.noise = noise
        self.resolution = resolution
        self.range = range
        self.gravity = gravity
    }

    /// An ADXL345 in full resolution at `outputDataRate` Hz (100…3200), with the data sheet's noise.
    public static func adxl345(outputDataRate: Double, range: Double = 16) -> SimulatedAccelerometer {
        // 1.5 / 2.2 LSB rms at 400 Hz, ×√2 per doubling above; constant below 100 Hz.
        let factor = max(outputDataRate, 100) / 400
        let lsb = 0.0383 / 9.80665
        return SimulatedAccelerometer(
            outputDataRate: outputDataRate, noise: SIMD3(1.5, 1.5, 2.2) * factor.squareRoot() * lsb, resolution: lsb, range: range)
    }

    /// The IIO scale, m/s² per count.
    public var scale: Double { resolution * 9.80665 }

    /// The raw counts the sensor reports for `acceleration` (g, gravity not included).
    public func counts(for acceleration: SIMD3<Double>, random: inout SeededRandom) -> SIMD3<Int> {
        let total = acceleration + gravity + SIMD3(noise.x * random.gaussian(), noise.y * random.gaussian(), noise.z * random.gaussian())
        let limit = (range / resolution).rounded(.down)
        func count(_ value: Double) -> Int { Int(min(max((value / resolution).rounded(), -limit), limit)) }
        return SIMD3(count(total.x), count(total.y), count(total.z))
    }

    /// The delay from one conversion reaching the host to the next, seconds.
    public func nextInterval(random: inout SeededRandom) -> Double {
        let period = 1 / outputDataRate
        return period * (1 + timingJitter * (2 * random.uniform() - 1))
    }
}
