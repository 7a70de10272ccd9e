#if canImport(Glibc)
import Glibc
#endif

/// The amplitude response fitted to (drive, output) points:
/// `output = fullScale × ((drive − deadZone) / (1 − deadZone))^exponent` above the dead zone, 0 below.
public struct AmplitudeFit: Sendable, Hashable {
    /// Drive (0…1) below which there is no output.
    public var deadZone: Double
    /// Exponent of the curve above the dead zone.
    public var exponent: Double
    /// Output at full drive, in the measurement's unit.
    public var fullScale: Double
    /// R² of the fit on the measured outputs, 0…1.
    public var rSquared: Double

    /// The fitted output at `drive` (without noise).
    public func output(atDrive drive: Double) -> Double {
        drive > deadZone ? fullScale * pow((drive - deadZone) / (1 - deadZone), exponent) : 0
    }
}

/// A resonance fitted to a frequency sweep: the steady acceleration of a force-driven resonator,
/// `A(f) = peak × r² / (Q × √((1 − r²)² + (r/Q)²))` with `r = f/f₀`, which is `peak` at `f₀`.
public struct ResonanceFit: Sendable, Hashable {
    /// Resonant frequency f₀, Hz.
    public var resonantFrequency: Double
    /// Quality factor Q (f₀ over the half-power bandwidth).
    public var qFactor: Double
    /// Output at f₀, in the measurement's unit.
    public var peak: Double
    /// R² of the fit on the measured outputs, 0…1.
    public var rSquared: Double

    /// The fitted output at `frequency` Hz.
    public func output(at frequency: Double) -> Double {
        peak * ResponseFitting.resonance(frequency / resonantFrequency, q: qFactor)
    }
}

/// Least-squares fits of measured responses. Grid searches refined around their best point: no
/// starting guesses to get wrong, and deterministic results.
public enum ResponseFitting {
    /// The resonator's relative acceleration response at `r = f/f₀` (1 at r = 1).
    static func resonance(_ r: Double, q: Double) -> Double {
        let detune = 1 - r * r
        return r * r / (q * (detune * detune + (r / q) * (r / q)).squareRoot())
    }

    /// Fits dead zone, exponent and full scale to `points` (drive, output), knowing that every
    /// output includes `noiseFloor` (the output measured at drive 0) added in power.
    ///
    /// Residuals are compared on a log scale, so the small outputs just above the dead zone,
    /// which pin it down, count as much as the large ones. Outputs within the noise floor
    /// constrain the fit only as "no more than noise".
    /// - Parameter deadZone: a dead zone known already (a person's detection threshold); nil to fit it.
    public static func fitAmplitude(_ points: [ResponsePoint], noiseFloor: Double, deadZone knownDeadZone: Double? = nil) -> AmplitudeFit? {
        let largest = points.map(\.output).max() ?? 0
        guard largest > 0, points.count >= 3 else { return nil }
        let floor = max(noiseFloor, largest * 1e-4)
        let logged = points.map { (drive: $0.input, log: log(max($0.output, floor))) }
        let signal = points.filter { $0.output > 3 * floor }
        guard signal.count >= 2 else { return nil }

        func evaluate(deadZone: Double, exponent: Double) -> (cost: Double, fullScale: Double)? {
            // log(fullScale): the mean offset over points clearly above the noise.
            var offset = 0.0, counted = 0.0
            for point in signal where point.input > deadZone {
                offset += log(point.output) - exponent * log((point.input - deadZone) / (1 - deadZone))
                counted += 1
            }
            guard counted >= 2 else { return nil }
            let fullScale = exp(offset / counted)
            var cost = 0.0
            for point in logged {
                let model = point.drive > deadZone ? fullScale * pow((point.drive - deadZone) / (1 - deadZone), exponent) : 0
                let predicted = log((model * model + floor * floor).squareRoot())
                cost += (predicted - point.log) * (predicted - point.log)
            }
            return (cost, fullScale)
        }

        var best: (cost: Double, deadZone: Double, exponent: Double, fullScale: Double)?
        func search(deadZones: [Double], exponents: [Double]) {
            for deadZone in deadZones where deadZone >= 0 && deadZone < 0.9 {
                for exponent in exponents where exponent > 0.1 {
                    guard let result = evaluate(deadZone: deadZone, exponent: exponent) else { continue }
                    if best == nil || result.cost < best!.cost { best = (result.cost, deadZone, exponent, result.fullScale) }
                }
            }
        }
        let maximumDeadZone = min((signal.map(\.input).min() ?? 0.6), 0.85)
        let deadZones = knownDeadZone.map { [$0] } ?? stride(from: 0, through: maximumDeadZone, by: 0.005).map { $0 }
        search(deadZones: deadZones, exponents: stride(from: 0.3, through: 4.0, by: 0.02).map { $0 })
        guard let coarse = best else { return nil }
        search(
            deadZones: knownDeadZone.map { [$0] } ?? stride(from: coarse.deadZone - 0.006, through: coarse.deadZone + 0.006, by: 0.0005).map { $0 },
            exponents: stride(from: coarse.exponent - 0.03, through: coarse.exponent + 0.03, by: 0.002).map { $0 })
        let fit = best!
        let result = AmplitudeFit(deadZone: fit.deadZone, exponent: fit.exponent, fullScale: fit.fullScale, rSquared: 0)
        let predicted = points.map { point -> Double in
            let value = result.output(atDrive: point.input)
            return (value * value + noiseFloor * noiseFloor).squareRoot()
        }
        return AmplitudeFit(
            deadZone: fit.deadZone, exponent: fit.exponent, fullScale: fit.fullScale, rSquared: rSquared(points.map(\.output), predicted))
    }

    /// Fits f₀, Q and the peak to a frequency sweep (frequency in Hz, output), with `noiseFloor`
    /// added in power. Returns nil when the sweep shows no peak inside its range.
    public static func fitResonance(_ sweep: [ResponsePoint], noiseFloor: Double) -> ResonanceFit? {
        let points = sweep.sorted { $0.input < $1.input }
        guard points.count >= 5, let top = points.indices.max(by: { points[$0].output < points[$1].output }) else { return nil }
        // A peak at either end means the resonance is outside the sweep: nothing to fit.
        guard top > 0, top < points.count - 1, points[top].output > 3 * noiseFloor else { return nil }
        let floor = noiseFloor

        func evaluate(f0: Double, q: Double) -> (cost: Double, peak: Double) {
            var numerator = 0.0, denominator = 0.0
            let shapes = points.map { resonance($0.input / f0, q: q) }
            for (point, shape) in zip(points, shapes) {
                numerator += max(point.output * point.output - floor * floor, 0) * shape * shape
                denominator += shape * shape * shape * shape
            }
            let peak = denominator > 0 ? (numerator / denominator).squareRoot() : 0
            var cost = 0.0
            for (point, shape) in zip(points, shapes) {
                let model = peak * shape
                let error = (model * model + floor * floor).squareRoot() - point.output
                cost += error * error
            }
            return (cost, peak)
        }

        var best: (cost: Double, f0: Double, q: Double, peak: Double)?
        func search(frequencies: [Double], qs: [Double]) {
            for f0 in frequencies where f0 > 0 {
                for q in qs where q >= 0.5 {
                    let result = evaluate(f0: f0, q: q)
                    if best == nil || result.cost < best!.cost { best = (result.cost, f0, q, result.peak) }
                }
            }
        }
        // f₀ lies near the highest point (an acceleration response peaks slightly above it).
        let low = points[max(top - 3, 0)].input, high = points[min(top + 3, points.count - 1)].input
        let qs = (0...60).map { 0.5 * pow(200, Double($0) / 60) }
        search(frequencies: stride(from: low, through: high, by: max((high - low) / 120, 0.01)).map { $0 }, qs: qs)
        guard let coarse = best else { return nil }
        search(
            frequencies: stride(from: coarse.f0 - (high - low) / 120, through: coarse.f0 + (high - low) / 120, by: 0.01).map { $0 },
            qs: (0...40).map { coarse.q * pow(1.2, Double($0 - 20) / 20) })
        let fit = best!
        let result = ResonanceFit(resonantFrequency: fit.f0, qFactor: fit.q, peak: fit.peak, rSquared: 0)
        let predicted = points.map { point -> Double in
            let value = result.output(at: point.input)
            return (value * value + floor * floor).squareRoot()
        }
        return ResonanceFit(resonantFrequency: fit.f0, qFactor: fit.q, peak: fit.peak, rSquared: rSquared(points.map(\.output), predicted))
    }

    /// R² of `predicted` against `measured`.
    static func rSquared(_ measured: [Double], _ predicted: [Double]) -> Double {
        let mean = measured.reduce(0, +) / Double(max(measured.count, 1))
        var total = 0.0, residual = 0.0
        for (value, model) in zip(measured, predicted) {
            total += (value - mean) * (value - mean)
            residual += (value - model) * (value - model)
        }
        return total > 0 ? max(0, 1 - residual / total) : 0
    }

    /// The frequency-to-output map: each sweep point's output (noise removed in power) relative to
    /// the best one, 0…1, as Android's frequency-to-output-acceleration map.
    public static func frequencyMap(_ sweep: [ResponsePoint], noiseFloor: Double) -> [ResponsePoint] {
        let cleaned = sweep.sorted { $0.input < $1.input }.map {
            ResponsePoint(input: $0.input, output: max($0.output * $0.output - noiseFloor * noiseFloor, 0).squareRoot())
        }
        guard let best = cleaned.map(\.output).max(), best > 0 else { return [] }
        return cleaned.map { ResponsePoint(input: $0.input, output: min($0.output / best, 1)) }
    }

    /// The contiguous frequency range around `centre` (by default the map's best point) where
    /// `accept` holds, with edges interpolated between points where `score` (≥ 0 inside) crosses 0;
    /// nil when not even the centre is accepted.
    static func band(
        around map: [ResponsePoint], centre: Int? = nil, where accept: (ResponsePoint) -> Bool, score: (ResponsePoint) -> Double
    ) -> ClosedRange<Double>? {
        guard let best = centre ?? map.indices.max(by: { map[$0].output < map[$1].output }), map.indices.contains(best), accept(map[best]) else {
            return nil
        }
        var low = map[best].input, high = map[best].input
        var index = best
        while index > 0 {
            if accept(map[index - 1]) {
                index -= 1
                low = map[index].input
            } else {
                low = crossing(inside: map[index], outside: map[index - 1], score: score)
                break
            }
        }
        index = best
        while index < map.count - 1 {
            if accept(map[index + 1]) {
                index += 1
                high = map[index].input
            } else {
                high = crossing(inside: map[index], outside: map[index + 1], score: score)
                break
            }
        }
        return low...max(high, low)
    }

    /// Where `score` crosses 0 between an accepted and a refused point (score ≥ 0 inside), linearly.
    private static func crossing(inside: ResponsePoint, outside: ResponsePoint, score: (ResponsePoint) -> Double) -> Double {
        let a = score(inside), b = score(outside)
        guard a > b else { return inside.input }
        let fraction = a / (a - b)
        return inside.input + (outside.input - inside.input) * min(max(fraction, 0), 1)
    }
}
