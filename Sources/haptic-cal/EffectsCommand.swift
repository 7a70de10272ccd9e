import ArgumentParser
import Haptics
import HapticsTools

/// `haptic-cal effects`: the feedback vocabulary.
struct Effects: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the feedback effects `play` accepts by name, by platform and the version that introduced them.")

    @Flag(help: "Print the table of Docs/Vocabulary.md (Markdown): every effect, what it plays and what it means.")
    var markdown = false

    func run() {
        if markdown {
            print(VocabularyTable.markdown(), terminator: "")
            return
        }
        for family in FeedbackEffect.Family.allCases {
            let effects = FeedbackEffect.effects(of: family)
            // Versions in the order the table first names them.
            var versions: [String] = []
            for effect in effects where !versions.contains(effect.introduced) { versions.append(effect.introduced) }
            for version in versions {
                print("\(family.rawValue), \(version):")
                for effect in effects where effect.introduced == version {
                    let events = effect.pattern.hapticEvents
                    let taps = events.filter { $0.type == .hapticTransient }.count
                    let buzzes = events.count - taps
                    var shape: [String] = []
                    if taps > 0 { shape.append("\(taps) tap\(taps == 1 ? "" : "s")") }
                    if buzzes > 0 { shape.append("\(buzzes) buzz\(buzzes == 1 ? "" : "es")") }
                    let form = "\(shape.joined(separator: ", ")) over \(fixed(effect.pattern.duration * 1000, 0)) ms"
                    print("  \(pad(effect.name, 44)) \(pad(effect.kind, 13)) \(pad(form, 22)) \(effect.meaning)")
                }
            }
        }
    }
}
