#if canImport(Glibc)
import Glibc
#endif

/// The amplitude response fitted to (drive, output) points.
///
/// While the actuator runs, the output at drive `d` is
/// `sat(fullScale × ((d − deadZone) / (1 − deadZone))^exponent)` with
/// `sat(x) = x / √(1 + (x/saturation)²)` (no saturation: `sat(x) = x`). The dead zone is where
/// the curve starts: negative when the smallest drive already gives output (a backend that lifts
/// every drive over its board's dead zone). From rest the actuator starts only at ``startDrive``;
/// once running it keeps going down to ``stopDrive`` (stiction: a start threshold with hysteresis).
public struct AmplitudeFit: Sendable, Hashable {
    /// Where the curve starts (drive, may be negative).
    public var deadZone: Double
    /// Exponent of the curve (2 for an ERM whose speed follows the drive: output grows with its square).
    public var exponent: Double
    /// Output of the unsaturated curve at full drive, in the measurement's unit.
    public var fullScale: Double
    /// R² of the fit on the measured outputs, 0…1.
    public var rSquared: Double
    /// The output the curve levels off at; nil when it does not within the measurements.
    public var saturation: Double?
    /// The smallest drive that starts the actuator from rest; nil when every drive measured does.
    public var startDrive: Double?
    /// The smallest drive that keeps a running actuator going: the lowest it was seen turning at
    /// below the start, else where its running curve starts, never above ``startDrive``; nil without a start threshold.
    public var stopDrive: Double?
    /// Measured minus fitted output at each point the curve was fitted to, in the measurement's unit.
    public var residuals: [ResponsePoint] = []
    /// The noise the fitted outputs were compared with (added in power), in the measurement's unit.
    public var noiseFloor = 0.0

    /// A fit.
    public init(
        deadZone: Double, exponent: Double, fullScale: Double, rSquared: Double, saturation: Double? = nil, startDrive: Double? = nil,
        stopDrive: Double? = nil, residuals: [ResponsePoint] = []
    ) {
        self.deadZone = deadZone
        self.exponent = exponent
        self.fullScale = fullScale
        self.rSquared = rSquared
        self.saturation = saturation
        self.startDrive = startDrive
        self.stopDrive = stopDrive
        self.residuals = residuals
    }

    /// The fitted output at `drive` while running (without noise).
    public func output(atDrive drive: Double) -> Double {
        guard drive > 0, drive > deadZone else { return 0 }
        let raw = fullScale * pow((drive - deadZone) / (1 - deadZone), exponent)
        guard let saturation else { return raw }
        return raw / (1 + (raw / saturation) * (raw / saturation)).squareRoot()
    }

    /// The root-mean-square of the residuals relative to the fitted outputs with the noise
    /// (0.02 = 2 %): a point just over where the curve starts is measured as noise, not as nothing.
    public var relativeResidualRMS: Double {
        let relative = residuals.compactMap { point -> Double? in
            let value = output(atDrive: point.input)
            let fitted = (value * value + noiseFloor * noiseFloor).squareRoot()
            return fitted > 0 ? point.output / fitted : nil
        }
        guard !relative.isEmpty else { return 0 }
        return (relative.map { $0 * $0 }.reduce(0, +) / Double(relative.count)).squareRoot()
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

    /// Fits the running curve (where it starts, its exponent, full scale and saturation), the
    /// start threshold from rest and the stop threshold while running to an amplitude sweep made
    /// from rest (`fromRest`) and, where some drives did not start the actuator, the same drives
    /// reached while it ran (`running`). Every output includes `noiseFloor` (the output at drive 0)
    /// added in power.
    ///
    /// Each way of splitting the low drives into "did not move" and "moved" is tried (only drives
    /// whose output is within 3× the noise may be "did not move"); for each, the curve is fitted
    /// to the drives that moved, on a log scale (so the small outputs near the start count as much
    /// as the large ones), by a grid search refined around its best point, while the others are
    /// predicted as noise. With no running measurement, the curve must predict the drives that did not
    /// move it as well (under its dead zone, or within the noise): nothing then shows output there,
    /// and a curve free to pass over them started well under the truth when noise bent the moving
    /// points (an evdev LRA read nothing at 0.1 and was fitted a dead zone of 0.024, truth 0.1).
    /// The split and curve with the smallest total misfit win. A saturation is
    /// kept only if it cuts the misfit by 30 %: noise alone should not bend the curve.
    /// - Parameter lowestStart: the lowest the curve may start (drive): below 0 only when the backend
    ///   lifts drives over an offset `o` (a motor may then turn at any drive: down to −o/(1 − o),
    ///   where it would turn with no voltage at all); 0 for a backend that passes drives through, whose
    ///   actuator cannot give output at drive 0.
    public static func fitResponse(fromRest: [ResponsePoint], running: [ResponsePoint] = [], noiseFloor: Double, lowestStart: Double = 0)
        -> AmplitudeFit?
    {
        let lowestStart = min(max(lowestStart, -1), 0)
        let up = fromRest.filter { $0.input > 0 }.sorted { $0.input < $1.input }
        let down = running.filter { $0.input > 0 }.sorted { $0.input < $1.input }
        let largest = (up + down).map(\.output).max() ?? 0
        guard largest > 0, up.count >= 3 else { return nil }
        // With no running measurement, nothing shows the actuator giving output at a drive that did
        // not move it from rest: the curve must predict those readings too (under its dead zone, or no
        // more than the noise), and no start is stated. With one, a start threshold may sit above
        // where the running curve starts, and the silent drives count as noise only.
        let silentOnCurve = down.isEmpty
        let noise = max(noiseFloor, largest * 1e-4)
        let quiet = 3 * noise
        let startChoices = [0] + Array(1...up.count).filter { k in up[..<k].allSatisfy { $0.output < quiet } && k < up.count - 1 }
        let stopChoices = down.isEmpty ? [0] : [0] + Array(1...down.count).filter { j in down[..<j].allSatisfy { $0.output < quiet } }

        struct Candidate {
            var cost: Double
            var start: Int, stop: Int
            var deadZone: Double, exponent: Double, saturation: Double?, fullScale: Double
            var floor: Double
        }
        // The best split and curve with and without a saturation, each refined, then compared.
        var best: [Bool: Candidate] = [:]
        for start in startChoices {
            for stop in stopChoices {
                let moving = Array(up[start...]) + Array(down[stop...])
                let silent = Array(up[..<start]) + Array(down[..<stop])
                guard moving.count >= 2, moving.contains(where: { $0.output > quiet }) else { continue }
                // A motor's drives that did not turn it read the noise as it is with the drive on: pooled
                // with the reading at drive 0 (in power), they give the floor the moving points are read
                // against. One reading alone was 7 % under the stalled coin ERMs' (their drive's torque
                // pulses shake the housing a little), and every running reading near the stop then
                // looked like output, which pulled the curve's origin 0.03 low.
                let floor = silentOnCurve
                    ? noise : max(((noise * noise + silent.map { $0.output * $0.output }.reduce(0, +)) / Double(silent.count + 1)).squareRoot(), largest * 1e-4)
                var silentCost = 0.0
                for point in silent where !silentOnCurve {
                    let error = log(max(point.output, floor * 0.1)) - log(floor)
                    silentCost += error * error
                }
                let lowest = moving.map(\.input).min()!
                // Coarse where the curve may start far below the drives (an offset), finer near them.
                let deadZones = (stride(from: lowestStart, to: min(0, lowest - 0.002), by: 0.04).map { $0 }
                    + stride(from: max(0, lowest - 0.3), to: lowest - 0.002, by: 0.01).map { $0 } + [lowest - 0.003]).filter { $0 >= lowestStart }
                let search = CurveSearch(points: moving, quiet: silentOnCurve ? silent : [], floor: floor)
                for saturation in [nil] + [1.0, 1.3, 1.7, 2.5, 4].map({ $0 * largest }) as [Double?] {
                    guard
                        let found = search.best(
                            deadZones: deadZones, exponents: stride(from: 0.4, through: 4.0, by: 0.1).map { $0 }, saturations: [saturation])
                    else { continue }
                    let candidate = Candidate(
                        cost: found.cost + silentCost, start: start, stop: stop, deadZone: found.deadZone, exponent: found.exponent, saturation: saturation,
                        fullScale: found.fullScale, floor: floor)
                    let family = saturation != nil
                    if best[family] == nil || candidate.cost < best[family]!.cost { best[family] = candidate }
                }
            }
        }
        func refine(_ candidate: Candidate) -> Candidate {
            let moving = Array(up[candidate.start...]) + Array(down[candidate.stop...])
            let search = CurveSearch(points: moving, quiet: silentOnCurve ? Array(up[..<candidate.start]) : [], floor: candidate.floor)
            let lowest = moving.map(\.input).min()!
            let deadZones = stride(from: candidate.deadZone - 0.04, through: candidate.deadZone + 0.04, by: 0.002).filter {
                $0 >= lowestStart && $0 < lowest - 0.001
            }
            let exponents = stride(from: candidate.exponent - 0.12, through: candidate.exponent + 0.12, by: 0.01).filter { $0 >= 0.3 && $0 <= 5 }
            let saturations: [Double?] = candidate.saturation.map { value in (-6...6).map { value * exp(Double($0) * 0.05) } } ?? [nil]
            guard let found = search.best(deadZones: deadZones, exponents: exponents, saturations: saturations) else {
                return candidate
            }
            var refined = candidate
            refined.cost += found.cost - search.cost(
                deadZone: candidate.deadZone, exponent: candidate.exponent, saturation: candidate.saturation, fullScale: candidate.fullScale)
            refined.deadZone = found.deadZone
            refined.exponent = found.exponent
            refined.saturation = found.saturation
            refined.fullScale = found.fullScale
            return refined
        }
        let plain = best[false].map(refine), bent = best[true].map(refine)
        // A saturation must earn its place: noise alone should not bend the curve.
        guard var chosen = plain ?? bent else { return nil }
        if let bent, let plain, bent.cost < 0.7 * plain.cost { chosen = bent }

        let moving = Array(up[chosen.start...]) + Array(down[chosen.stop...])
        let floor = chosen.floor
        // The start: the first drive that clearly moved it from rest (more than the noise, as for
        // the running points below). One at the noise may or may not have, and the renderer kicks
        // a sustained vibration to this drive to start it. Only where a running sweep was made: without
        // one, the curve itself starts where the output does (it predicts the silent drives too), and a
        // start above it would only make the renderer kick an actuator that has no stiction.
        func clear(_ output: Double) -> Bool { output * output > 1.6 * floor * floor }
        let clearly = up[chosen.start...].first { clear($0.output) }?.input
        let start = chosen.start > 0 && !silentOnCurve ? (clearly ?? up[chosen.start].input) : nil
        // The stop: the lowest drive a running actuator was seen turning at (clearly more than the
        // noise, 1.6× its power: over three standard errors of a 0.15 s window's reading; and than the
        // same drive from rest, unless that started it too), counted from the highest running drive
        // down and only while each one turned: a motor stepped down that has stalled stays stalled,
        // so a lone reading over the threshold under a silent one is noise (one CI run took a coin
        // ERM's stop at 0.045 that way, truth 0.110). It may really run a little lower, where its
        // output sinks into the sensor's noise, but never lower than seen: a stop under the real one
        // would let a faint sustained vibration stall, silently. Where no running drive was seen
        // turning, the start: no hysteresis is claimed that was not seen. (The curve's origin, where
        // a motor's running speed sinks to nothing, is extrapolated: one CI run put it 0.041–0.048
        // under the truth.)
        let fromRest = Dictionary(up.map { ($0.input, $0.output) }, uniquingKeysWith: { $1 })
        let turning = down.reversed().prefix { point in
            guard clear(point.output) else { return false }
            guard let rest = fromRest[point.input] else { return point.output > 1.3 * floor }
            return clear(rest) || point.output > 1.3 * rest
        }
        var fit = AmplitudeFit(
            deadZone: chosen.deadZone, exponent: chosen.exponent, fullScale: chosen.fullScale, rSquared: 0, saturation: chosen.saturation,
            startDrive: start, stopDrive: start.map { start in min(turning.last?.input ?? start, start) })
        let predicted = moving.map { point -> Double in
            let value = fit.output(atDrive: point.input)
            return (value * value + floor * floor).squareRoot()
        }
        fit.rSquared = rSquared(moving.map(\.output), predicted)
        fit.residuals = zip(moving, predicted).map { ResponsePoint(input: $0.input, output: $0.output - $1) }.sorted { $0.input < $1.input }
        fit.noiseFloor = floor
        return fit
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

/// A grid search for the running curve over the points that moved; the full scale of each
/// candidate is solved for (in closed form, or by a few fixed-point steps under saturation).
struct CurveSearch {
    let drives: [Double]
    let logs: [Double]
    let signal: [Bool]
    let floor: Double
    /// Drives that read as noise and that the curve must predict too, and the logs of their
    /// readings: they may lie under the dead zone, where the curve gives nothing.
    let quietDrives: [Double]
    let quietLogs: [Double]

    init(points: [ResponsePoint], quiet: [ResponsePoint] = [], floor: Double) {
        drives = points.map(\.input)
        logs = points.map { log(max($0.output, floor * 0.1)) }
        signal = points.map { $0.output > 3 * floor }
        quietDrives = quiet.map(\.input)
        quietLogs = quiet.map { log(max($0.output, floor * 0.1)) }
        self.floor = floor
    }

    /// The misfit of one curve, at the points that moved and at the quiet drives.
    func cost(deadZone: Double, exponent: Double, saturation: Double?, fullScale: Double) -> Double {
        let logScale = log(fullScale)
        return misfit(drives, logs, deadZone: deadZone, exponent: exponent, saturation: saturation, logScale: logScale)
            + misfit(quietDrives, quietLogs, deadZone: deadZone, exponent: exponent, saturation: saturation, logScale: logScale)
    }

    /// The summed squared log misfit of readings (`logs`) at `drives` under one curve; a drive
    /// under the dead zone is predicted as the noise alone.
    func misfit(_ drives: [Double], _ logs: [Double], deadZone: Double, exponent: Double, saturation: Double?, logScale: Double) -> Double {
        var cost = 0.0
        for index in drives.indices {
            let u = (drives[index] - deadZone) / (1 - deadZone)
            var model = u > 0 ? exp(logScale + exponent * log(u)) : 0
            if let saturation { model /= (1 + model * model / (saturation * saturation)).squareRoot() }
            let error = 0.5 * log(model * model + floor * floor) - logs[index]
            cost += error * error
        }
        return cost
    }

    func best(deadZones: [Double], exponents: [Double], saturations: [Double?]) -> (
        cost: Double, deadZone: Double, exponent: Double, saturation: Double?, fullScale: Double
    )? {
        var best: (cost: Double, deadZone: Double, exponent: Double, saturation: Double?, fullScale: Double)?
        let count = drives.count
        let floorSquared = floor * floor
        var logU = [Double](repeating: 0, count: count)
        for deadZone in deadZones {
            var valid = true
            for index in 0..<count {
                let u = (drives[index] - deadZone) / (1 - deadZone)
                if u <= 0 { valid = false; break }
                logU[index] = log(u)
            }
            guard valid else { continue }
            for exponent in exponents {
                for saturation in saturations {
                    // log(fullScale): the mean offset over points clearly above the noise.
                    var offset = 0.0, counted = 0.0
                    for index in 0..<count where signal[index] {
                        offset += logs[index] - exponent * logU[index]
                        counted += 1
                    }
                    guard counted >= 2 else { continue }
                    var logScale = offset / counted
                    if let saturation {
                        // Under saturation the offset must also make up for the bend.
                        for _ in 0..<4 {
                            var correction = 0.0
                            for index in 0..<count where signal[index] {
                                let raw = exp(logScale + exponent * logU[index])
                                let bent = raw / (1 + raw * raw / (saturation * saturation)).squareRoot()
                                correction += logs[index] - log(bent)
                            }
                            logScale += correction / counted
                        }
                    }
                    var cost = 0.0
                    for index in 0..<count {
                        var model = exp(logScale + exponent * logU[index])
                        if let saturation { model /= (1 + model * model / (saturation * saturation)).squareRoot() }
                        let error = 0.5 * log(model * model + floorSquared) - logs[index]
                        cost += error * error
                    }
                    cost += misfit(quietDrives, quietLogs, deadZone: deadZone, exponent: exponent, saturation: saturation, logScale: logScale)
                    if best == nil || cost < best!.cost { best = (cost, deadZone, exponent, saturation, exp(logScale)) }
                }
            }
        }
        return best
    }
}
