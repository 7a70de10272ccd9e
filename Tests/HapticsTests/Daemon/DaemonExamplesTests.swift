import Foundation
import Haptics
import Testing

/// The client examples in Examples/, run against the service: C with sd-bus, Python with dbus-python.
@Suite("hapticsd: the C and Python examples")
struct DaemonExamplesTests {
    @Test("Examples/C/haptics-play.c, built with cc and pkg-config libsystemd: lists the devices, plays, waits for Ended; errors by name")
    func cExample() throws {
        let rig = try DaemonRig()
        let binary = rig.directory + "/haptics-play"
        let flags = try TestSupport.run("/usr/bin/pkg-config", ["--cflags", "--libs", "libsystemd"])
        #expect(flags.status == 0, "\(flags.output)")
        let build = try TestSupport.run(
            "/usr/bin/env", ["cc", "-Wall", "-Wextra", "-Werror", "-o", binary, TestSupport.packageRoot + "/Examples/C/haptics-play.c"]
                + flags.output.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty })
        #expect(build.status == 0, "\(build.output)")
        let (status, output) = try rig.run([binary])
        #expect(status == 0, "\(output)")
        #expect(output.contains("recording:lra: Simulated 175 Hz LRA [default]"), "\(output)")
        #expect(output.contains("impact.medium: played as /org/swifthaptics/Haptics1/player/"), "\(output)")
        #expect(output.contains("ended: finished"), "\(output)")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").map(\.channels) == (try InProcessReference.effect("impact.medium")))

        let gamepad = try rig.run([binary, "notification.warning", "0.5", "recording:gamepad"])
        #expect(gamepad.status == 0 && gamepad.output.contains("ended: finished"), "\(gamepad.output)")
        let bad = try rig.run([binary, "impact.enormous"])
        #expect(bad.status == 1 && bad.output.contains("error: org.swifthaptics.Haptics1.Error.UnknownEffect: effect: no effect 'impact.enormous'"), "\(bad.output)")
    }

    @Test("Examples/Python/haptics_play.py (dbus-python): devices, an effect waited for, a pattern, the policy, errors by name")
    func pythonExample() throws {
        let rig = try DaemonRig()
        let script = TestSupport.packageRoot + "/Examples/Python/haptics_play.py"
        let devices = try rig.run(["/usr/bin/python3", script, "devices"])
        #expect(devices.status == 0 && devices.output.contains("recording:lra: Simulated 175 Hz LRA: main (lra) [default]"), "\(devices.output)")
        let effect = try rig.run(["/usr/bin/python3", script, "effect", "selection", "--intensity", "0.4"])
        #expect(effect.status == 0 && effect.output.contains("selection: played as") && effect.output.contains("ended: finished"), "\(effect.output)")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").map(\.channels) == (try InProcessReference.effect("selection", intensity: 0.4)))

        let file = rig.directory + "/tap.ahap"
        try HapticPattern.transient(intensity: 0.7, sharpness: 0.9).writeAHAP(toFile: file)
        let pattern = try rig.run(["/usr/bin/python3", script, "pattern", file, "--device", "recording:gamepad"])
        #expect(pattern.status == 0 && pattern.output.contains("ended: finished"), "\(pattern.output)")
        let policy = try rig.run(["/usr/bin/python3", script, "policy"])
        #expect(policy.status == 0 && policy.output.contains("intensity-scale: 1.0") && policy.output.contains("profile: full"), "\(policy.output)")
        let bad = try rig.run(["/usr/bin/python3", script, "effect", "selection", "--intensity", "4"])
        #expect(bad.status == 1 && bad.output.contains("org.swifthaptics.Haptics1.Error.InvalidValue: intensity: 4.0 is outside 0…1"), "\(bad.output)")
    }
}
