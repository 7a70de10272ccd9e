#if canImport(Glibc)
import Glibc
#endif

/// What a listener tunes when live audio drives an actuator. Every option has a default that suits
/// music, games and speech alike.
public struct LiveHapticsOptions: Sendable, Hashable {
    /// The band whose energy drives the actuator, Hz; nil (the default): the device's usable band
    /// from its calibration profile, else 30 … 250 Hz (what a motor renders: kick drums, bass).
    public var band: ClosedRange<Double>?
    /// How fast the envelope rises, seconds. Default 0.002 s.
    public var attack = 0.002
    /// How fast it falls, seconds. Default 0.06 s.
    public var release = 0.06
    /// How long the automatic gain remembers a loud passage, seconds (its level falls by 1/e in this
    /// time). Default 3 s.
    public var gainMemory = 3.0
    /// Audio quieter than this, in dBFS of the band's envelope, is silence: the gain never lifts
    /// noise. Default −50 dBFS.
    public var gate = -50.0
    /// How much an onset (a hit, a consonant) adds above the envelope, 0 (none) … 1 (to full
    /// intensity). Default 0.5.
    public var onsetEmphasis = 0.5
    /// Scales every intensity, 0 … 1. Default 1.
    public var intensity = 1.0

    /// The defaults.
    public init() {}

    /// Where ``band``'s low edge may lie, Hz.
    public static let bandLowRange = 1.0...20_000
    /// The highest ``band``'s high edge may reach, Hz.
    public static let bandHighLimit = 24_000.0
    /// The range of ``gate``, dBFS.
    public static let gateRange = -120.0...0
    /// The range of ``onsetEmphasis``.
    public static let onsetEmphasisRange = 0.0...1
    /// The range of ``intensity``.
    public static let intensityRange = 0.0...1

    /// Checks every option's range.
    /// - Throws: ``AudioToHapticsError/option(_:value:range:)`` naming the option, its value and range.
    public func validate() throws(AudioToHapticsError) {
        let check = AudioToHapticsError.check
        if let band {
            try check("band low", band.lowerBound, Self.bandLowRange)
            try check("band high", band.upperBound, band.lowerBound...Self.bandHighLimit)
        }
        try check("attack", attack, 0.0001...1)
        try check("release", release, 0.001...10)
        try check("gain memory", gainMemory, 0.1...600)
        try check("gate", gate, Self.gateRange)
        try check("onset emphasis", onsetEmphasis, Self.onsetEmphasisRange)
        try check("intensity", intensity, Self.intensityRange)
    }
}

/// What the live analysis says the actuator should do after a block of audio.
public struct LiveHapticsLevel: Sendable, Hashable {
    /// How strongly to drive, 0 … 1: the band's envelope over the automatic gain, with onsets emphasised.
    public var intensity: Double
    /// How sharp, 0 … 1: the audio's brightness (an estimate of its centroid, 80 Hz → 0, 8 kHz → 1).
    public var sharpness: Double
    /// Whether an onset began in the block.
    public var onset: Bool
    /// The band's envelope, dBFS (−∞ in silence).
    public var bandLevel: Double
}

/// Live audio to haptics, one block at a time, with no allocation and a fixed cost per sample:
/// the mono mix through a band-pass (two RBJ biquads: a high-pass at the band's low edge, a
/// low-pass at its high edge), an envelope follower, an automatic gain (the envelope over its
/// slowly falling peak, never lifting what the gate calls silence), and onset emphasis (a fast
/// envelope of the whole signal rising well above a slow one adds a decaying accent).
///
/// The brightness is the RMS frequency of the mix, read from how fast it changes: for a signal of
/// mean square *P* whose first difference has mean square *D*, √(D/P) = 2 sin(π f / rate) for
/// a sine of frequency *f*; for any signal it is the spectrum's RMS frequency, a centroid that
/// costs two multiplications a sample. The same logarithmic map as the file conversion turns it
/// into sharpness.
public struct LiveAudioFollower: Sendable {
    /// The capture's rate, Hz.
    public let rate: Double
    /// The band-pass, Hz.
    public let band: ClosedRange<Double>
    /// The options.
    public let options: LiveHapticsOptions

    private var highPass: Biquad
    private var lowPass: Biquad
    private let attack: Double, release: Double, gainFall: Double, fastRelease: Double, slowRelease: Double, meanSquare: Double
    private let gate: Double
    private var envelope = 0.0
    private var peak = 0.0
    private var fast = 0.0
    private var slow = 0.0
    private var accent = 0.0
    private let accentFall: Double
    private var power = 0.0
    private var slope = 0.0
    private var previous = 0.0
    private var armed = true

    /// A follower for audio at `rate` Hz.
    /// - Throws: ``AudioToHapticsError``: an option out of range, a rate outside 8 … 384 kHz, or a
    ///   band reaching the rate's Nyquist frequency.
    public init(rate: Double, band: ClosedRange<Double>, options: LiveHapticsOptions = LiveHapticsOptions()) throws(AudioToHapticsError) {
        try options.validate()
        guard rate.isFinite, (8_000...384_000).contains(rate) else { throw .sampleRate(rate) }
        guard band.lowerBound >= 1, band.upperBound < rate / 2, band.lowerBound < band.upperBound else {
            throw .option("band", value: band.upperBound, range: "1…\(rate / 2) Hz, low below high")
        }
        self.rate = rate
        self.band = band
        self.options = options
        highPass = Biquad(highPassAt: band.lowerBound, rate: rate)
        lowPass = Biquad(lowPassAt: band.upperBound, rate: rate)
        func coefficient(_ seconds: Double) -> Double { exp(-1 / (seconds * rate)) }
        attack = coefficient(options.attack)
        release = coefficient(options.release)
        gainFall = coefficient(options.gainMemory)
        fastRelease = coefficient(0.010)
        slowRelease = coefficient(0.150)
        meanSquare = coefficient(0.020)
        accentFall = coefficient(0.040)
        gate = pow(10, options.gate / 20)
    }

    /// Takes `frames` interleaved frames of `channels` samples; writes the band-passed mono signal,
    /// scaled by the automatic gain, to `filtered` (when given, at least `frames` long: what a
    /// waveform device plays); returns the level after the block.
    public mutating func process(
        _ samples: UnsafeBufferPointer<Float>, frames: Int, channels: Int, filtered: UnsafeMutableBufferPointer<Float>? = nil
    ) -> LiveHapticsLevel {
        var onset = false
        let scale = 1 / Double(max(channels, 1))
        for frame in 0..<frames {
            var mono = 0.0
            for channel in 0..<channels { mono += Double(samples[frame * channels + channel]) }
            mono *= scale
            if !mono.isFinite { mono = 0 }
            let banded = lowPass.run(highPass.run(mono))
            let magnitude = abs(banded)
            envelope = magnitude > envelope ? magnitude + (envelope - magnitude) * attack : magnitude + (envelope - magnitude) * release
            // The gain's reference: the envelope's peak, falling slowly, never below what the gate calls silence.
            peak = max(envelope, peak * gainFall, gate * 4)
            // Onsets: the whole signal's fast envelope leaping above its slow one.
            let whole = abs(mono)
            fast = whole > fast ? whole : whole + (fast - whole) * fastRelease
            slow = whole + (slow - whole) * slowRelease
            if armed, fast > gate, fast > 2 * slow + gate {
                onset = true
                armed = false
                accent = 1
            } else if fast < 1.2 * slow {
                armed = true
            }
            accent *= accentFall
            // Brightness: mean squares of the signal and of its first difference.
            power = mono * mono + (power - mono * mono) * meanSquare
            let step = mono - previous
            slope = step * step + (slope - step * step) * meanSquare
            previous = mono
            if let filtered { filtered[frame] = Float(envelope > gate ? banded / peak : 0) }
        }
        let level = envelope > gate ? min(envelope / peak, 1) : 0
        if accent < 1e-3 { accent = 0 }
        // The accent lifts the level part of the way to full: a hit stands out of a loud passage too.
        let intensity = min(1, level + accent * options.onsetEmphasis * (1 - level)) * options.intensity
        var sharpness = 0.0
        if power > gate * gate * 1e-2 {
            let ratio = min(sqrt(slope / power) / 2, 1)
            let frequency = rate / .pi * asin(ratio)
            sharpness = Analysis.sharpness(centroid: Float(frequency))
        }
        return LiveHapticsLevel(intensity: intensity, sharpness: sharpness, onset: onset, bandLevel: 20 * log10(envelope))
    }
}

/// A second-order section (RBJ's cookbook, Q = 1/√2: Butterworth), transposed direct form II.
struct Biquad: Sendable {
    private let b0, b1, b2, a1, a2: Double
    private var z1 = 0.0, z2 = 0.0

    init(highPassAt frequency: Double, rate: Double) {
        let (cosine, alpha) = Self.prewarp(frequency, rate)
        let a0 = 1 + alpha
        b0 = (1 + cosine) / 2 / a0
        b1 = -(1 + cosine) / a0
        b2 = b0
        a1 = -2 * cosine / a0
        a2 = (1 - alpha) / a0
    }

    init(lowPassAt frequency: Double, rate: Double) {
        let (cosine, alpha) = Self.prewarp(frequency, rate)
        let a0 = 1 + alpha
        b0 = (1 - cosine) / 2 / a0
        b1 = (1 - cosine) / a0
        b2 = b0
        a1 = -2 * cosine / a0
        a2 = (1 - alpha) / a0
    }

    private static func prewarp(_ frequency: Double, _ rate: Double) -> (cosine: Double, alpha: Double) {
        let omega = 2 * Double.pi * frequency / rate
        return (cos(omega), sin(omega) / (2 * 0.5.squareRoot()))
    }

    @inline(__always)
    mutating func run(_ input: Double) -> Double {
        let output = b0 * input + z1
        z1 = b1 * input - a1 * output + z2
        z2 = b2 * input - a2 * output
        return output
    }
}
