import ArgumentParser
import Haptics

/// `haptic-cal effects`: the feedback vocabulary.
struct Effects: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the feedback effects `play` accepts by name.")

    func run() {
        for family in FeedbackEffect.Family.allCases {
            print("\(family.rawValue):")
            for effect in FeedbackEffect.vocabulary where effect.family == family {
                let events = effect.pattern.hapticEvents
                let taps = events.filter { $0.type == .hapticTransient }.count
                let buzzes = events.count - taps
                var shape: [String] = []
                if taps > 0 { shape.append("\(taps) tap\(taps == 1 ? "" : "s")") }
                if buzzes > 0 { shape.append("\(buzzes) buzz\(buzzes == 1 ? "" : "es")") }
                print("  \(pad(effect.name, 24)) \(pad(effect.kind, 13)) \(shape.joined(separator: ", ")) over \(fixed(effect.pattern.duration * 1000, 0)) ms")
            }
        }
    }
}
