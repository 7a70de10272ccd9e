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
    ///
    /// Only windows that saw most of their span count, so one reading at a trace's edge does not
    /// stand for a whole window: the power is binned by 1 ms, or by the spacing of the readings
    /// when the sensor reads slower (a 400 Hz sensor: 2.5 ms), so that "most of the span" means most
    /// of the readings the sensor could have given there. The spacing is the 90th percentile of the
    /// intervals, not their median: repetitions pooled by a reader that starts each capture at the
    /// same pace come in clumps, close together within one and a reading interval apart. Each
    /// reading sees the time halfway to its neighbours (at most a tenth of the window either side),
    /// so where a busy machine held the reader up in most pooled plays the readings left still see
    /// their stretch (measured as nothing before: 3 of 29 short events in an emulated guest), while a
    /// lone reading beside a long gap does not stand for a window.
    public func envelopePeak(window: Double = 0.04) -> Double {
        guard samples.count > 1, let last = times.last, let first = times.first, last > first else { return 0 }
        let spacing = readingSpacing
        let bin = spacing.isFinite ? min(max(0.001, spacing), window / 3) : 0.001
        let count = Int(((last - first) / bin).rounded(.down)) + 1
        var sums = [Double](repeating: 0, count: count), counts = [Double](repeating: 0, count: count)
        let power = sampleRate != nil ? Hilbert.envelopeSquared(samples) : samples.map { 2 * $0 * $0 }
        for (time, value) in zip(times, power) {
            let index = min(Int(((time - first) / bin).rounded(.down)), count - 1)
            sums[index] += value
            counts[index] += 1
        }
        // The bins the readings saw: each reading stands for the time halfway to its neighbours, up
        // to a tenth of the window on either side.
        var seen = [Bool](repeating: false, count: count)
        for index in times.indices {
            let before = index > 0 ? times[index] - times[index - 1] : 0
            let after = index + 1 < times.count ? times[index + 1] - times[index] : 0
            let from = times[index] - min(before / 2, window / 10) - first, to = times[index] + min(after / 2, window / 10) - first
            for slot in max(Int((from / bin).rounded(.down)), 0)...min(Int((to / bin).rounded(.down)), count - 1) { seen[slot] = true }
        }
        let width = max(Int((window / bin).rounded()), 3)
        let kernel = (0..<width).map { index -> Double in
            let s = sin(Double.pi * Double(index + 1) / Double(width + 1))
            return s * s
        }
        let whole = kernel.reduce(0, +)
        var best = 0.0
        for start in 0...max(count - width, 0) {
            var weighted = 0.0, weights = 0.0, coverage = 0.0
            for (offset, weight) in kernel.enumerated() where start + offset < count {
                if seen[start + offset] { coverage += weight }
                guard counts[start + offset] > 0 else { continue }
                weighted += weight * sums[start + offset] / counts[start + offset]
                weights += weight
            }
            // Only windows that saw most of their span count.
            if weights > 0, coverage > 0.5 * whole { best = max(best, weighted / weights) }
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

extension AccelerationTrace {
    /// The vibration's power at each sample, g² (twice the mean square is the squared amplitude):
    /// the squared magnitude for magnitude traces, the squared deviation from the mean for signed ones.
    func powers(from start: Double = -.infinity, to end: Double = .infinity) -> [(time: Double, power: Double)] {
        var selected: [(Double, Double)] = []
        var sum = 0.0
        for (time, value) in zip(times, samples) where time >= start && time < end {
            selected.append((time, value))
            sum += value
        }
        let mean = sampleRate == nil || selected.isEmpty ? 0 : sum / Double(selected.count)
        return selected.map { ($0.0, ($0.1 - mean) * ($0.1 - mean)) }
    }

    /// The vibration amplitude in a window centred on each of `instants`, g: √(2 × mean power) of
    /// the samples within `width`/2 of it (nil where fewer than `minimumSamples` fall).
    func smoothedAmplitude(at instants: [Double], width: Double, minimumSamples: Int = 4) -> [Double?] {
        let all = powers()
        var result: [Double?] = []
        var low = 0, high = 0, sum = 0.0
        for instant in instants {
            while high < all.count, all[high].time < instant + width / 2 {
                sum += all[high].power
                high += 1
            }
            while low < high, all[low].time < instant - width / 2 {
                sum -= all[low].power
                low += 1
            }
            let count = high - low
            result.append(count >= minimumSamples ? (2 * max(sum, 0) / Double(count)).squareRoot() : nil)
        }
        return result
    }

    /// The median interval between samples, seconds (how fast the sensor was read).
    var typicalInterval: Double {
        guard times.count > 2 else { return .infinity }
        let intervals = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        return intervals[intervals.count / 2]
    }

    /// The interval that 90 % of the intervals between samples are shorter than, seconds: how far
    /// apart readings are where the sensor was read, clumps of pooled repetitions included.
    var readingSpacing: Double {
        guard times.count > 2 else { return .infinity }
        let intervals = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        return intervals[min(intervals.count * 9 / 10, intervals.count - 1)]
    }

    /// The longest gap between samples within `start ..< end`, seconds.
    func longestGap(from start: Double, to end: Double) -> Double {
        var previous = start, longest = 0.0
        for time in times where time >= start && time < end {
            longest = max(longest, time - previous)
            previous = time
        }
        return max(longest, end - previous)
    }

    /// A window wide enough for a steady reading: 10 ms, or 10 sample intervals if the sensor is slower.
    var analysisWindow: Double { max(0.01, 10 * typicalInterval) }

    /// Where a drive that ran from 0 to `end` seconds became steady, and its steady amplitude.
    ///
    /// The final level is the amplitude over the last `window` seconds of the drive. The rise time
    /// is when the smoothed amplitude first reached 90 % of it (between the two checks around the
    /// crossing, interpolated); the steady part starts at twice the
    /// rise time (99 % of the way for a first-order rise, 99.5 % for an ERM's squared one) and runs
    /// to the drive's end. A trace that never gets there in time (the steady part would be shorter
    /// than `window`) is reported unsettled, measured over its last `window`.
    public func steadyPart(end: Double, window: Double, noise: Double) -> SteadyReading {
        let finalLevel = amplitude(from: end - window, to: end)
        let width = analysisWindow
        guard finalLevel > 3 * noise, end > width else {
            return SteadyReading(amplitude: finalLevel, start: max(end - window, 0), riseTime: nil, settled: true)
        }
        let step = width / 4
        let instants = stride(from: width / 2, through: end - width / 2, by: step).map { $0 }
        let smoothed = smoothedAmplitude(at: instants, width: width)
        guard let index = smoothed.firstIndex(where: { ($0 ?? 0) >= 0.9 * finalLevel }) else {
            return SteadyReading(amplitude: finalLevel, start: max(end - window, 0), riseTime: nil, settled: false)
        }
        let rise = Self.crossing(instants, smoothed, at: index, level: 0.9 * finalLevel)
        let start = 2 * rise
        guard end - start >= window else {
            return SteadyReading(amplitude: finalLevel, start: max(end - window, 0), riseTime: rise, settled: false)
        }
        return SteadyReading(amplitude: amplitude(from: start, to: end), start: start, riseTime: rise, settled: true)
    }

    /// Seconds after `end` until the smoothed amplitude fell under `fraction` of `level`; nil if it did not in the trace.
    func fallTime(after end: Double, level: Double, fraction: Double = 0.1) -> Double? {
        guard let last = times.last, last > end else { return nil }
        let width = analysisWindow
        let instants = stride(from: end, through: last - width / 2, by: width / 4).map { $0 }
        let smoothed = smoothedAmplitude(at: instants, width: width)
        guard let index = smoothed.firstIndex(where: { $0.map { $0 <= fraction * level } ?? false }) else { return nil }
        return max(Self.crossing(instants, smoothed, at: index, level: fraction * level) - end, 0)
    }

    /// When `values` (at `instants`) crossed `level`, between the instant before `index` and
    /// `index`, the first at or past it: interpolated along the line between the two, rather than
    /// rounded up to the next step of a quarter of the analysis window (2.5-3 ms at 800 Hz, a tenth
    /// of an LRA's 26 ms spin-up).
    static func crossing(_ instants: [Double], _ values: [Double?], at index: Int, level: Double) -> Double {
        guard index > 0, let before = values[index - 1], let after = values[index], after != before else { return instants[index] }
        let fraction = min(max((level - before) / (after - before), 0), 1)
        return instants[index - 1] + fraction * (instants[index] - instants[index - 1])
    }

    /// Traces of the same stimulus played several times, as one: their samples merged in time.
    /// Each repetition meets the vibration at other phases, so the merged trace measures a short
    /// event as well as one taken with a sensor that many times faster.
    static func pooled(_ traces: [AccelerationTrace]) -> AccelerationTrace {
        guard traces.count > 1 else { return traces.first ?? AccelerationTrace(times: [], magnitudes: []) }
        let merged = traces.flatMap { trace in trace.powers().map { (time: $0.time, value: $0.power.squareRoot()) } }.sorted { $0.time < $1.time }
        return AccelerationTrace(times: merged.map(\.time), magnitudes: merged.map(\.value))
    }
}

/// The steady part of a drive found in its trace.
public struct SteadyReading: Sendable, Hashable {
    /// The steady amplitude, g.
    public var amplitude: Double
    /// Seconds from the drive's start where the steady part begins.
    public var start: Double
    /// Seconds from the drive's start to 90 % of the final level (nil: at the noise, or never).
    public var riseTime: Double?
    /// Whether the drive reached its steady level with at least the window to spare.
    public var settled: Bool
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
