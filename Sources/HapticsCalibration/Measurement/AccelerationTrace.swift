#if canImport(Glibc)
import Glibc
#endif

/// Vibration measured while a stimulus played: acceleration samples in g with their times in
/// seconds from the stimulus's start. Gravity and any other constant offset are removed by the
/// source. Samples are either one signed axis sampled evenly (a simulation), or magnitudes of the
/// vibration vector sampled when the sensor could be read (three accelerometer axes through sysfs).
public struct AccelerationTrace: Sendable, Hashable {
    /// Seconds from the stimulus's start, increasing.
    public var times: [Double]
    /// Acceleration, g.
    public var samples: [Double]
    /// The even sample rate of a signed trace, Hz; nil for magnitudes at uneven times.
    public var sampleRate: Double?

    /// A trace of vibration magnitudes at the given times (uneven sampling allowed).
    public init(times: [Double], magnitudes: [Double]) {
        precondition(times.count == magnitudes.count, "one time per sample")
        self.times = times
        self.samples = magnitudes
        sampleRate = nil
    }

    /// A signed trace sampled evenly at `sampleRate` Hz from time 0.
    public init(samples: [Double], sampleRate: Double) {
        self.samples = samples
        self.sampleRate = sampleRate
        times = samples.indices.map { Double($0) / sampleRate }
    }

    /// The vibration amplitude between `start` and `end` seconds: √2 × the RMS (about the mean, for a signed trace), g.
    ///
    /// For a sinusoid this is its peak; for two motors at different frequencies it is
    /// √(A₁² + A₂²), the measure the renderer's power-preserving motor mix keeps constant. Samples
    /// need not be even or phase-locked (an accelerometer read through sysfs is neither).
    public func amplitude(from start: Double, to end: Double) -> Double {
        var sum = 0.0, sumSquares = 0.0, count = 0.0
        for (time, value) in zip(times, samples) where time >= start && time < end {
            sum += value
            sumSquares += value * value
            count += 1
        }
        guard count > 1 else { return 0 }
        // Magnitudes are already deviations from the rest value; a signed trace is centred here.
        let mean = sampleRate == nil ? 0 : sum / count
        return (2 * max(sumSquares / count - mean * mean, 0)).squareRoot()
    }

    /// The peak of the vibration envelope, g: the largest Hann-weighted mean of the instantaneous
    /// power over any `window` seconds (40 ms by default, about the skin's temporal integration),
    /// as an amplitude.
    ///
    /// For a signed, evenly sampled trace the instantaneous power is the squared magnitude of the
    /// analytic signal (the trace plus i × its Hilbert transform), so a sinusoid of any frequency
    /// (a 175 Hz LRA, a 17 Hz slow motor) measures exactly its amplitude, and two motors' sum
    /// measures √(A₁² + A₂²) once the window has averaged their beats: the measure the renderer's
    /// power-preserving motor mix keeps constant. For magnitude traces sampled unevenly, twice the
    /// mean squared magnitude stands in for the power.
    public func envelopePeak(window: Double = 0.04) -> Double {
        guard samples.count > 1, let last = times.last, let first = times.first, last > first else { return 0 }
        // Power in 1 ms bins.
        let bin = 0.001
        let count = Int(((last - first) / bin).rounded(.down)) + 1
        var sums = [Double](repeating: 0, count: count), counts = [Double](repeating: 0, count: count)
        let power = sampleRate != nil ? Hilbert.envelopeSquared(samples) : samples.map { 2 * $0 * $0 }
        for (time, value) in zip(times, power) {
            let index = min(Int(((time - first) / bin).rounded(.down)), count - 1)
            sums[index] += value
            counts[index] += 1
        }
        let width = max(Int((window / bin).rounded()), 3)
        let kernel = (0..<width).map { index -> Double in
            let s = sin(Double.pi * Double(index + 1) / Double(width + 1))
            return s * s
        }
        var best = 0.0
        for start in 0...max(count - width, 0) {
            var weighted = 0.0, weights = 0.0
            for (offset, weight) in kernel.enumerated() where start + offset < count && counts[start + offset] > 0 {
                weighted += weight * sums[start + offset] / counts[start + offset]
                weights += weight
            }
            // Only windows that saw most of their span count (an accelerometer may skip bins).
            if weights > 0.5 * kernel.reduce(0, +) { best = max(best, weighted / weights) }
        }
        return best.squareRoot()
    }

    /// The dominant vibration frequency between `start` and `end`, Hz, from zero crossings of a
    /// signed trace (nil for magnitude traces or too few crossings).
    public func dominantFrequency(from start: Double, to end: Double) -> Double? {
        guard sampleRate != nil else { return nil }
        var crossings: [Double] = []
        var previous: (time: Double, value: Double)?
        for (time, value) in zip(times, samples) where time >= start && time < end {
            if let previous, (previous.value < 0) != (value < 0), value != previous.value {
                crossings.append(previous.time + (time - previous.time) * previous.value / (previous.value - value))
            }
            previous = (time, value)
        }
        guard crossings.count >= 4, let first = crossings.first, let last = crossings.last, last > first else { return nil }
        return Double(crossings.count - 1) / (2 * (last - first))
    }
}

/// Least-squares line through points, with its coefficient of determination.
public struct LinearFit: Sendable, Hashable {
    /// Slope.
    public var slope: Double
    /// Intercept.
    public var intercept: Double
    /// R², 0…1 (1: every point on the line).
    public var rSquared: Double

    /// The least-squares line through `points` (at least two distinct x).
    public init(_ points: [(x: Double, y: Double)]) {
        let n = Double(points.count)
        let meanX = points.map(\.x).reduce(0, +) / max(n, 1)
        let meanY = points.map(\.y).reduce(0, +) / max(n, 1)
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        for point in points {
            sxx += (point.x - meanX) * (point.x - meanX)
            sxy += (point.x - meanX) * (point.y - meanY)
            syy += (point.y - meanY) * (point.y - meanY)
        }
        slope = sxx > 0 ? sxy / sxx : 0
        intercept = meanY - slope * meanX
        var residual = 0.0
        for point in points {
            let error = point.y - (slope * point.x + intercept)
            residual += error * error
        }
        rSquared = syy > 0 ? max(0, 1 - residual / syy) : (residual == 0 ? 1 : 0)
    }
}

/// The analytic-signal envelope through a radix-2 FFT.
enum Hilbert {
    /// |x + i·H(x)|² for every sample of `signal` (zero-padded to a power of two).
    static func envelopeSquared(_ signal: [Double]) -> [Double] {
        var size = 1
        while size < signal.count * 2 { size <<= 1 }
        var real = signal + [Double](repeating: 0, count: size - signal.count)
        var imaginary = [Double](repeating: 0, count: size)
        transform(&real, &imaginary, inverse: false)
        // Keep DC and Nyquist, double the positive frequencies, drop the negative ones.
        for index in 1..<(size / 2) {
            real[index] *= 2
            imaginary[index] *= 2
        }
        for index in (size / 2 + 1)..<size {
            real[index] = 0
            imaginary[index] = 0
        }
        transform(&real, &imaginary, inverse: true)
        return (0..<signal.count).map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] }
    }

    /// In-place iterative radix-2 FFT; the inverse is scaled by 1/n.
    static func transform(_ real: inout [Double], _ imaginary: inout [Double], inverse: Bool) {
        let count = real.count
        var j = 0
        for i in 1..<count {
            var bit = count >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                real.swapAt(i, j)
                imaginary.swapAt(i, j)
            }
        }
        var length = 2
        while length <= count {
            let angle = (inverse ? 2 : -2) * Double.pi / Double(length)
            let stepReal = cos(angle), stepImaginary = sin(angle)
            var start = 0
            while start < count {
                var wReal = 1.0, wImaginary = 0.0
                for offset in 0..<(length / 2) {
                    let a = start + offset, b = a + length / 2
                    let tReal = real[b] * wReal - imaginary[b] * wImaginary
                    let tImaginary = real[b] * wImaginary + imaginary[b] * wReal
                    real[b] = real[a] - tReal
                    imaginary[b] = imaginary[a] - tImaginary
                    real[a] += tReal
                    imaginary[a] += tImaginary
                    let nextReal = wReal * stepReal - wImaginary * stepImaginary
                    wImaginary = wReal * stepImaginary + wImaginary * stepReal
                    wReal = nextReal
                }
                start += length
            }
            length <<= 1
        }
        if inverse {
            let scale = 1 / Double(count)
            for index in 0..<count {
                real[index] *= scale
                imaginary[index] *= scale
            }
        }
    }
}
