import ArgumentParser
import Haptics

/// `haptic-cal convert INPUT -o OUTPUT`: between AHAP patterns and `.haptic` clips, both ways.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert between AHAP patterns (.ahap) and Lofelt/Meta clips (.haptic).",
        discussion: """
            The formats are told by the files' extensions. A clip becomes a pattern that plays its amplitude envelope \
            (as ramps the engine sums to its straight lines), its frequency as sharpness, and each emphasis as a \
            transient; a pattern becomes a clip of what it renders, thinned to the breakpoints its lines need \
            (within 0.001). Docs/HapticClips.md states the rules and the round trip's tolerances.
            """)

    @Argument(help: ArgumentHelp("The file to read: .ahap or .haptic.", valueName: "input"))
    var input: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write: .ahap or .haptic (written atomically).", valueName: "output"))
    var output: String

    /// A file's format, by its extension.
    enum Format: String {
        case ahap, haptic

        init(path: String, role: String) throws {
            let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
            guard path.contains("."), let format = Format(rawValue: ext) else {
                throw ValidationError("\(role) \(path): name an .ahap or a .haptic file")
            }
            self = format
        }
    }

    func run() throws {
        let from = try Format(path: input, role: "input")
        let to = try Format(path: output, role: "output")
        switch (from, to) {
        case (.ahap, .haptic):
            let pattern = try HapticPattern(contentsOfFile: input)
            let clip = HapticClip(pattern: pattern)
            try clip.writeHaptic(toFile: output)
            let emphases = clip.amplitude.filter { $0.emphasis != nil }.count
            print("wrote \(output): \(clip.amplitude.count) amplitude and \(clip.frequency?.count ?? 0) frequency breakpoints, \(emphases) emphasis, \(fixed(clip.duration, 3)) s")
            let audio = pattern.events.filter { !$0.type.isHaptic }.count
            if audio > 0 { print("note: \(audio) audio event\(audio == 1 ? "" : "s") left out: a .haptic clip holds haptics only") }
        case (.haptic, .ahap):
            let pattern = try HapticClip(contentsOfFile: input).pattern
            try pattern.writeAHAP(toFile: output)
            let transients = pattern.events.filter { $0.type == .hapticTransient }.count
            print("wrote \(output): \(pattern.events.count - transients) continuous and \(transients) transient events, \(fixed(pattern.duration, 3)) s")
        case (.ahap, .ahap):
            try HapticPattern(contentsOfFile: input).writeAHAP(toFile: output)
            print("wrote \(output)")
        case (.haptic, .haptic):
            try HapticClip(contentsOfFile: input).writeHaptic(toFile: output)
            print("wrote \(output)")
        }
    }
}
