import Foundation
import GPIOBoards
import Haptics
import HapticsCalibration
import Testing

/// The simulated physics stands on its own: it reproduces the datasheet figures it was built from,
/// and shows the behaviour real parts have (stiction with hysteresis, asymmetric start and stop, a
/// resonance that moves with amplitude) without knowing anything about the fitter.
@Suite("Calibration: physical models of the benches")
struct CalibrationPhysicsTests {
    /// Runs `actuator` under `waveform` for `duration` seconds from `start`, returning √(2 × mean power)
    /// over the last `window` seconds, g.
    static func amplitude(_ actuator: inout some BenchActuator, _ waveform: PWMWaveform, from start: Double = 0, for duration: Double, window: Double = 0.2)
        -> Double
    {
        let rate = 5000.0
        var sum = 0.0, count = 0.0
        var clock = start
        while clock < start + duration - 1e-9 {
            let next = clock + 1 / rate
            actuator.advance(from: clock, to: next, drive: waveform)
            clock = next
            if clock > start + duration - window {
                let acceleration = actuator.acceleration
                sum += (acceleration * acceleration).sum()
                count += 1
            }
        }
        return (2 * sum / max(count, 1)).squareRoot()
    }

    @Test("a motor built from its datasheet turns at its rated speed and draws its rated current at its rated voltage")
    func motorDatasheet() throws {
        let parameters = EccentricMotor.Parameters.datasheet(
            ratedVoltage: 3, ratedSpeed: 200, ratedCurrent: 0.085, stallCurrent: 0.2, runningVoltage: 0.8, breakawayVoltage: 1.1,
            spinUpTimeConstant: 0.03, ratedAcceleration: 1.0, supplyVoltage: 3, electricalTimeConstant: 30e-6, firstAxis: SIMD3(1, 0, 0),
            secondAxis: SIMD3(0, 1, 0))
        var motor = EccentricMotor(parameters: parameters)
        // The switch held on: the supply, 3 V, across the motor.
        let output = Self.amplitude(&motor, PWMWaveform(period: 1, duty: 1, enabled: true, origin: 0), for: 1.0)
        #expect(abs(motor.revolutionsPerSecond / 200 - 1) < 0.01, "\(motor.revolutionsPerSecond) rev/s")
        #expect(abs(motor.current / 0.085 - 1) < 0.01, "\(motor.current) A")
        // The turning vector's magnitude is the rated acceleration on each axis: √2 of it by this measure.
        #expect(abs(output / 2.0.squareRoot() - 1) < 0.02, "\(output) g")
    }

    @Test("stiction: a motor at rest does not start between its running and breakaway voltages, but one already turning keeps going there")
    func motorHysteresis() throws {
        guard case .motor(let parameters) = BenchPreset.gamepadMotor.physics else { throw CalibrationError.measurement("not a motor") }
        let supply = parameters.supplyVoltage
        // 0.6 V: above the 0.25 V the running friction needs, below the 0.8 V that breaks it away.
        let between = PWMWaveform(period: 1 / 25000.0, duty: 0.6 / supply, enabled: true, origin: 0)
        var resting = EccentricMotor(parameters: parameters)
        #expect(Self.amplitude(&resting, between, for: 1.0) < 1e-6 && !resting.isTurning)
        var running = EccentricMotor(parameters: parameters)
        _ = Self.amplitude(&running, PWMWaveform(period: 1 / 25000.0, duty: 2.0 / supply, enabled: true, origin: 0), for: 1.0)
        let kept = Self.amplitude(&running, PWMWaveform(period: 1 / 25000.0, duty: 0.6 / supply, enabled: true, origin: 1), from: 1, for: 1.5)
        #expect(running.isTurning && kept > 0.005, "\(kept) g while running at 0.6 V")
    }

    @Test("a motor spins up against its back-EMF but coasts down on friction alone: the two take different times")
    func motorAsymmetry() throws {
        let truth = BenchTruth(preset: .gamepadMotor)
        let timing = truth.timing(amplitude: BenchPreset.gamepadMotor.envelope.ratedLevel)
        #expect(timing.rise > 0.2 && timing.rise < 0.35, "a heavy rumble motor spins up slowly: \(timing.rise) s")
        #expect(timing.fall > timing.rise * 1.15, "and coasts down slower still: \(timing.fall) s against \(timing.rise) s")
        let coin = BenchTruth(preset: .coinERM).timing(amplitude: BenchPreset.coinERM.envelope.ratedLevel)
        #expect(abs(coin.fall - coin.rise) > 0.02, "coin ERM: rise \(coin.rise) s, fall \(coin.fall) s")
    }

    @Test("an LRA rings down with the time constant its driven Q gives, and its resonance rises with amplitude")
    func resonator() throws {
        guard case .resonator(let parameters) = BenchPreset.hBridgeLRA.physics else { throw CalibrationError.measurement("not a resonator") }
        var lra = LinearResonator(parameters: parameters)
        let drive = BenchPreset.hBridgeLRA.waveform(level: 0.2, frequency: 175)
        _ = Self.amplitude(&lra, drive, for: 0.5)
        // Free ring-down (the bridge brakes, shorting the coil): the envelope falls by e every 2m/c.
        var peaks: [(Double, Double)] = []
        var clock = 0.5
        var window = 0.0
        while clock < 0.6 {
            lra.advance(from: clock, to: clock + 1e-4, drive: .low)
            clock += 1e-4
            window = max(window, (lra.acceleration * lra.acceleration).sum().squareRoot())
            if Int((clock * 1e4).rounded()) % 57 == 0 {
                peaks.append((clock, window))
                window = 0
            }
        }
        let early = peaks[2], late = peaks[10]
        let tau = (late.0 - early.0) / log(early.1 / late.1)
        #expect(abs(tau / (9 / (Double.pi * 175)) - 1) < 0.1, "ring-down time constant \(tau) s, Q 9 at 175 Hz gives \(9 / (Double.pi * 175)) s")
        // The strongest response moves up with the drive.
        let truth = BenchTruth(preset: .hBridgeLRA)
        func best(_ amplitude: Double) -> Double {
            stride(from: 165.0, through: 190, by: 1).max { truth.steadyOutput(amplitude: amplitude, frequency: $0, settle: 0.4) < truth.steadyOutput(amplitude: amplitude, frequency: $1, settle: 0.4) }!
        }
        let low = best(0.1), high = best(0.7)
        #expect(low <= 177 && high >= low + 3, "resonance \(low) Hz at a small drive, \(high) Hz at the rated one")
    }

    @Test("the ADXL345 model has the data sheet's noise at 400 Hz, counts of 3.9 mg, and clips at its range")
    func sensor() throws {
        let sensor = SimulatedAccelerometer.adxl345(outputDataRate: 400, range: 2)
        var random = SeededRandom(seed: 3)
        var sums = SIMD3<Double>.zero
        let count = 20000
        for _ in 0..<count {
            let counts = sensor.counts(for: .zero, random: &random)
            let deviation = SIMD3(Double(counts.x), Double(counts.y), Double(counts.z - 256))
            sums += deviation * deviation
        }
        let rms = (sums / Double(count)).squareRoot()
        #expect(abs(rms.x - 1.5) < 0.1 && abs(rms.y - 1.5) < 0.1 && abs(rms.z - 2.2) < 0.15, "noise in counts: \(rms)")
        #expect(sensor.counts(for: SIMD3(5, 0, 0), random: &random).x == 512, "±2 g clips at 512 counts of 3.9 mg")
        #expect(abs(sensor.scale - 0.0383) < 1e-9)
    }

    @Test("a PWM waveform steps edge to edge: high for its duty, low after, always moving on")
    func waveform() {
        let pwm = PWMWaveform(period: 0.005, duty: 0.3, enabled: true, origin: 1)
        #expect(pwm.level(at: 1.0) == (true, 1.0015))
        #expect(pwm.level(at: 1.0015) == (false, 1.005))
        #expect(pwm.level(at: 1.0049999) == (false, 1.005))
        var time = 1.0, edges = 0, steps = 0
        var high = true
        while time < 2 {
            let level = pwm.level(at: time)
            if level.high != high { edges += 1 }
            high = level.high
            #expect(level.until > time)
            time = level.until
            steps += 1
        }
        #expect(edges == 399, "two edges per period over a second: \(edges)")
        #expect(steps < 600)
        #expect(PWMWaveform(period: 0.005, duty: 0.3, enabled: false, origin: 0).level(at: 3).high == false)
    }
}

/// The drive envelope: what the GPIO backend states, and the limiter's rules that simulations
/// apply in its place, checked against the backend's own limiter.
@Suite("Calibration: drive envelope")
struct CalibrationEnvelopeTests {
    @Test("limited() gives the same levels as the GPIO backend's DriveLimiter for random request sequences")
    func matchesDriveLimiter() throws {
        let envelope = DriveEnvelope(amplitudeOffset: 0.25, ratedLevel: 0.6, kickLevel: 1.0, kickDuration: 0.040, maxContinuousDuration: 0.5, restDuration: 0.050)
        let limits = ActuatorLimits(
            ratedLevel: 0.6, overdriveLevel: 1.0, overdriveMaxNanoseconds: 40_000_000, maxContinuousNanoseconds: 500_000_000, restNanoseconds: 50_000_000,
            deadZone: 0.25)
        var random = SeededRandom(seed: 11)
        for _ in 0..<20 {
            var steps: [DriveSchedule.Step] = []
            var time = 0.0
            for _ in 0..<40 {
                time += 0.002 + 0.06 * random.uniform()
                let amplitude = random.uniform() < 0.3 ? 0 : random.uniform()
                steps.append(.init(time: time, channels: [ChannelDrive(amplitude: amplitude, frequency: 0)]))
            }
            let limited = envelope.limited(DriveSchedule(steps: steps))
            // The backend's limiter, fed the same requests at the same times and at its own deadlines.
            var limiter = DriveLimiter(limits: limits)
            var request = 0.0
            var index = 0
            for step in limited.steps {
                while index < steps.count, steps[index].time <= step.time + 1e-12 {
                    request = envelope.level(forAmplitude: steps[index].channels[0].amplitude)
                    index += 1
                }
                // Just after the step, so a boundary rounded to nanoseconds falls on the same side for both.
                let level = limiter.limit(request, at: UInt64(((step.time + 1e-6) * 1e9).rounded())).level
                #expect(abs(level - step.channels[0].amplitude) < 1e-9, "at \(step.time) s: limiter \(level), limited() \(step.channels[0].amplitude)")
            }
        }
    }

    @Test("amplitudes and levels convert both ways; the steady and kick limits are amplitudes")
    func conversions() {
        let envelope = DriveEnvelope(amplitudeOffset: 0.25, ratedLevel: 0.6, kickLevel: 1.0, kickDuration: 0.04)
        #expect(abs(envelope.amplitude(forLevel: envelope.level(forAmplitude: 0.3)) - 0.3) < 1e-12)
        #expect(abs(envelope.steadyAmplitudeLimit - 0.35 / 0.75) < 1e-12)
        #expect(envelope.kickAmplitudeLimit == 1)
        #expect(envelope.amplitude(forLevel: 0.1) == 0)
        #expect(DriveEnvelope.of(DeviceDescription(
            id: "x", name: "x", backend: "recording", actuator: .erm, channels: [ChannelDescription(name: "m", actuator: .erm)], minimumUpdateInterval: 0,
            wakeLatency: 0, envelope: .passThrough)) == nil)
    }

    @Test("a recording device can state an envelope, which the simulated source applies to its model")
    func recordingEnvelope() throws {
        let devices = #"{"id":"recording:board","actuator":"erm","channels":[{"name":"main","actuator":"erm"}],"envelope":{"amplitude_offset":0.25,"rated_level":0.6,"kick_level":1,"kick_ms":40,"max_continuous_ms":10000,"rest_ms":50}}"#
        let source = try CalibrationFixtures.source("recording:board", devices: devices, model: "deadzone=0.3,noise=0")
        let envelope = try #require(source.envelope)
        #expect(abs(envelope.amplitudeOffset - 0.25) < 1e-6 && abs(envelope.ratedLevel - 0.6) < 1e-6 && abs(envelope.kickDuration - 0.04) < 1e-9)
        // The model stalls under level 0.3: amplitude 0.05 (level 0.2875) gives nothing, 0.1 (0.325) turns it.
        let stimuli = [0.05, 0.1].map { Stimulus.tone(intensity: $0, sharpness: 0, duration: 0.5, window: 0.2) }
        let outputs = try #require(try source.measure(stimuli, profile: ChannelProbe.profile(for: source.device, channel: 0), progress: SilentProgress()))
        #expect(outputs[0] < 1e-6 && outputs[1] > 0.001, "\(outputs)")
    }
}
