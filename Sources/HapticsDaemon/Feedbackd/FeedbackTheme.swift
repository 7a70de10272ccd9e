import Haptics
import HapticsSupport

/// A theme file or its `parent-name` chain could not be used: which file, where in it, and why.
public struct ThemeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The theme file (or the theme name that could not be found).
    public var file: String
    /// What is wrong, with the JSON path when it is about a value.
    public var problem: String

    /// An error about `file`.
    public init(file: String, problem: String) {
        self.file = file
        self.problem = problem
    }

    public var description: String { "\(file): \(problem)" }
}

/// A feedback theme in feedbackd's JSON format (`doc/Feedback-theme-spec-0.0.0.md`,
/// `doc/feedback-themes.rst`): up to three profile sections (`full`, `quiet`, `silent`), each
/// mapping event names to at most one feedback, and an optional `parent-name` whose feedbacks this
/// theme overrides. Read as is, so feedbackd's own and device themes work unchanged.
public struct FeedbackTheme: Sendable, Hashable {
    /// The theme's `name`.
    public var name: String
    /// The theme it extends (`parent-name`), if any.
    public var parentName: String?
    /// Feedbacks by profile, then by event name.
    public var profiles: [FeedbackProfile: [String: ThemeFeedback]]

    /// A theme with these sections.
    public init(name: String, parentName: String? = nil, profiles: [FeedbackProfile: [String: ThemeFeedback]] = [:]) {
        self.name = name
        self.parentName = parentName
        self.profiles = profiles
    }

    /// Reads a theme file's contents; `file` names it in errors. `warnings` collects what was
    /// ignored (unknown feedback types), as feedbackd ignores it.
    public static func parse(_ bytes: [UInt8], file: String, warnings: inout [String]) throws(ThemeError) -> FeedbackTheme {
        do {
            let root = try JSONCursor(root: JSONParser().parse(bytes)).object()
            let nameCursor = try root.required("name")
            let name = try nameCursor.string()
            guard !name.isEmpty else { throw nameCursor.error("the theme name must not be empty") }
            let parent = try root.optional("parent-name")?.string()
            var theme = FeedbackTheme(name: name, parentName: parent?.isEmpty == true ? nil : parent)
            for section in try root.optional("profiles")?.array() ?? [] {
                let object = try section.object()
                let profileCursor = try object.required("name")
                let profileName = try profileCursor.string()
                guard let profile = FeedbackProfile(name: profileName) else {
                    throw profileCursor.error("'\(profileName)' is not a profile; use full, quiet or silent")
                }
                var feedbacks = theme.profiles[profile] ?? [:]
                for entry in try object.optional("feedbacks")?.array() ?? [] {
                    let feedback = try entry.object()
                    let eventCursor = try feedback.required("event-name")
                    let event = try eventCursor.string()
                    if (try? Validation.eventName(event)) == nil {
                        throw eventCursor.error("'\(event)' is not an event name (a–z 0–9 _ - ., see the event naming spec)")
                    }
                    feedbacks[event] = try ThemeFeedback.parse(feedback, warnings: &warnings)
                }
                theme.profiles[profile] = feedbacks
            }
            return theme
        } catch let error as JSONSyntaxError {
            throw ThemeError(file: file, problem: "\(error)")
        } catch let error as JSONPathError {
            throw ThemeError(file: file, problem: "\(error)")
        } catch {
            throw ThemeError(file: file, problem: "\(error)")
        }
    }

    /// Takes `child`'s feedbacks over this theme's (feedbackd's merge: a feedback of the same
    /// profile and event is replaced, everything else kept); the result carries `child`'s name.
    public mutating func update(with child: FeedbackTheme) {
        name = child.name
        for (profile, feedbacks) in child.profiles {
            profiles[profile, default: [:]].merge(feedbacks) { _, new in new }
        }
    }

    /// The haptic feedback for `event` when the effective profile is `profile`, and the section it
    /// comes from. feedbackd collects the event's feedbacks from the silent section up to `profile`
    /// and runs one haptic feedback at a time, so the first haptic one in that order plays.
    public func hapticFeedback(for event: String, at profile: FeedbackProfile) -> (feedback: ThemeFeedback, section: FeedbackProfile)? {
        for section in FeedbackProfile.allCases where section <= profile {
            if let feedback = profiles[section]?[event], feedback.isHaptic { return (feedback, section) }
        }
        return nil
    }

    /// What hapticsd runs for `event` at the effective profile `profile`, as feedbackd collects an
    /// event's feedbacks (one per section, from the silent section up to `profile`) and keeps those
    /// its devices can render (`fbd_feedback_is_available`): the first haptic feedback, every
    /// `Dummy` (a silent feedback of its `duration`), and the loudest section any of them comes from.
    /// `Sound` and `Led` feedbacks are left out, as feedbackd leaves them out on a machine without a
    /// sound device or LED: hapticsd renders neither. Nil when nothing is left (FeedbackEnded says
    /// "not found").
    public func eventFeedbacks(for event: String, at profile: FeedbackProfile) -> EventFeedbacks? {
        var result = EventFeedbacks()
        for section in FeedbackProfile.allCases where section <= profile {
            guard let feedback = profiles[section]?[event] else { continue }
            if feedback.isHaptic, result.haptic == nil {
                result.haptic = feedback
            } else if case .dummy(let duration) = feedback {
                result.silentMs.append(duration)
            } else {
                continue
            }
            result.section = max(result.section, section)
        }
        return result.haptic == nil && result.silentMs.isEmpty ? nil : result
    }

    /// Every event name the theme mentions, sorted.
    public var eventNames: [String] {
        Set(profiles.values.flatMap(\.keys)).sorted()
    }
}

/// The feedbacks hapticsd runs for one event (``FeedbackTheme/eventFeedbacks(for:at:)``).
public struct EventFeedbacks: Sendable, Hashable {
    /// The haptic feedback, if the event has one at this profile.
    public var haptic: ThemeFeedback?
    /// The durations of its silent `Dummy` feedbacks, in milliseconds.
    public var silentMs: [Int] = []
    /// The loudest section a feedback came from (a profile change below it ends the event).
    public var section = FeedbackProfile.silent

    /// No feedbacks yet.
    public init() {}

    /// How long, in seconds, feedbackd keeps a feedback of run length `run` going for an event with
    /// `timeout` (`fbd-event.c`): once (-1); until ended (0: nil); else it runs again after each run
    /// until the timeout has passed, so the last run ends at the first multiple of `run` at or after
    /// the timeout. A run of no length never repeats (feedbackd would re-run it without end).
    public static func lifetime(run: Double, timeout: Int32) -> Double? {
        guard run > 0, timeout >= 0 else { return max(run, 0) }
        guard timeout > 0 else { return nil }
        return (Double(timeout) / run).rounded(.up) * run
    }
}
