import Foundation
import Haptics

/// The feedback vocabulary as a Markdown table per platform and version: what `Docs/Vocabulary.md`
/// holds (a test keeps the two equal) and `haptic-cal effects --markdown` prints.
public enum VocabularyTable {
    /// Every effect: name, overuse-guard kind, what it plays, and what the platform says it means.
    public static func markdown() -> String {
        var lines: [String] = []
        for family in FeedbackEffect.Family.allCases {
            let effects = FeedbackEffect.effects(of: family)
            var versions: [String] = []
            for effect in effects where !versions.contains(effect.introduced) { versions.append(effect.introduced) }
            for version in versions {
                lines += ["", "### \(title(of: family)), \(version)", "", "| effect | kind | plays | meaning |", "|---|---|---|---|"]
                for effect in effects where effect.introduced == version {
                    lines.append("| `\(effect.name)` | \(effect.kind) | \(shape(of: effect.pattern)) | \(effect.meaning) |")
                }
            }
        }
        return lines.dropFirst().joined(separator: "\n") + "\n"
    }

    static func title(of family: FeedbackEffect.Family) -> String {
        switch family {
        case .iOS: "iOS (UIKit)"
        case .watchOS: "watchOS (WKHapticType)"
        case .macOS: "macOS (NSHapticFeedbackManager)"
        case .swiftUI: "SwiftUI (SensoryFeedback)"
        case .android: "Android"
        }
    }

    /// Each event in time order: `tap 0.70/0.50 at 0 ms` (intensity/sharpness), `buzz 30 ms …`,
    /// a buzz under an intensity curve as a ramp through its points.
    static func shape(of pattern: HapticPattern) -> String {
        func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
        func number(_ value: Double) -> String { fixed(value, 2) }
        return pattern.hapticEvents.map { event in
            let values = "\(number(event.value(of: .hapticIntensity)))/\(number(event.value(of: .hapticSharpness)))"
            let at = "at \(fixed(event.relativeTime * 1000, 0)) ms"
            guard event.type == .hapticContinuous else { return "tap \(values) \(at)" }
            let curve = pattern.parameterCurves.filter { $0.id == .hapticIntensityControl && $0.relativeTime >= event.relativeTime && $0.relativeTime < event.endTime }
            if let curve = curve.first {
                let points = curve.controlPoints.map { number($0.value) }.joined(separator: "→")
                return "ramp \(points) over \(fixed(event.duration * 1000, 0)) ms, sharpness \(number(event.value(of: .hapticSharpness))) \(at)"
            }
            return "buzz \(fixed(event.duration * 1000, 0)) ms \(values) \(at)"
        }.joined(separator: "; ")
    }
}
