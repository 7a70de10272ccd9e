import ArgumentParser
import Haptics

/// `haptic-cal policy`: the user's effective haptics settings.
struct Policy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the effective user policy: on/off, intensity scale, minimum intervals per feedback kind.",
        discussion: "Read from $XDG_CONFIG_HOME/haptics/policy.json (or ~/.config/haptics/policy.json), then HAPTICS_DISABLE and HAPTICS_INTENSITY_SCALE.")

    func run() throws {
        let policy = try HapticPolicy.load()
        print("enabled=\(policy.isEnabled) scale=\(policy.intensityScale)")
        print("settings file: \(HapticPolicy.settingsPath() ?? "none (no HOME or XDG_CONFIG_HOME)")")
        for kind in policy.minimumIntervals.keys.sorted() {
            print("minimum interval \(kind): \(fixed(policy.minimumInterval(for: kind) * 1000, 0)) ms")
        }
    }
}
