import ArgumentParser

/// `haptic-cal`: list, inspect, play and calibrate haptic devices.
@main
struct HapticCal: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haptic-cal",
        abstract: "List, play and calibrate haptic devices (game controllers, LRA and ERM motors).",
        discussion: """
            Devices come from backend plugins (libhaptics-NAME.so) found on $HAPTICS_PLUGIN_PATH, beside this \
            program, and in ../lib/haptics. Without hardware, the recording backend simulates an LRA \
            (recording:lra), an ERM (recording:erm) and a gamepad (recording:gamepad).
            """,
        subcommands: [List.self, Info.self, Play.self, Trigger.self, Effects.self, Convert.self, Listen.self, Plot.self, Replay.self, Policy.self, Calibrate.self, Verify.self, ProfileCommand.self])
}
