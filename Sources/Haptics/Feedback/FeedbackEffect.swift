/// A named feedback: what a generator plays, as data.
///
/// ``FeedbackEffect/vocabulary`` lists every effect (iOS, watchOS, macOS and Android's primitives)
/// in one table. Each effect is a short ``HapticPattern``; its ``kind`` groups it for the overuse
/// guard (`selection`, `impact`, `notification`, …).
public struct FeedbackEffect: Sendable, Hashable, Identifiable {
    /// Where the effect comes from.
    public enum Family: String, Sendable, Hashable, CaseIterable {
        /// UIKit's feedback generators (`UIImpactFeedbackGenerator`, …, `UICanvasFeedbackGenerator`).
        case iOS
        /// watchOS's `WKHapticType`.
        case watchOS
        /// macOS's `NSHapticFeedbackManager` patterns.
        case macOS
        /// SwiftUI's `SensoryFeedback` (iOS 17, macOS 14, watchOS 10).
        case swiftUI
        /// Android: composition primitives, predefined effects and `HapticFeedbackConstants`.
        case android
    }

    /// A unique, dotted name: `impact.medium`, `notification.success`, `watch.directionUp`, `android.thud`.
    public let name: String
    /// The platform vocabulary it belongs to.
    public let family: Family
    /// The overuse-guard group (see ``HapticPolicy/minimumInterval(for:)``).
    public let kind: String
    /// The platform version that introduced it (`iOS 10`, `iOS 17.5`, `API 30`).
    public let introduced: String
    /// What the platform says it means, in a line.
    public let meaning: String
    /// What it plays.
    public let pattern: HapticPattern
    /// The pattern prepared for rendering once, so a trigger does not rebuild it.
    let timeline: PatternTimeline

    public var id: String { name }

    /// An effect; `introduced` and `meaning` say where it comes from (empty for an app's own).
    public init(name: String, family: Family, kind: String, pattern: HapticPattern, introduced: String = "", meaning: String = "") {
        self.name = name
        self.family = family
        self.kind = kind
        self.introduced = introduced
        self.meaning = meaning
        self.pattern = pattern
        timeline = PatternTimeline(pattern: pattern)
    }

    public static func == (lhs: FeedbackEffect, rhs: FeedbackEffect) -> Bool {
        lhs.name == rhs.name && lhs.family == rhs.family && lhs.kind == rhs.kind && lhs.pattern == rhs.pattern
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(pattern)
    }

    /// The effect called `name`, if there is one.
    public static func named(_ name: String) -> FeedbackEffect? {
        vocabulary.first { $0.name == name }
    }

    /// The effect with every intensity multiplied by `scale` (0 … 1), as `impactOccurred(intensity:)` does.
    public func scaled(by scale: Double) -> FeedbackEffect {
        let factor = max(0, min(scale, 1))
        let events = pattern.events.map { event in
            var event = event
            event.parameters = event.parameters.map { parameter in
                parameter.id == .hapticIntensity ? HapticEventParameter(parameterID: .hapticIntensity, value: parameter.value * factor) : parameter
            }
            return event
        }
        // Scaling keeps every value in range, so the pattern stays valid.
        let scaled = (try? HapticPattern(events: events, parameters: pattern.parameters, parameterCurves: pattern.parameterCurves)) ?? pattern
        return FeedbackEffect(name: name, family: family, kind: kind, pattern: scaled, introduced: introduced, meaning: meaning)
    }
}

/// Building blocks for the vocabulary table: taps, buzzes and ramps, in seconds and 0 … 1.
enum Shape {
    case tap(at: Double, intensity: Double, sharpness: Double)
    case buzz(at: Double, duration: Double, intensity: Double, sharpness: Double, attack: Double = 0, release: Double = 0)
    /// A buzz whose intensity follows `points` (time within the buzz, intensity-control value).
    case ramp(at: Double, duration: Double, sharpness: Double, points: [(Double, Double)])

    static func pattern(_ shapes: [Shape]) -> HapticPattern {
        var events: [HapticEvent] = []
        var curves: [HapticParameterCurve] = []
        for shape in shapes {
            switch shape {
            case .tap(let time, let intensity, let sharpness):
                events.append(HapticEvent(eventType: .hapticTransient, parameters: parameters(intensity, sharpness), relativeTime: time))
            case .buzz(let time, let duration, let intensity, let sharpness, let attack, let release):
                var list = parameters(intensity, sharpness)
                if attack > 0 { list.append(.init(parameterID: .attackTime, value: attack)) }
                if release > 0 { list.append(.init(parameterID: .releaseTime, value: release)) }
                events.append(HapticEvent(eventType: .hapticContinuous, parameters: list, relativeTime: time, duration: duration))
            case .ramp(let time, let duration, let sharpness, let points):
                events.append(HapticEvent(eventType: .hapticContinuous, parameters: parameters(1, sharpness), relativeTime: time, duration: duration))
                curves.append(HapticParameterCurve(
                    parameterID: .hapticIntensityControl, controlPoints: points.map { .init(relativeTime: $0.0, value: $0.1) }, relativeTime: time))
            }
        }
        do {
            return try HapticPattern(events: events, parameterCurves: curves)
        } catch {
            preconditionFailure("the feedback vocabulary holds an invalid pattern: \(error)")
        }
    }

    private static func parameters(_ intensity: Double, _ sharpness: Double) -> [HapticEventParameter] {
        [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)]
    }
}
