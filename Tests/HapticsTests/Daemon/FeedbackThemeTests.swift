import Foundation
import Haptics
import HapticsDaemon
import Testing

/// feedbackd themes as hapticsd reads them: feedbackd's JSON as is, `parent-name` chains, device
/// themes, profiles, the mapping of each feedback type to a pattern, and the default theme.
@Suite("hapticsd: feedbackd themes")
struct FeedbackThemeTests {
    static let fixtures = TestSupport.packageRoot + "/Tests/Fixtures/feedbackd-themes"

    static func search(compatibles: [String] = [], config: String? = nil) -> ThemeSearch {
        ThemeSearch(
            userConfigDirectory: config, dataDirectories: [fixtures + "/data"], themeDirectories: [fixtures, DaemonRig.themes], compatibles: compatibles)
    }

    /// Every event name of feedbackd's event naming spec (doc/Event-naming-spec-0.0.0.md).
    static let specEvents = [
        "alarm-clock-elapsed", "camera-focus", "camera-shutter", "message-missed-email", "message-missed-instant", "message-missed-sms",
        "message-new-email", "message-new-instant", "message-new-sms", "phone-failure", "phone-hangup", "phone-incoming-call", "phone-missed-call",
        "phone-outgoing-busy", "timeout-completed", "message-sent-instant", "button-pressed", "button-released", "bell-terminal", "screen-capture",
        "theme-demo", "battery-low", "power-unplug-battery-low", "battery-caution", "battery-full", "device-added", "key-pressed", "key-released",
        "message-missed-notification", "message-new-cellbroadcast", "notification-missed-generic", "notification-new-generic", "power-plug",
        "power-unplug", "window-close",
    ]

    @Test("the default haptic theme gives every event of the naming spec a pattern at full and quiet, and none at silent")
    func defaultTheme() throws {
        let loaded = try Self.search().load(file: nil, name: "default")
        #expect(loaded.files == [DaemonRig.themes + "/default.json"])
        #expect(loaded.warnings.isEmpty)
        #expect(Set(loaded.theme.eventNames) == Set(Self.specEvents))
        for event in Self.specEvents {
            for profile in [FeedbackProfile.full, .quiet] {
                let found = try #require(loaded.theme.hapticFeedback(for: event, at: profile), "\(event) at \(profile)")
                let pattern = try #require(found.feedback.hapticPattern())
                #expect(!pattern.hapticEvents.isEmpty, "\(event) plays something")
                #expect(found.feedback.runLength > 0 && found.feedback.runLength <= 3, "\(event): \(found.feedback.runLength) s")
            }
            #expect(loaded.theme.hapticFeedback(for: event, at: .silent) == nil, "silent: no motor for \(event) (the theme spec's recommendation)")
        }
    }

    @Test("feedbackd's own installed theme (Debian's feedbackd package) is read as is")
    func debianTheme() throws {
        let path = "/usr/share/feedbackd/themes/default.json"
        try #require(FileManager.default.fileExists(atPath: path), "Scripts/install-deps installs feedbackd (for fbcli and this file)")
        let loaded = try Self.search().load(file: path, name: "default")
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        let button = try #require(loaded.theme.hapticFeedback(for: "button-pressed", at: .full))
        #expect(button.section == .quiet, "the full section holds a Sound, the quiet one the rumble")
        if case .vibraRumble(let duration, let count, let pause, let magnitude) = button.feedback {
            #expect(duration > 0 && duration <= 50 && count == 1 && pause == 0 && magnitude == 0.5)
        } else {
            Issue.record("button-pressed is \(button.feedback.typeName)")
        }
        #expect(loaded.theme.hapticFeedback(for: "button-pressed", at: .silent) == nil)
        #expect(loaded.theme.hapticFeedback(for: "phone-incoming-call", at: .quiet)?.feedback.typeName == "VibraPeriodic")
        #expect(loaded.theme.hapticFeedback(for: "battery-caution", at: .full) == nil, "an Led feedback plays nothing here")
    }

    @Test("parent-name chains merge from the root down, each child overriding its parent's feedback for an event")
    func parentChain() throws {
        let loaded = try Self.search().load(file: Self.fixtures + "/grandchild.json", name: "default")
        #expect(loaded.files.map { ($0 as NSString).lastPathComponent } == ["grandchild.json", "child.json", "base.json"])
        #expect(loaded.theme.name == "grandchild")
        #expect(loaded.warnings.count == 1 && loaded.warnings[0].contains("Hologram"), "unknown types are ignored with a warning: \(loaded.warnings)")
        // silent (grandchild's Pattern) comes first in feedbackd's order, then quiet (child's Effect over base's rumble).
        #expect(loaded.theme.hapticFeedback(for: "button-pressed", at: .full)?.feedback.typeName == "Pattern")
        #expect(loaded.theme.profiles[.quiet]?["button-pressed"] == .effect(name: "impact.light", intensity: 1))
        #expect(loaded.theme.profiles[.quiet]?["x-base-only"] == .vibraRumble(durationMs: 40, count: 1, pauseMs: 0, magnitude: 0.3))
        #expect(loaded.theme.profiles[.quiet]?["x-child-only"] == .vibraRumble(durationMs: 20, count: 1, pauseMs: 0, magnitude: 0.5), "lower-case type names work")
        #expect(loaded.theme.profiles[.full]?["button-pressed"] == .other(type: "Sound"))
    }

    @Test("a device theme is found by the device tree's compatible, over hapticsd's default; a user theme by name")
    func deviceAndUserThemes() throws {
        let device = try Self.search(compatibles: ["example,phone", "example,soc"]).load(file: nil, name: "default")
        #expect(device.files.map { ($0 as NSString).lastPathComponent } == ["example,phone.json", "default.json"])
        #expect(device.theme.profiles[.quiet]?["button-pressed"] == .vibraRumble(durationMs: 25, count: 1, pauseMs: 0, magnitude: 0.8))
        #expect(device.theme.hapticFeedback(for: "phone-hangup", at: .quiet) != nil, "the rest comes from the default theme")
        let user = try Self.search(config: Self.fixtures + "/config").load(file: nil, name: "custom")
        #expect(user.theme.profiles[.quiet]?["x-custom"] == .effect(name: "selection", intensity: 0.5))
        #expect(user.files.count == 2)
        #expect(ThemeSearch.deviceTreeCompatibles(path: Self.fixtures + "/no-such-file").isEmpty)
    }

    @Test("feedbackd's arithmetic: rumbles split duration by count less pause, legacy 0…0xFFFF levels, patterns step, fade-in as a curve")
    func feedbackPatterns() throws {
        let rumble = ThemeFeedback.vibraRumble(durationMs: 750, count: 3, pauseMs: 100, magnitude: 0.5)
        let events = try #require(rumble.hapticPattern()).events
        #expect(events.map(\.relativeTime) == [0, 0.25, 0.5])
        #expect(events.map(\.duration) == [0.15, 0.15, 0.15])
        #expect(events.allSatisfy { $0.value(of: .hapticIntensity) == 0.5 && $0.value(of: .hapticSharpness) == ThemeFeedback.rumbleSharpness })
        #expect(rumble.runLength == 0.75)
        // duration / count − pause not positive: feedbackd plays one 1000 ms rumble.
        let degenerate = try #require(ThemeFeedback.vibraRumble(durationMs: 100, count: 2, pauseMs: 80, magnitude: 1).hapticPattern())
        #expect(degenerate.events.map(\.duration) == [1.0])

        let loaded = try Self.search().load(file: Self.fixtures + "/base.json", name: "default")
        let periodic = try #require(loaded.theme.profiles[.quiet]?["phone-incoming-call"])
        #expect(periodic == .vibraPeriodic(durationMs: 10000, magnitude: 32767.0 / 65535, fadeInTimeMs: 2000, fadeInLevel: 8192.0 / 65535))
        let buzz = try #require(periodic.hapticPattern())
        #expect(buzz.events.count == 1 && buzz.events[0].duration == 10)
        let curve = try #require(buzz.parameterCurves.first)
        #expect(curve.id == .hapticIntensityControl)
        #expect(curve.controlPoints.map(\.relativeTime) == [0, 2])
        #expect(abs(curve.controlPoints[0].value - 0.25) < 1e-3, "fades in from fade-in-level / magnitude")

        let steps = try #require(loaded.theme.profiles[.quiet]?["message-new-cellbroadcast"])
        #expect(steps == .vibraPattern(magnitudes: [1, 0, 1], durationsMs: [200, 100, 200]), "magnitudes clamp to 0…1 as feedbackd's do")
        let stepped = try #require(steps.hapticPattern())
        #expect(stepped.events.map(\.relativeTime) == [0, 0.3])
        #expect(steps.runLength == 0.5)

        let long = try #require(ThemeFeedback.vibraPattern(magnitudes: [0.5], durationsMs: [70_000]).hapticPattern())
        #expect(long.events.map(\.duration) == [30, 30, 10], "buzzes longer than a continuous event's 30 s are laid end to end")
    }

    @Test("bad themes: errors name the file, the JSON path, the value and what is allowed; chains that loop or break are refused")
    func badThemes() throws {
        func failure(_ file: String, name: String = "default") -> String {
            do {
                _ = try Self.search().load(file: file.isEmpty ? nil : Self.fixtures + "/" + file, name: name)
                return "loaded"
            } catch {
                return "\(error)"
            }
        }
        let count = failure("bad-count.json")
        #expect(count.contains("bad-count.json") && count.contains("$.profiles[1].feedbacks[0].count") && count.contains("1"), "\(count)")
        let lengths = failure("bad-pattern.json")
        #expect(lengths.contains("$.profiles[0].feedbacks[0]") && lengths.contains("magnitudes has 2 entries and durations 1"), "\(lengths)")
        let profile = failure("bad-profile.json")
        #expect(profile.contains("'loud' is not a profile"), "\(profile)")
        let loop = failure("loop-a.json")
        #expect(loop.contains("deeper than 10"), "\(loop)")
        let orphan = failure("orphan.json")
        #expect(orphan.contains("parent-name 'no-such-theme' not found"), "\(orphan)")
        let defaultParent = failure("default-with-parent.json")
        #expect(defaultParent.contains("the default theme cannot have a parent"), "\(defaultParent)")
        let missing = failure("", name: "nowhere")
        #expect(missing.contains("theme 'nowhere'") && missing.contains("not found"), "\(missing)")
        let unreadable = failure("does-not-exist.json")
        #expect(unreadable.contains("does-not-exist.json") && unreadable.contains("cannot read"), "\(unreadable)")
    }
}
