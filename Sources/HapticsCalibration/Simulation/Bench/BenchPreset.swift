import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// A simulated bench: a board file the GPIO backend reads, the physical actuator wired to its PWM
/// pin, and the accelerometer taped to it. ``SimulatedBench`` runs one.
///
/// The presets are the example boards in `Hardware/boards/` with actuators built from datasheet
/// figures (`Docs/Calibration.md` lists each figure and its source; the ones no public source gives
/// are marked there as assumed). Boards whose actuators need GPIO lines are given here without
/// them: a directory tree has no GPIO chip, and the lines only switch the driver on and off.
public struct BenchPreset: Sendable, Hashable {
    /// What is on the bench.
    public enum Physics: Sendable, Hashable {
        /// An ERM switched by a transistor.
        case motor(EccentricMotor.Parameters)
        /// An LRA on an H-bridge.
        case resonator(LinearResonator.Parameters)
    }

    /// The preset's name (`coin-erm`).
    public var name: String
    /// One line for people.
    public var title: String
    /// The board file's JSON text.
    public var board: String
    /// The board's name (its file is `<name>.json`).
    public var boardName: String
    /// The device id the GPIO backend gives the actuator.
    public var deviceID: String
    /// PWM channels the chip has (the pwm-vibrator's direction channel needs a second).
    public var pwmChannels: Int
    /// The actuator.
    public var physics: Physics
    /// The accelerometer.
    public var sensor: SimulatedAccelerometer
    /// What the board's limits make the backend do, in the envelope's terms, as it states it.
    public var envelope: DriveEnvelope
    /// The envelope as calibration drives the bench: in levels from zero (the GPIO backend takes
    /// frames of levels), the same limits.
    public func envelope(for drive: CalibrationProfile.DriveScale) -> DriveEnvelope {
        drive == .level ? envelope.forLevels : envelope
    }
    /// The board's PWM carrier, Hz; nil for an H-bridge, whose PWM period is the drive frequency.
    public var carrierFrequency: Double?
    /// The frequency the backend drives an H-bridge at when none is asked for (the board's resonance), Hz.
    public var defaultFrequency: Double

    /// The waveform the GPIO backend puts on the PWM pin for `level` (0…1 of full scale, after its
    /// limiter) at `frequency` Hz (H-bridge only; 0: the default), as its board topology maps it.
    public func waveform(level: Double, frequency: Double = 0, origin: Double = 0) -> PWMWaveform {
        let clamped = min(max(level, 0), 1)
        guard clamped > 0 else { return .low }
        if let carrierFrequency { return PWMWaveform(period: 1 / carrierFrequency, duty: clamped, enabled: true, origin: origin) }
        // An H-bridge's fundamental grows with sin(π × duty): the backend takes asin(level)/π.
        return PWMWaveform(period: 1 / (frequency > 0 ? frequency : defaultFrequency), duty: asin(clamped) / Double.pi, enabled: true, origin: origin)
    }

    /// A fresh actuator at rest; a motor's eccentric mass rests at a random angle.
    public func makeActuator(random: inout SeededRandom) -> any BenchActuator {
        switch physics {
        case .motor(let parameters): EccentricMotor(parameters: parameters, angle: 2 * Double.pi * random.uniform())
        case .resonator(let parameters): LinearResonator(parameters: parameters)
        }
    }

    /// This bench with another actuator on the same board and sensor: `name`, `title` and `physics` replaced.
    public func with(name: String, title: String, physics: Physics) -> BenchPreset {
        var preset = self
        preset.name = name
        preset.title = title
        preset.physics = physics
        return preset
    }

    /// The presets, by name.
    public static let all: [BenchPreset] = [coinERM, strongCoinERM, hBridgeLRA, softLRA, gamepadMotor]

    /// The preset named `name`.
    public static func named(_ name: String) -> BenchPreset? { all.first { $0.name == name } }

    /// A 10 mm coin ERM (3 V, 12 000 rpm, 85 mA) switched from 5 V by a MOSFET: the shipped
    /// `rpi-coin-erm` board. The motor breaks away at 1.1 V, below the board's dead zone (1.25 V),
    /// so every non-zero amplitude starts it, and the smallest already gives output.
    public static let coinERM = BenchPreset(
        name: "coin-erm", title: "10 mm coin ERM on a MOSFET from 5 V (rpi-coin-erm), ADXL345 at 800 Hz",
        board: """
            {
              "format": 1,
              "name": "rpi-coin-erm",
              "description": "Raspberry Pi with a 3 V coin ERM switched by a transistor from 5 V",
              "pwm_chip": "pwmchip0",
              "actuators": [
                {
                  "name": "erm",
                  "description": "10 mm coin ERM on a logic-level MOSFET (gate on GPIO18)",
                  "topology": "erm-transistor",
                  "pwm": { "channel": 0, "frequency_hz": 20000 },
                  "limits": {
                    "nominal_frequency_hz": 200,
                    "rated_level": 0.6,
                    "overdrive_level": 1.0,
                    "overdrive_max_ms": 40,
                    "max_continuous_ms": 10000,
                    "rest_ms": 50,
                    "dead_zone": 0.25
                  },
                  "update_interval_ms": 2
                }
              ]
            }
            """,
        boardName: "rpi-coin-erm", deviceID: "gpio:rpi-coin-erm:erm", pwmChannels: 1,
        physics: .motor(
            .datasheet(
                ratedVoltage: 3, ratedSpeed: 200, ratedCurrent: 0.085, stallCurrent: 0.2, runningVoltage: 0.8, breakawayVoltage: 1.1,
                spinUpTimeConstant: 0.03, ratedAcceleration: 1.0, supplyVoltage: 5, electricalTimeConstant: 30e-6, firstAxis: SIMD3(1, 0, 0),
                secondAxis: SIMD3(0, 1, 0))),
        // Its 200 Hz turning vector would sit at the edge of a 400 Hz sensor's band (200 Hz).
        sensor: .adxl345(outputDataRate: 800),
        envelope: DriveEnvelope(
            amplitudeOffset: 0.25, ratedLevel: 0.6, kickLevel: 1.0, kickDuration: 0.040, maxContinuousDuration: 10, restDuration: 0.050, acceptsLevels: true),
        carrierFrequency: 20000, defaultFrequency: 200)

    /// The same `rpi-coin-erm` board with a stronger, freer-running coin ERM (1.8 g per axis at
    /// 3 V, breaking away at 0.7 V and running down to 0.5 V): it spins well at the board's dead
    /// zone (1.25 V gives about a quarter of a g), so outputs under that are reachable only below the
    /// board's guess, which calibration measures from zero and replaces (issue 25's maker's motor).
    public static let strongCoinERM = coinERM.with(
        name: "coin-erm-strong", title: "stronger 10 mm coin ERM on a MOSFET from 5 V (rpi-coin-erm), ADXL345 at 800 Hz",
        physics: .motor(
            .datasheet(
                ratedVoltage: 3, ratedSpeed: 200, ratedCurrent: 0.085, stallCurrent: 0.2, runningVoltage: 0.5, breakawayVoltage: 0.7,
                spinUpTimeConstant: 0.03, ratedAcceleration: 1.8, supplyVoltage: 5, electricalTimeConstant: 30e-6, firstAxis: SIMD3(1, 0, 0),
                secondAxis: SIMD3(0, 1, 0))))

    /// A 175 Hz coin LRA (2 V rms) driven directly by a PH/EN H-bridge from 5 V: the shipped
    /// `rpi-hbridge-lra` board without its nSLEEP and PHASE lines. Its spring hardens, so the
    /// resonance rises 4 % at the rated amplitude, and it rings down with a 16 ms time constant (a start to 90 % in about 30 ms, as TI gives for LRAs).
    public static let hBridgeLRA = BenchPreset(
        name: "hbridge-lra", title: "175 Hz LRA on an H-bridge from 5 V (rpi-hbridge-lra), ADXL345 at 800 Hz",
        board: """
            {
              "format": 1,
              "name": "rpi-hbridge-lra",
              "description": "Raspberry Pi driving a 175 Hz LRA directly through a PH/EN H-bridge (DRV8838 class)",
              "pwm_chip": "pwmchip0",
              "actuators": [
                {
                  "name": "lra",
                  "description": "175 Hz LRA on a DRV8838 (EN/PWM on GPIO18; PH and nSLEEP tied high on the bench)",
                  "topology": "lra-hbridge",
                  "pwm": { "channel": 0 },
                  "limits": {
                    "resonant_frequency_hz": 175,
                    "frequency_min_hz": 130,
                    "frequency_max_hz": 260,
                    "rated_level": 0.7,
                    "overdrive_level": 1.0,
                    "overdrive_max_ms": 10,
                    "max_continuous_ms": 5000
                  }
                }
              ]
            }
            """,
        boardName: "rpi-hbridge-lra", deviceID: "gpio:rpi-hbridge-lra:lra", pwmChannels: 1,
        physics: .resonator(
            .datasheet(
                resonantFrequency: 175, ratedVoltageRMS: 2.0, ratedAcceleration: 1.8, drivenQ: 9, openCircuitQ: 30, resonanceShift: 0.04,
                movingMass: 1.5e-3, resistance: 25, supplyVoltage: 5, axis: SIMD3(1, 0, 0))),
        sensor: .adxl345(outputDataRate: 800),
        envelope: DriveEnvelope(
            amplitudeOffset: 0, ratedLevel: 0.7, kickLevel: 1.0, kickDuration: 0.010, maxContinuousDuration: 5, restDuration: 0.020, acceptsLevels: true),
        carrierFrequency: nil, defaultFrequency: 175)

    /// The same `rpi-hbridge-lra` board with another LRA: its resonance 3 % below the 175 Hz the
    /// board file states, and a spring that softens, so the resonance falls 3 % more at the rated
    /// amplitude (issue 25's second model). Calibration must find both and not trust the board.
    public static let softLRA = hBridgeLRA.with(
        name: "hbridge-lra-soft", title: "170 Hz LRA with a softening spring on an H-bridge from 5 V (rpi-hbridge-lra), ADXL345 at 800 Hz",
        physics: .resonator(
            .datasheet(
                resonantFrequency: 170, ratedVoltageRMS: 2.0, ratedAcceleration: 1.8, drivenQ: 9, openCircuitQ: 30, resonanceShift: -0.03,
                movingMass: 1.5e-3, resistance: 25, supplyVoltage: 5, axis: SIMD3(1, 0, 0))))

    /// A gamepad's large rumble motor (3 V, 3 600 rpm, a heavy eccentric mass: a 90 ms spin-up time
    /// constant) on a pwm-vibrator board from 3.3 V: the shipped `rpi-pwm-vibrator` board without
    /// its enable line. It breaks away only at 0.8 V, above the board's dead zone (0.5 V), but once
    /// turning runs down to 0.25 V: a start threshold with hysteresis.
    public static let gamepadMotor = BenchPreset(
        name: "gamepad-motor", title: "gamepad rumble motor on a pwm-vibrator driver from 3.3 V (rpi-pwm-vibrator), ADXL345 at 400 Hz",
        board: """
            {
              "format": 1,
              "name": "rpi-pwm-vibrator",
              "description": "Raspberry Pi wired like Linux's pwm-vibrator binding: enable GPIO, amplitude PWM, direction PWM",
              "pwm_chip": "pwmchip0",
              "actuators": [
                {
                  "name": "motor",
                  "description": "ERM on a pwm-vibrator style driver (amplitude GPIO18, direction GPIO19; enable tied high on the bench)",
                  "topology": "pwm-vibrator",
                  "actuator": "erm",
                  "pwm": { "channel": 0, "frequency_hz": 25000, "direction_channel": 1, "direction_duty": 0.5 },
                  "limits": {
                    "nominal_frequency_hz": 180,
                    "rated_level": 0.9,
                    "overdrive_level": 1.0,
                    "overdrive_max_ms": 30,
                    "max_continuous_ms": 10000,
                    "dead_zone": 0.15
                  }
                }
              ]
            }
            """,
        boardName: "rpi-pwm-vibrator", deviceID: "gpio:rpi-pwm-vibrator:motor", pwmChannels: 2,
        physics: .motor(
            .datasheet(
                ratedVoltage: 3, ratedSpeed: 60, ratedCurrent: 0.12, stallCurrent: 0.6, runningVoltage: 0.25, breakawayVoltage: 0.8,
                spinUpTimeConstant: 0.09, ratedAcceleration: 1.0, supplyVoltage: 3.3, electricalTimeConstant: 100e-6, firstAxis: SIMD3(0, 1, 0),
                secondAxis: SIMD3(0, 0, 1))),
        sensor: .adxl345(outputDataRate: 400),
        envelope: DriveEnvelope(
            amplitudeOffset: 0.15, ratedLevel: 0.9, kickLevel: 1.0, kickDuration: 0.030, maxContinuousDuration: 10, restDuration: 0.020, acceptsLevels: true),
        carrierFrequency: 25000, defaultFrequency: 180)
}
