import Haptics

/// What a bench's actuator really does, found by simulating it alone (no sensor, no backend, no
/// clock: the waveform the backend would make, fed straight in), to compare a calibration with.
///
/// Outputs use the calibration's measure: √(2 × the mean squared magnitude of the housing's
/// vibration), in g (the peak of a sinusoid along one axis; √2 × the per-axis peak of an ERM's
/// turning vector), within the band the bench's sensor reads (a profile's g are an
/// accelerometer's on the device): the H-bridge's force pulses, which no ADXL345 reading sees,
/// are not counted.
public struct BenchTruth: Sendable {
    /// The preset.
    public let preset: BenchPreset
    /// What the drives asked of it are: levels from zero (as calibration drives a GPIO bench), or
    /// amplitudes the backend lifts over its board's offset (an older profile).
    public let drive: CalibrationProfile.DriveScale
    /// The envelope those drives meet.
    public var envelope: DriveEnvelope { preset.envelope(for: drive) }
    /// Samples per second the truth is computed at, Hz.
    public let sampleRate = 5_000.0

    /// The truth about `preset`, asked in `drive`s.
    public init(preset: BenchPreset, drive: CalibrationProfile.DriveScale = .level) {
        self.preset = preset
        self.drive = drive
    }

    private func actuator() -> any BenchActuator {
        var random = SeededRandom(seed: 1)
        return preset.makeActuator(random: &random)
    }

    /// Runs `actuator` under `waveform` for `duration` seconds from `time`, returning at every
    /// sample the squared magnitude of the vibration as the bench's sensor reads it: the mean
    /// acceleration over the last conversion period (``SimulatedAccelerometer``), from steps of 50 µs.
    private func run(_ actuator: inout any BenchActuator, _ waveform: PWMWaveform, from time: Double, for duration: Double) -> [Double] {
        let count = Int((duration * sampleRate).rounded())
        let steps = 4
        let step = 1 / (sampleRate * Double(steps))
        let width = max(Int((1 / (preset.sensor.outputDataRate * step)).rounded()), 1)
        var recent = [SIMD3<Double>](repeating: actuator.acceleration, count: width)
        var sum = actuator.acceleration * Double(width)
        var slot = 0
        var result = [Double](repeating: 0, count: count)
        var clock = time
        for index in 0..<count {
            for offset in 1...steps {
                let next = time + Double(index * steps + offset) * step
                actuator.advance(from: clock, to: next, drive: waveform)
                clock = next
                let acceleration = actuator.acceleration
                sum += acceleration - recent[slot]
                recent[slot] = acceleration
                slot = slot + 1 == width ? 0 : slot + 1
            }
            let mean = sum / Double(width)
            result[index] = (mean * mean).sum()
        }
        return result
    }

    private static func amplitude(_ squares: ArraySlice<Double>) -> Double {
        squares.isEmpty ? 0 : (2 * squares.reduce(0, +) / Double(squares.count)).squareRoot()
    }

    /// The level the backend puts out for a drive, within its rated level.
    private func level(_ amplitude: Double) -> Double {
        envelope.steadyLevel(forAmplitude: amplitude)
    }

    /// The steady output at `amplitude` (0…1, a drive as ``drive`` says) and `frequency` Hz (H-bridge;
    /// 0: the default), started from rest, g.
    public func steadyOutput(amplitude: Double, frequency: Double = 0, settle: Double = 1.2) -> Double {
        var actuator = actuator()
        let squares = run(&actuator, preset.waveform(level: level(amplitude), frequency: frequency), from: 0, for: settle + 0.3)
        return Self.amplitude(squares.suffix(Int(0.3 * sampleRate)))
    }

    /// The steady output at `amplitude` reached from a running actuator (first driven at its rated
    /// level), g: where it differs from ``steadyOutput(amplitude:frequency:settle:)``, the actuator has
    /// a start threshold with hysteresis.
    public func runningOutput(amplitude: Double, frequency: Double = 0) -> Double {
        var actuator = actuator()
        _ = run(&actuator, preset.waveform(level: envelope.ratedLevel, frequency: frequency), from: 0, for: 0.8)
        let squares = run(&actuator, preset.waveform(level: level(amplitude), frequency: frequency, origin: 0.8), from: 0.8, for: 1.2)
        return Self.amplitude(squares.suffix(Int(0.3 * sampleRate)))
    }

    /// The smallest amplitude that starts the actuator from rest (to 0.001), 0 if every non-zero one does.
    public func startThreshold() -> Double {
        threshold { steadyOutput(amplitude: $0, settle: 0.5) }
    }

    /// The smallest amplitude that keeps a running actuator going (to 0.001), 0 if every non-zero one does.
    public func stopThreshold() -> Double {
        threshold { runningOutput(amplitude: $0) }
    }

    private func threshold(_ output: (Double) -> Double) -> Double {
        let top = envelope.steadyAmplitudeLimit
        // Moving at all: 1 mg, a quarter of the sensor's count and far under its noise.
        let floor = 0.001
        if output(0.001) > floor { return 0 }
        var low = 0.001, high = top
        while high - low > 0.001 {
            let middle = (low + high) / 2
            if output(middle) > floor { high = middle } else { low = middle }
        }
        return high
    }

    /// Spin-up and spin-down (ring-down) at `amplitude`: seconds from the drive's start until the
    /// vibration (over centred 10 ms windows) reaches 90 % of its steady value, and from the drive's
    /// end until it falls under 10 % of it.
    public func timing(amplitude: Double, frequency: Double = 0) -> (rise: Double, fall: Double) {
        var actuator = actuator()
        let on = run(&actuator, preset.waveform(level: level(amplitude), frequency: frequency), from: 0, for: 1.5)
        let off = run(&actuator, .low, from: 1.5, for: 1.0)
        let window = Int(0.01 * sampleRate)
        // Centred 10 ms windows (over 1.7 periods of an LRA, 2 turns of a coin motor): no lag.
        func envelope(_ squares: [Double]) -> [Double] {
            var prefix = [0.0]
            for value in squares { prefix.append(prefix.last! + value) }
            return squares.indices.map { index in
                let low = max(index - window / 2, 0), high = min(index + window / 2, squares.count)
                return (2 * (prefix[high] - prefix[low]) / Double(max(high - low, 1))).squareRoot()
            }
        }
        let rising = envelope(on), falling = envelope(Array(on.suffix(window)) + off)
        let steady = Self.amplitude(on.suffix(Int(0.3 * sampleRate))[...])
        let rise = (rising.firstIndex { $0 >= 0.9 * steady }).map { Double($0) / sampleRate } ?? .infinity
        let fall = (falling.dropFirst(window).firstIndex { $0 <= 0.1 * steady }).map { Double($0 - window) / sampleRate } ?? .infinity
        return (rise, fall)
    }
}
