import ArgumentParser
import Foundation
import Haptics
import HapticsAudioAnalysis
import HapticsAudioFile
import HapticsTools

/// `haptic-cal convert INPUT -o OUTPUT`: between AHAP patterns and `.haptic` clips both ways, and
/// from audio to either.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert between AHAP patterns (.ahap) and Lofelt/Meta clips (.haptic), or audio into either.",
        discussion: """
            The formats are told by the files' extensions. A clip becomes a pattern that plays its amplitude envelope \
            (as ramps the engine sums to its straight lines), its frequency as sharpness, and each emphasis as a \
            transient; a pattern becomes a clip of what it renders, thinned to the breakpoints its lines need \
            (within 0.001). Docs/HapticClips.md states the rules and the round trip's tolerances.

            Audio (.wav, .flac, .ogg, .opus, .mp3, .aif, .aiff; any rate and channel count, read through libsndfile) \
            becomes taps at its onsets (loudness as intensity, brightness as sharpness) and a continuous vibration \
            following its low band's envelope, with sharpness from its spectral centroid (Docs/AudioToHaptics.md).
            """)

    @Argument(help: ArgumentHelp("The file to read: .ahap, .haptic, or audio.", valueName: "input"))
    var input: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write: .ahap or .haptic (written atomically).", valueName: "output"))
    var output: String

    @Option(help: "Audio: how readily an onset becomes a tap, 0 (only the clearest) … 1 (every bump).")
    var sensitivity = 0.5

    @Option(help: "Audio: the low end of the band driving the continuous vibration, Hz.")
    var bandLow = 20.0

    @Option(help: "Audio: the high end of that band, Hz.")
    var bandHigh = 250.0

    @Option(help: "Audio: at most this many taps per second.")
    var maxDensity = 8.0

    @Option(help: "Audio: taps at least this far apart, seconds.")
    var minGap = 0.05

    @Option(help: "Audio: what to make: both, transients or continuous.")
    var content = "both"

    @Option(help: "Audio: how far the drawn envelope may stray from the analysed one, 0…1 of full scale.")
    var tolerance = 0.03

    @Option(help: "Audio: at most this many envelope breakpoints per second.")
    var maxPoints = 20.0

    @Option(help: ArgumentHelp("Audio: write an SVG plot of the audio's envelope, the onsets and the resulting haptics on one time axis.", valueName: "file"))
    var svg: String?

    /// A file's format, by its extension.
    enum Format: String {
        case ahap, haptic, audio

        static let audioExtensions: Set<String> = ["wav", "flac", "ogg", "oga", "opus", "mp3", "aif", "aiff"]

        init(path: String, role: String, audioAllowed: Bool) throws {
            let ext = path.contains(".") ? (path.split(separator: ".").last.map { $0.lowercased() } ?? "") : ""
            if let format = Format(rawValue: ext), format != .audio {
                self = format
            } else if audioAllowed, Self.audioExtensions.contains(ext) {
                self = .audio
            } else {
                throw ValidationError("\(role) \(path): name an .ahap or a .haptic file\(audioAllowed ? ", or audio (\(Self.audioExtensions.sorted().joined(separator: ", ")))" : "")")
            }
        }
    }

    func options() throws -> AudioToHapticsOptions {
        var options = AudioToHapticsOptions()
        options.sensitivity = sensitivity
        guard bandLow.isFinite, bandHigh.isFinite, bandLow > 0, bandHigh >= bandLow else {
            throw ValidationError("--band-low \(bandLow) and --band-high \(bandHigh): a band of 1…24000 Hz, low ≤ high")
        }
        options.band = bandLow...bandHigh
        options.maximumDensity = maxDensity
        options.minimumGap = minGap
        guard let content = AudioToHapticsOptions.Content(rawValue: content) else {
            throw ValidationError("--content \(content): both, transients or continuous")
        }
        options.content = content
        options.tolerance = tolerance
        options.maximumPointsPerSecond = maxPoints
        do { try options.validate() } catch { throw ValidationError("\(error)") }
        return options
    }

    func run() throws {
        let from = try Format(path: input, role: "input", audioAllowed: true)
        let to = try Format(path: output, role: "output", audioAllowed: false)
        switch (from, to) {
        case (.audio, _):
            let started = Date()
            let (clip, trace) = try AudioConversion.clip(ofFile: input, options: try options(), trace: svg != nil)
            let seconds = Date().timeIntervalSince(started)
            try write(clip, as: to)
            if let svg {
                try writeSVG(AudioConversion.plot(trace: trace, clip: clip, name: (input as NSString).lastPathComponent).render(), to: svg)
                print("wrote \(svg)")
            }
            let taps = clip.amplitude.filter { $0.emphasis != nil }.count
            print(
                "analysed \(fixed(clip.duration, 2)) s of audio in \(fixed(seconds, 2)) s (\(fixed(clip.duration / max(seconds, 1e-6), 0))× real time): "
                    + "\(taps) tap\(taps == 1 ? "" : "s"), \(clip.amplitude.count) amplitude and \(clip.frequency?.count ?? 0) frequency breakpoints")
        case (_, _) where svg != nil:
            throw ValidationError("--svg plots an audio conversion: the input \(input) is not audio")
        case (.ahap, .haptic):
            let pattern = try HapticPattern(contentsOfFile: input)
            let clip = HapticClip(pattern: pattern)
            try write(clip, as: .haptic)
            let audio = pattern.events.filter { !$0.type.isHaptic }.count
            if audio > 0 { print("note: \(audio) audio event\(audio == 1 ? "" : "s") left out: a .haptic clip holds haptics only") }
        case (.haptic, _):
            try write(try HapticClip(contentsOfFile: input), as: to)
        case (.ahap, _):
            try HapticPattern(contentsOfFile: input).writeAHAP(toFile: output)
            print("wrote \(output)")
        }
    }

    /// Writes `clip` to ``output`` as `format`, saying what it wrote.
    func write(_ clip: HapticClip, as format: Format) throws {
        if format == .haptic {
            try clip.writeHaptic(toFile: output)
            let emphases = clip.amplitude.filter { $0.emphasis != nil }.count
            print("wrote \(output): \(clip.amplitude.count) amplitude and \(clip.frequency?.count ?? 0) frequency breakpoints, \(emphases) emphasis, \(fixed(clip.duration, 3)) s")
        } else {
            let pattern = clip.pattern
            try pattern.writeAHAP(toFile: output)
            let transients = pattern.events.filter { $0.type == .hapticTransient }.count
            print("wrote \(output): \(pattern.events.count - transients) continuous and \(transients) transient events, \(fixed(pattern.duration, 3)) s")
        }
    }
}

/// Audio files through the analysis, block by block.
enum AudioConversion {
    /// The haptics of the audio file at `path`, and, with `trace`, what the analysis saw (for a plot).
    /// - Throws: ``AudioToHapticsError/tooLong(seconds:)`` before any analysis when the file says it
    ///   lasts longer than a pattern may, else as soon as that much has been read.
    static func clip(
        ofFile path: String, options: AudioToHapticsOptions, trace: Bool = false
    ) throws -> (clip: HapticClip, trace: [(time: Double, level: Double, band: Double, brightness: Double, flux: Double)]) {
        let reader = try AudioFileReader(path: path)
        let declared = Double(reader.declaredFrames) / reader.sampleRate
        if declared > HapticPattern.maximumTime { throw AudioToHapticsError.tooLong(seconds: declared) }
        var analyzer = try AudioToHaptics(sampleRate: reader.sampleRate, options: options)
        analyzer.reserveCapacity(forSeconds: declared)
        try reader.stream { block in
            analyzer.feed(block)
            // Given up on as soon as it is too long, not after reading an hour more.
            if analyzer.duration > HapticPattern.maximumTime { throw AudioToHapticsError.tooLong(seconds: analyzer.duration) }
        }
        return (try analyzer.finish(), trace ? analyzer.trace() : [])
    }

    /// The plot: the audio (level, the band's amplitude, the flux, each onset marked) over the
    /// haptics (the amplitude envelope, the frequency, the taps), every series at most 4,000 points.
    static func plot(trace: [(time: Double, level: Double, band: Double, brightness: Double, flux: Double)], clip: HapticClip, name: String) -> SVGChart {
        func thin(_ points: [(x: Double, y: Double)]) -> [(x: Double, y: Double)] {
            let stride = max(1, points.count / 4_000)
            return Swift.stride(from: 0, to: points.count, by: stride).map { points[$0] }
        }
        let end = max(clip.duration, trace.last?.time ?? 0, 0.001)
        let taps = clip.amplitude.filter { $0.emphasis != nil }
        let audio = SVGChart.Panel(title: "audio (relative to its loudest)", yRange: 0...1, series: [
            .init(label: "level", points: thin(trace.map { ($0.time, $0.level) }), color: "#999"),
            .init(label: "band", points: thin(trace.map { ($0.time, $0.band) }), color: "#1f77b4"),
            .init(label: "flux", points: thin(trace.map { ($0.time, $0.flux) }), color: "#ff7f0e"),
        ])
        let haptics = SVGChart.Panel(title: "haptics", yRange: 0...1, series: [
            .init(label: "amplitude", points: clip.amplitude.map { ($0.time, $0.amplitude) }, color: "#2ca02c"),
            .init(label: "frequency", points: (clip.frequency ?? []).map { ($0.time, $0.frequency) }, color: "#9467bd"),
            .init(label: "taps", points: taps.map { ($0.time, $0.emphasis!.amplitude) }, style: .dots, color: "#d62728"),
        ])
        let markers = taps.count <= 200 ? taps.map { SVGChart.Marker(x: $0.time, label: "", color: "#d62728") } : []
        return SVGChart(title: "\(name): audio to haptics", xLabel: "time (s)", xRange: 0...end, panels: [audio, haptics], markers: markers)
    }
}
