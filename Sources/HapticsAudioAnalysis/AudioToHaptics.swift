import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// What a designer tunes when turning audio into haptics. Every option has a default that suits
/// music and sound effects alike.
public struct AudioToHapticsOptions: Sendable, Hashable {
    /// What the result holds.
    public enum Content: String, Sendable, Hashable, CaseIterable {
        /// The low-band envelope as a continuous vibration, and a tap at each onset.
        case both
        /// Taps at onsets only.
        case transients
        /// The continuous vibration only.
        case continuous
    }

    /// How readily an onset becomes a tap, 0 (only the clearest) … 1 (every bump). Default 0.5.
    public var sensitivity = 0.5
    /// The band whose energy drives the continuous vibration, Hz. Default 20 … 250 Hz (what a
    /// body feels: kick drums, bass, rumble).
    public var band: ClosedRange<Double> = 20...250
    /// At most this many taps per second. Default 8.
    public var maximumDensity = 8.0
    /// Taps at least this far apart, seconds. Default 0.05 s.
    public var minimumGap = 0.05
    /// What the result holds. Default ``Content/both``.
    public var content = Content.both
    /// How far the drawn envelope may stray from the analysed one (0 … 1 of full scale). Default 0.03.
    public var tolerance = 0.03
    /// At most this many envelope breakpoints per second (the tolerance grows until they fit). Default 20.
    public var maximumPointsPerSecond = 20.0

    /// The defaults.
    public init() {}

    /// Checks every option's range.
    /// - Throws: ``AudioToHapticsError/option(_:value:range:)``.
    public func validate() throws(AudioToHapticsError) {
        let check = AudioToHapticsError.check
        try check("sensitivity", sensitivity, 0...1)
        try check("band low", band.lowerBound, 1...20_000)
        try check("band high", band.upperBound, band.lowerBound...24_000)
        try check("maximum density", maximumDensity, 0.1...100)
        try check("minimum gap", minimumGap, 0...10)
        try check("tolerance", tolerance, 0.001...0.5)
        try check("maximum points per second", maximumPointsPerSecond, 1...1_000)
    }
}

/// Why audio did not become haptics.
public enum AudioToHapticsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An option outside its range.
    case option(String, value: Double, range: String)
    /// The audio is longer than a pattern may last.
    case tooLong(seconds: Double)
    /// The sample rate cannot be analysed (below 8 kHz or above 384 kHz).
    case sampleRate(Double)

    /// Throws ``option(_:value:range:)`` unless `value` is a finite number within `range`.
    static func check(_ name: String, _ value: Double, _ range: ClosedRange<Double>) throws(AudioToHapticsError) {
        guard value.isFinite, range.contains(value) else { throw .option(name, value: value, range: "\(range.lowerBound)…\(range.upperBound)") }
    }

    public var description: String {
        switch self {
        case .option(let name, let value, let range): "\(name) \(value) is outside \(range)"
        case .tooLong(let seconds):
            "the audio lasts \(Int(seconds)) s; a pattern lasts at most \(Int(HapticPattern.maximumTime)) s: cut it first (for example with sox FILE OUT trim 0 3600)"
        case .sampleRate(let rate): "a sample rate of \(rate) Hz cannot be analysed: 8000…384000 Hz"
        }
    }
}

/// Turns audio into haptics as it streams in: short-time spectra every 5 ms, and from them the
/// onsets (spectral flux against an adaptive threshold), each onset's loudness and brightness,
/// the low band's envelope and the spectral centroid. Memory: one analysis window and five numbers
/// per hop, whatever the audio's length. `Docs/AudioToHaptics.md` says how each step works.
///
/// ```swift
/// var analyzer = try AudioToHaptics(sampleRate: 48_000)
/// analyzer.feed(monoSamples)            // as many times as there are blocks
/// let clip = try analyzer.finish()      // a HapticClip: clip.pattern plays it, clip.hapticText() writes it
/// ```
public struct AudioToHaptics: Sendable {
    /// One hop's features.
    struct Hop: Sendable {
        /// RMS of the hop's samples (full band).
        var level: Float
        /// Energy in the options' band.
        var bandEnergy: Float
        /// Spectral centroid, Hz.
        var centroid: Float
        /// Spectral flux of the log magnitudes.
        var flux: Float
    }

    /// The rate being analysed, Hz.
    public let sampleRate: Double
    /// The options.
    public let options: AudioToHapticsOptions
    /// Samples between analyses.
    let hop: Int
    /// The analysis window, samples (a power of two, about 21 ms).
    let window: Int
    private let fft: FFT
    private let hann: [Float]
    private let bandBins: ClosedRange<Int>
    private var ring: [Float]
    private var filled = 0
    private var sinceHop = 0
    private var previous: [Float]
    /// Scratch for one hop's analysis, made once: the windowed frame, the transform, the magnitudes.
    private var frame: [Float], real: [Float], imaginary: [Float], magnitudes: [Float]
    private var hops: [Hop] = []
    private var samples = 0

    /// An analyzer for mono audio at `sampleRate`.
    /// - Throws: ``AudioToHapticsError``.
    public init(sampleRate: Double, options: AudioToHapticsOptions = AudioToHapticsOptions()) throws(AudioToHapticsError) {
        try options.validate()
        guard sampleRate.isFinite, (8_000...384_000).contains(sampleRate) else { throw .sampleRate(sampleRate) }
        self.sampleRate = sampleRate
        self.options = options
        var window = 256
        while Double(window) < sampleRate * 0.02 { window *= 2 }
        self.window = window
        hop = max(1, Int((sampleRate * 0.005).rounded()))
        fft = FFT(size: window)
        hann = (0..<window).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(window))) }
        let binWidth = sampleRate / Double(window)
        let low = max(1, Int((options.band.lowerBound / binWidth).rounded(.down)))
        bandBins = low...max(low, min(window / 2, Int((options.band.upperBound / binWidth).rounded(.up))))
        ring = [Float](repeating: 0, count: window)
        previous = [Float](repeating: 0, count: window / 2 + 1)
        frame = [Float](repeating: 0, count: window)
        real = frame
        imaginary = frame
        magnitudes = previous
    }

    /// Seconds analysed so far.
    public var duration: Double { Double(samples) / sampleRate }

    /// Makes room for the features of `seconds` of audio at once (16 bytes per 5 ms hop, 11.5 MB
    /// for an hour), so a long file's features never move to a larger copy mid-way. At most an
    /// hour (a pattern's length) is reserved.
    public mutating func reserveCapacity(forSeconds seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        hops.reserveCapacity(Int(min(seconds, HapticPattern.maximumTime) * sampleRate) / hop + 1)
    }

    /// Analyses `block` (mono samples, −1 … 1; non-finite samples count as 0).
    public mutating func feed(_ block: UnsafeBufferPointer<Float>) {
        for sample in block {
            ring[filled % window] = sample.isFinite ? max(-1, min(1, sample)) : 0
            filled += 1
            sinceHop += 1
            samples += 1
            if sinceHop == hop {
                sinceHop = 0
                analyseHop()
            }
        }
    }

    /// ``feed(_:)`` from an array.
    public mutating func feed(_ block: [Float]) {
        block.withUnsafeBufferPointer { feed($0) }
    }

    /// The window ending now: its spectrum's features.
    private mutating func analyseHop() {
        let start = filled - window
        var level: Float = 0
        for index in 0..<window {
            let position = start + index
            let sample: Float = position >= 0 ? ring[position % window] : 0
            frame[index] = sample * hann[index]
            if index >= window - hop { level += sample * sample }
        }
        level = (level / Float(hop)).squareRoot()
        frame.withUnsafeBufferPointer { input in
            real.withUnsafeMutableBufferPointer { re in
                imaginary.withUnsafeMutableBufferPointer { im in
                    magnitudes.withUnsafeMutableBufferPointer { fft.magnitudes(of: input, real: re, imaginary: im, into: $0) }
                }
            }
        }
        let binWidth = Float(sampleRate) / Float(window)
        var weighted: Float = 0, total: Float = 0, band: Float = 0, flux: Float = 0
        for bin in 1..<magnitudes.count {
            let magnitude = magnitudes[bin]
            weighted += Float(bin) * binWidth * magnitude
            total += magnitude
            if bandBins.contains(bin) { band += magnitude * magnitude }
            // Log-compressed magnitudes: a quiet onset counts, a loud sustain does not swamp it.
            let compressed = log1pf(100 * magnitude)
            flux += max(0, compressed - previous[bin])
            previous[bin] = compressed
        }
        hops.append(Hop(level: level, bandEnergy: band, centroid: total > 0 ? weighted / total : 0, flux: flux))
    }

    /// The haptics of everything fed: a clip whose amplitude envelope follows the band's energy,
    /// whose frequency follows the spectral centroid, and whose emphasis marks each onset.
    /// - Throws: ``AudioToHapticsError/tooLong(seconds:)``.
    public func finish() throws(AudioToHapticsError) -> HapticClip {
        guard duration <= HapticPattern.maximumTime else { throw .tooLong(seconds: duration) }
        let analysis = Analysis(hops: hops, hopSeconds: Double(hop) / sampleRate, windowSeconds: Double(window) / sampleRate, options: options)
        return analysis.clip(duration: duration)
    }

    /// What the analysis saw, for plots: at each hop's window centre (seconds), the level and the
    /// band's amplitude relative to their loudest (0 … 1), the brightness as sharpness (0 … 1) and
    /// the spectral flux relative to its largest (0 … 1).
    public func trace() -> [(time: Double, level: Double, band: Double, brightness: Double, flux: Double)] {
        let analysis = Analysis(hops: hops, hopSeconds: Double(hop) / sampleRate, windowSeconds: Double(window) / sampleRate, options: options)
        let level = Double(hops.map(\.level).max() ?? 0), band = Double(hops.map(\.bandEnergy).max() ?? 0), flux = Double(hops.map(\.flux).max() ?? 0)
        return hops.indices.map { index in
            let hop = hops[index]
            return (
                max(0, analysis.centre(index)), level > 0 ? Double(hop.level) / level : 0, band > 0 ? (Double(hop.bandEnergy) / band).squareRoot() : 0,
                Analysis.sharpness(centroid: hop.centroid), flux > 0 ? Double(hop.flux) / flux : 0
            )
        }
    }

    /// The onsets found so far: times in seconds, with their tap's intensity and sharpness.
    public func onsets() -> [(time: Double, intensity: Double, sharpness: Double)] {
        Analysis(hops: hops, hopSeconds: Double(hop) / sampleRate, windowSeconds: Double(window) / sampleRate, options: options).onsets()
    }
}

/// The hops' flux as doubles, read in place (no copy of a value per hop).
private struct FluxView: RandomAccessCollection {
    let hops: [AudioToHaptics.Hop]
    var startIndex: Int { 0 }
    var endIndex: Int { hops.count }
    subscript(index: Int) -> Double { Double(hops[index].flux) }
}

/// The features of a whole stream, turned into a clip.
struct Analysis {
    let hops: [AudioToHaptics.Hop]
    let hopSeconds: Double
    let windowSeconds: Double
    let options: AudioToHapticsOptions

    /// Quieter than this below the loudest hop (dB) is silence: no tap, no vibration.
    static let silenceDecibels = -40.0

    /// The time a hop's window is centred on, s (its window ends at the hop's end).
    func centre(_ index: Int) -> Double { Double(index + 1) * hopSeconds - windowSeconds / 2 }

    var peakLevel: Float { hops.reduce(Float(0)) { max($0, $1.level) } }

    /// Sharpness 0 … 1 from a centroid: logarithmic from 80 Hz (0) to 8 kHz (1).
    static func sharpness(centroid: Float) -> Double {
        guard centroid > 0 else { return 0 }
        return max(0, min(1, log(Double(centroid) / 80) / log(100)))
    }

    func onsets() -> [(time: Double, intensity: Double, sharpness: Double)] {
        guard options.content != .continuous, hops.count > 2 else { return [] }
        let peak = peakLevel
        guard peak > 1e-5 else { return [] }
        let flux = FluxView(hops: hops)
        let fluxPeak = Double(hops.reduce(Float(0)) { max($0, $1.flux) })
        guard fluxPeak > 0 else { return [] }
        // Adaptive threshold: the median of the flux around (±0.1 s) times a factor, plus a small
        // share of the largest flux; the sensitivity lowers both (factor 3.2 … 1.2, share 10 … 1 %).
        let half = max(2, Int((0.1 / hopSeconds).rounded()))
        let factor = 1.2 + 2 * (1 - options.sensitivity)
        let offset = fluxPeak * (0.01 + 0.09 * (1 - options.sensitivity))
        let neighbourhood = max(1, Int((0.015 / hopSeconds).rounded()))
        var candidates: [(index: Int, strength: Double)] = []
        for index in flux.indices.dropFirst() {
            let value = flux[index]
            let low = max(0, index - half), high = min(flux.count - 1, index + half)
            guard (max(0, index - neighbourhood)...min(flux.count - 1, index + neighbourhood)).allSatisfy({ flux[$0] <= value }) else { continue }
            var around = Array(flux[low...high])
            around.sort()
            let threshold = around[around.count / 2] * factor + offset
            guard value > threshold else { continue }
            candidates.append((index, value))
        }
        // At least the minimum gap, and the density, between taps: the stronger of two close ones stays.
        let gap = max(options.minimumGap, 1 / options.maximumDensity)
        var kept: [(index: Int, strength: Double)] = []
        for candidate in candidates {
            if let last = kept.last, Double(candidate.index - last.index) * hopSeconds < gap {
                if candidate.strength > last.strength { kept[kept.count - 1] = candidate }
                continue
            }
            kept.append(candidate)
        }
        let ahead = max(1, Int((0.03 / hopSeconds).rounded()))
        // An onset brings the level up: the loudest hop of the 30 ms after it at least this many
        // dB over the mean of the 30 ms before (4 … 0.5 dB as the sensitivity rises), so a steady
        // tone's flicker and a sound's abrupt end are no onsets.
        let rise = 4 - 3.5 * options.sensitivity
        return kept.compactMap { candidate in
            // Loudness: the loudest hop in the 30 ms from the onset, in dB below the loudest of all.
            let window = candidate.index...min(hops.count - 1, candidate.index + ahead)
            let level = window.map { hops[$0].level }.max() ?? 0
            let decibels = 20 * log10(Double(max(level, 1e-9)) / Double(peak))
            guard decibels > Self.silenceDecibels else { return nil }
            let before = max(0, candidate.index - ahead - 1)..<max(0, candidate.index - 1)
            if !before.isEmpty {
                let mean = before.map { Double(hops[$0].level) }.reduce(0, +) / Double(before.count)
                guard 20 * log10(Double(max(level, 1e-9)) / max(mean, 1e-9)) >= rise else { return nil }
            }
            let intensity = max(0.05, min(1, 1 + decibels / -Self.silenceDecibels))
            let brightest = window.map { hops[$0].centroid }.max() ?? 0
            // An onset enters the window at its newest end; the flux rises most as it reaches a
            // quarter of the window in (the Hann window's steepest slope).
            let time = max(0, Double(candidate.index + 1) * hopSeconds - windowSeconds * 0.25)
            return (time, intensity, Self.sharpness(centroid: brightest))
        }
    }

    func clip(duration: Double) -> HapticClip {
        let peak = peakLevel
        let silent = peak <= 1e-5
        let bandPeak = hops.reduce(Float(0)) { max($0, $1.bandEnergy) }
        let continuous = options.content != .transients && !silent && bandPeak > 0
        // The envelope and the brightness at full resolution are never held: each pass below walks
        // the hops again (no transform: a few operations a hop), so memory holds the hops' features
        // (16 bytes each) and the breakpoints kept, however long the audio.
        func envelope(_ emit: (Double, Double) -> Void) {
            guard continuous else { return }
            series(peak: peak, bandPeak: bandPeak) { time, amplitude, _ in emit(time, amplitude) }
            emit(duration, 0)
        }
        func brightness(_ emit: (Double, Double) -> Void) {
            guard continuous else { return }
            series(peak: peak, bandPeak: bandPeak) { time, amplitude, sharpness in if amplitude > 0 { emit(time, sharpness) } }
        }
        let onsets = onsets()
        // Thin to the tolerance, growing it until the breakpoints per second fit (counted in a pass
        // that keeps nothing), then thinned once more, kept.
        let span = max(duration, hopSeconds)
        func thin(_ series: ((Double, Double) -> Void) -> Void) -> [(time: Double, value: Double, keep: Bool)] {
            var tolerance = options.tolerance
            while tolerance < 1 {
                var count = 0
                Self.thinned(series, tolerance: tolerance) { _ in count += 1 }
                if Double(count) / span <= options.maximumPointsPerSecond { break }
                tolerance *= 1.5
            }
            var result: [(time: Double, value: Double, keep: Bool)] = []
            Self.thinned(series, tolerance: tolerance) { result.append($0) }
            return result
        }
        var amplitude = thin(envelope).map { HapticClip.AmplitudePoint(time: $0.time, amplitude: min(1, max(0, $0.value))) }
        // Each onset an emphasis on a breakpoint of its own, on the envelope.
        for onset in onsets {
            let level = envelopeValue(amplitude, at: onset.time)
            let point = HapticClip.AmplitudePoint(
                time: onset.time, amplitude: level, emphasis: HapticClip.Emphasis(amplitude: max(onset.intensity, level), frequency: onset.sharpness))
            if let same = amplitude.lastIndex(where: { $0.time == onset.time }) {
                amplitude[same].emphasis = point.emphasis
            } else {
                let index = amplitude.firstIndex { $0.time > onset.time } ?? amplitude.count
                amplitude.insert(point, at: index)
            }
        }
        if amplitude.isEmpty { amplitude = [HapticClip.AmplitudePoint(time: 0, amplitude: 0)] }
        let thinnedFrequency = thin(brightness).map { HapticClip.FrequencyPoint(time: $0.time, frequency: min(1, max(0, $0.value))) }
        var metadata = HapticClip.Metadata(editor: "swift-haptics audio-to-haptics")
        metadata.description = "sensitivity \(options.sensitivity), band \(Int(options.band.lowerBound))–\(Int(options.band.upperBound)) Hz, \(options.content.rawValue)"
        // Every value was clamped and every time is from 0 to the duration, in order.
        return (try? HapticClip(metadata: metadata, amplitude: amplitude, frequency: thinnedFrequency.isEmpty ? nil : thinnedFrequency))
            ?? (try! HapticClip(amplitude: [HapticClip.AmplitudePoint(time: 0, amplitude: 0)]))
    }

    /// The low band's amplitude relative to its loudest through a follower (5 ms attack, 60 ms
    /// release), and the brightness as sharpness following it while it sounds: `emit(time,
    /// amplitude, sharpness)` for each hop, at its window's centre.
    private func series(peak: Float, bandPeak: Float, _ emit: (Double, Double, Double) -> Void) {
        let attack = 1 - exp(-hopSeconds / 0.005), release = 1 - exp(-hopSeconds / 0.06)
        var followed = 0.0
        var centroid = 0.0
        for index in hops.indices {
            let hop = hops[index]
            var target = (Double(hop.bandEnergy) / Double(bandPeak)).squareRoot()
            // Silence gate: the band, or the whole signal, far below the loudest.
            if 20 * log10(max(target, 1e-9)) < Self.silenceDecibels || 20 * log10(Double(max(hop.level, 1e-9)) / Double(peak)) < Self.silenceDecibels {
                target = 0
            }
            followed += (target - followed) * (target > followed ? attack : release)
            if followed < 0.01 { followed = target > 0 ? followed : 0 }
            if followed > 0 { centroid += (Self.sharpness(centroid: hop.centroid) - centroid) * (centroid == 0 ? 1 : release) }
            emit(max(0, centre(index)), followed, centroid)
        }
    }

    /// Most points thinned at once: a series is thinned in runs of this many, the point where two
    /// runs meet kept (one more breakpoint every 10 s of audio at most), so thinning holds a run,
    /// never the series.
    static let thinningRun = 2_048

    /// The points of `series` (`(time, value)` calls) thinned to `tolerance` (``HapticClip/thinned(_:tolerance:)``)
    /// run by run, each kept point passed to `keep` in order.
    static func thinned(
        _ series: ((Double, Double) -> Void) -> Void, tolerance: Double, _ keep: @escaping ((time: Double, value: Double, keep: Bool)) -> Void
    ) {
        var run: [(time: Double, value: Double, keep: Bool)] = []
        run.reserveCapacity(thinningRun)
        func flush(last: Bool) {
            let kept = HapticClip.thinned(run, tolerance: tolerance)
            // The run's last point opens the next run (unless this is the end).
            for point in last ? kept[...] : kept.dropLast() { keep(point) }
            if let end = run.last, !last { run = [end] } else { run.removeAll(keepingCapacity: true) }
        }
        series { time, value in
            run.append((time, value, false))
            if run.count == thinningRun { flush(last: false) }
        }
        if !run.isEmpty { flush(last: true) }
    }

    /// The envelope of `points` at `time` (linear; 0 outside).
    private func envelopeValue(_ points: [HapticClip.AmplitudePoint], at time: Double) -> Double {
        guard let first = points.first, let last = points.last, time >= first.time, time <= last.time else { return 0 }
        guard let upper = points.firstIndex(where: { $0.time > time }), upper > 0 else { return last.amplitude }
        let a = points[upper - 1], b = points[upper]
        return a.amplitude + (b.amplitude - a.amplitude) * (time - a.time) / (b.time - a.time)
    }
}
