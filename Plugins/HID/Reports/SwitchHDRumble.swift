#if canImport(Glibc)
import Glibc  // log2, exp2: the C math library; no Foundation needed
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The Nintendo Switch "HD rumble" encoding: 4 bytes that drive one linear resonant actuator with two
/// tones, a high band and a low band, each with its own frequency and amplitude.
///
/// ## Byte layout (one actuator)
///
/// ```
/// [0] hf & 0xFF                     hf: high-band frequency field, 9 bits, 0x004…0x1FC in steps of 4
/// [1] (hf >> 8) | (ha << 1)         ha: high-band amplitude index, 0…100
/// [2] lf | (la & 1) << 7            lf: low-band frequency field, 7 bits, 0x01…0x7F
/// [3] 0x40 + (la >> 1)              la: low-band amplitude index, 0…100
/// ```
///
/// Both bands at amplitude 0 with the default frequencies (320 Hz high, 160 Hz low) give `00 01 40 40`,
/// the neutral value.
///
/// ## Formulas
///
/// Frequency (dekuNukem, Nintendo_Switch_Reverse_Engineering/rumble_data_table.md): the code
/// `round(32 · log2(f / 10 Hz))`; the high band stores `(code − 0x60) · 4`, the low band `code − 0x40`.
/// Each step is 2^(1/32) (about 2.2 %); 160 Hz is code 0x80, 320 Hz is 0xA0.
///
/// Amplitude: dekuNukem's table leaves the formula "undecoded", but its values form three geometric runs,
/// which these formulas reproduce (index *i*, amplitude *a* on the table's scale, where 1.002867 is the
/// largest safe value):
/// - *i* ≥ 32: a = 2^(i/32) / 8.69913
/// - 16 ≤ *i* < 32: a = 2^(i/16) / 17.0255
/// - 1 ≤ *i* < 16: a = 2^(i/4) / 119.607
///
/// The constants are fitted to the table (every index from 2 to 100 round-trips). For index 1 the
/// formula gives 0.0099, as the kernel's table does (10/1000); dekuNukem lists 0.007843 there.
/// Amplitudes above index 100 exist but dekuNukem marks them unsafe for the actuators, so the encoder
/// never emits them. The kernel's hid-nintendo.c tables (`joycon_rumble_frequencies`,
/// `joycon_rumble_amplitudes`) hold the same values as data; the tests pin the formulas against them.
public enum SwitchHDRumble {
    /// The frequencies the low band renders, in Hz (hid-nintendo.c `JOYCON_{MIN,MAX}_RUMBLE_LOW_FREQ`).
    public static let lowBandRange: ClosedRange<Double> = 41...626
    /// The frequencies the high band renders, in Hz (hid-nintendo.c `JOYCON_{MIN,MAX}_RUMBLE_HIGH_FREQ`).
    public static let highBandRange: ClosedRange<Double> = 82...1253
    /// Every frequency one actuator renders through one band or the other, in Hz.
    public static let frequencyRange: ClosedRange<Double> = 41...1253
    /// The low band's default frequency, in Hz (hid-nintendo.c `JC_RUMBLE_DFLT_LOW_FREQ`).
    public static let defaultLowFrequency: Double = 160
    /// The high band's default frequency, in Hz (hid-nintendo.c `JC_RUMBLE_DFLT_HIGH_FREQ`).
    public static let defaultHighFrequency: Double = 320
    /// The largest safe amplitude on the table's scale (index 100).
    public static let maximumSafeAmplitude: Double = 1.002867
    /// The largest amplitude index the encoder emits.
    public static let maximumAmplitudeIndex: UInt8 = 100
    /// Distinct amplitude levels per band, off included: indices 0…100.
    public static let amplitudeSteps = 101
    /// One actuator at rest: both bands silent at their default frequencies.
    public static let neutral: [UInt8] = [0x00, 0x01, 0x40, 0x40]

    private static let upperRunDivisor = 8.69913
    private static let middleRunDivisor = 17.0255
    private static let lowerRunDivisor = 119.607

    /// The frequency code of `hertz`: `round(32 · log2(hertz / 10))`, unclamped.
    ///
    /// - Parameter hertz: A frequency in Hz, above 0.
    public static func frequencyCode(hertz: Double) -> Int {
        Int((32 * log2(hertz / 10)).rounded())
    }

    /// The frequency in Hz of a frequency code: `10 · 2^(code / 32)`.
    ///
    /// - Parameter code: A frequency code (0x41…0xDF are renderable).
    public static func frequency(code: Int) -> Double {
        10 * exp2(Double(code) / 32)
    }

    /// The 9-bit high-band frequency field for `hertz`, clamped to `highBandRange`: 0x004…0x1FC.
    ///
    /// - Parameter hertz: A frequency in Hz; NaN means `defaultHighFrequency`.
    public static func highBandField(hertz: Double) -> UInt16 {
        let clamped =
            hertz.isNaN ? defaultHighFrequency : min(max(hertz, highBandRange.lowerBound), highBandRange.upperBound)
        let code = min(max(frequencyCode(hertz: clamped), 0x61), 0xDF)
        return UInt16(code - 0x60) * 4
    }

    /// The 7-bit low-band frequency field for `hertz`, clamped to `lowBandRange`: 0x01…0x7F.
    ///
    /// - Parameter hertz: A frequency in Hz; NaN means `defaultLowFrequency`.
    public static func lowBandField(hertz: Double) -> UInt8 {
        let clamped =
            hertz.isNaN ? defaultLowFrequency : min(max(hertz, lowBandRange.lowerBound), lowBandRange.upperBound)
        let code = min(max(frequencyCode(hertz: clamped), 0x41), 0xBF)
        return UInt8(code - 0x40)
    }

    /// The amplitude index (0…100) nearest `amplitude` on the table's scale.
    ///
    /// Values at or below 0 (and NaN) give 0, values above `maximumSafeAmplitude` give 100. Each run's
    /// formula is inverted with a log2 and rounded; the run is chosen where its rounding says so, which
    /// puts the split between two runs halfway (in log terms) between their neighbouring indices.
    ///
    /// - Parameter amplitude: The amplitude on the table's scale, 0…1.002867.
    public static func amplitudeIndex(amplitude: Double) -> UInt8 {
        guard amplitude > 0 else { return 0 }
        let bounded = min(amplitude, maximumSafeAmplitude)
        let upper = 32 * log2(bounded * upperRunDivisor)
        if upper >= 31.5 { return UInt8(min(upper.rounded(), Double(maximumAmplitudeIndex))) }
        let middle = 16 * log2(bounded * middleRunDivisor)
        if middle >= 15.5 { return UInt8(middle.rounded()) }
        let lower = 4 * log2(bounded * lowerRunDivisor)
        return UInt8(max(lower.rounded(), 0))
    }

    /// The amplitude on the table's scale of an amplitude index.
    ///
    /// - Parameter index: An index, 0…100 (larger values are clamped).
    public static func amplitude(index: UInt8) -> Double {
        let index = Double(min(index, maximumAmplitudeIndex))
        switch index {
        case 0: return 0
        case ..<16: return exp2(index / 4) / lowerRunDivisor
        case ..<32: return exp2(index / 16) / middleRunDivisor
        default: return exp2(index / 32) / upperRunDivisor
        }
    }

    /// The 4 bytes of one actuator with both bands given explicitly.
    ///
    /// - Parameters:
    ///   - highFrequency: The high band's frequency in Hz (clamped to `highBandRange`).
    ///   - highAmplitudeIndex: The high band's amplitude index, 0…100 (clamped).
    ///   - lowFrequency: The low band's frequency in Hz (clamped to `lowBandRange`).
    ///   - lowAmplitudeIndex: The low band's amplitude index, 0…100 (clamped).
    public static func encode(
        highFrequency: Double, highAmplitudeIndex: UInt8, lowFrequency: Double, lowAmplitudeIndex: UInt8
    ) -> [UInt8] {
        let hf = highBandField(hertz: highFrequency)
        let lf = lowBandField(hertz: lowFrequency)
        let ha = min(highAmplitudeIndex, maximumAmplitudeIndex)
        let la = min(lowAmplitudeIndex, maximumAmplitudeIndex)
        return [
            UInt8(truncatingIfNeeded: hf),
            UInt8(truncatingIfNeeded: hf >> 8) | ha << 1,
            lf | (la & 1) << 7,
            0x40 + (la >> 1),
        ]
    }

    /// The 4 bytes of one actuator playing one tone: the band split this backend uses.
    ///
    /// The tone goes to the low band when its frequency is within the low band's range (41–626 Hz) and
    /// to the high band above it (up to 1253 Hz); the other band stays silent at its default frequency.
    /// One band per tone, because the two bands add on the same actuator: playing one frequency on both
    /// would double the drive past the safe amplitude. Amplitude 1 is `maximumSafeAmplitude` on that band.
    /// An amplitude that rounds to index 0 gives `neutral`, whatever the frequency.
    ///
    /// - Parameters:
    ///   - amplitude: The normalized amplitude, 0…1 (clamped; NaN is 0).
    ///   - frequency: The tone in Hz, clamped to 41…1253; NaN means `defaultLowFrequency`.
    public static func actuator(amplitude: Double, frequency: Double) -> [UInt8] {
        let index = amplitudeIndex(amplitude: RumbleState.unitInterval(amplitude) * maximumSafeAmplitude)
        guard index > 0 else { return neutral }
        let hertz =
            frequency.isNaN
            ? defaultLowFrequency : min(max(frequency, frequencyRange.lowerBound), frequencyRange.upperBound)
        if hertz <= lowBandRange.upperBound {
            return encode(
                highFrequency: defaultHighFrequency, highAmplitudeIndex: 0, lowFrequency: hertz, lowAmplitudeIndex: index)
        }
        return encode(
            highFrequency: hertz, highAmplitudeIndex: index, lowFrequency: defaultLowFrequency, lowAmplitudeIndex: 0)
    }
}
