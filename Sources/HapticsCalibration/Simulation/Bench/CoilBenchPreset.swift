import Haptics

/// A simulated sound-card bench: a voice-coil actuator behind an amplifier on a sound card's
/// output, with the accelerometer taped to it. ``SimulatedCoilBench`` runs one; the alsa backend
/// (`libhaptics-alsa.so`) drives it through alsa-lib from an ALSA device file the bench writes.
///
/// The coil is the same physics as the GPIO benches' LRA (``LinearResonator``: a magnet on a
/// suspension in a coil, the coil's back-EMF damping it), driven by a linear amplifier instead of
/// an H-bridge: the voltage across the coil follows the samples. Figures and their sources are in
/// `Docs/Calibration.md`.
public struct CoilBenchPreset: Sendable, Hashable {
    /// The preset's name (`voice-coil`).
    public var name: String
    /// One line for people.
    public var title: String
    /// The device file's name: the backend lists the actuator as `alsa:NAME`.
    public var deviceName: String
    /// The actuator's name in the device file.
    public var actuatorName: String
    /// The resonance the device file states, Hz (nil: the maker does not know it).
    public var statedResonance: Double?
    /// The band the device file states, Hz.
    public var frequencyRange: ClosedRange<Double>
    /// The device file's `rated_level`: the share of the card's full scale the actuator may get.
    public var ratedLevel: Double
    /// The device file's period, microseconds, and periods in the buffer.
    public var periodMicroseconds: Int
    /// Periods in the buffer.
    public var periods: Int
    /// The card's rate, Hz.
    public var rate: Int
    /// The amplifier's output at the card's full scale, volts peak.
    public var fullScaleVoltage: Double
    /// The actuator.
    public var coil: LinearResonator.Parameters
    /// The accelerometer.
    public var sensor: SimulatedAccelerometer

    /// The id the alsa backend gives the actuator.
    public var deviceID: String { "alsa:" + deviceName }

    /// The ALSA device file for a card whose PCM is alsa-lib's `file` plugin writing raw samples
    /// to `fifo` (what the bench reads as the card's output).
    public func deviceFile(fifo: String) -> String {
        let resonance = statedResonance.map { "\"resonant_frequency_hz\": \($0), " } ?? ""
        return """
            {
              "format": 1,
              "name": "\(deviceName)",
              "description": "\(title)",
              "pcm": "file:FILE=\(fifo),FORMAT=raw",
              "channels": 1,
              "rate_hz": \(rate),
              "period_us": \(periodMicroseconds),
              "periods": \(periods),
              "actuators": [
                { "name": "\(actuatorName)", "channel": 1, "actuator": "voice-coil", \(resonance)"frequency_min_hz": \(frequencyRange.lowerBound),
                  "frequency_max_hz": \(frequencyRange.upperBound), "rated_level": \(ratedLevel) }
              ]
            }
            """
    }

    /// The preset named `name`.
    public static func named(_ name: String) -> CoilBenchPreset? { all.first { $0.name == name } }

    /// The presets.
    public static let all: [CoilBenchPreset] = [voiceCoil]

    /// A wideband voice-coil actuator (a vibrotactile exciter: 6 Ω, a 5 g moving mass on a soft
    /// suspension) on a small class-D amplifier (4.2 V peak at the card's full scale) from a USB
    /// sound card. Its resonance is 105 Hz, which the maker does not know: the device file states
    /// only the 40–300 Hz band. Its coil damps it to Q 2.5 (a wideband part, unlike an LRA's 9),
    /// and its suspension softens (the resonance falls 2 % at the rated amplitude). Rated 2 V rms
    /// (2.8 V peak), which the device file's `rated_level` 0.66 keeps it under. The figures are
    /// assumed (`Docs/Calibration.md`).
    public static let voiceCoil = CoilBenchPreset(
        name: "voice-coil", title: "105 Hz voice-coil exciter on a class-D amplifier from a USB sound card, ADXL345 at 1600 Hz",
        deviceName: "bench-coil", actuatorName: "coil", statedResonance: nil, frequencyRange: 40...300, ratedLevel: 0.66, periodMicroseconds: 2000,
        periods: 3, rate: 48_000, fullScaleVoltage: 4.2,
        coil: .datasheet(
            resonantFrequency: 105, ratedVoltageRMS: 2.0, ratedAcceleration: 2.2, drivenQ: 2.5, openCircuitQ: 8, resonanceShift: -0.02,
            movingMass: 5e-3, resistance: 6, supplyVoltage: 4.2, axis: SIMD3(0, 0, 1)),
        sensor: .adxl345(outputDataRate: 1600))
}
