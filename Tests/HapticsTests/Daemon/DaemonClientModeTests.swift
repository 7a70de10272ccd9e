import Foundation
import Haptics
import HapticsTools
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Swift library plays through hapticsd when it runs and in-process when it does not, with the
/// same public API and the same frames; `haptic-cal list` says which and who owns each device.
@Suite("hapticsd: the Swift library as its client")
struct DaemonClientModeTests {
    static var example: String { TestSupport.buildDirectory + "/haptics-impact-example" }
    static var hapticCal: String { TestSupport.buildDirectory + "/haptic-cal" }

    @Test("a program using ImpactFeedbackGenerator plays through hapticsd when it runs, in-process when it does not, the same frames both ways")
    func impactExample() throws {
        let rig = try DaemonRig()
        let own = rig.directory + "/own.jsonl"
        let environment = ["HAPTICS_RECORDING_OUTPUT": own, "HAPTICS_RECORDING_DEVICES": "lra", "HAPTICS_RECORDING_SIMULATE_WAKE": "0"]
        let expected = try InProcessReference.effect("impact.rigid", intensity: 0.8)

        let through = try rig.run([Self.example, "recording:lra"], environment: environment)
        #expect(through.status == 0, "\(through.output)")
        #expect(through.output.contains("mode: through hapticsd (pid \(rig.daemon!.pid),"), "\(through.output)")
        #expect(!FileManager.default.fileExists(atPath: own), "the program loaded no backend of its own")
        let served = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(served.driveFrames("recording:lra").map(\.channels) == expected)

        try rig.stopDaemon()
        let alone = try rig.run([Self.example, "recording:lra"], environment: environment)
        #expect(alone.status == 0, "\(alone.output)")
        #expect(alone.output.contains("mode: in-process (no process owns org.swifthaptics.Haptics1"), "\(alone.output)")
        #expect(try Recording(contentsOf: own).driveFrames("recording:lra").map(\.channels) == expected)
    }

    @Test("haptic-cal list says which mode it is in and which process owns each device; play goes through the service")
    func hapticCal() throws {
        let rig = try DaemonRig()
        let list = try rig.run([Self.hapticCal, "list"])
        #expect(list.status == 0, "\(list.output)")
        #expect(list.output.contains("Mode: through hapticsd, which owns every device (pid \(rig.daemon!.pid)"), "\(list.output)")
        #expect(list.output.contains("recording:lra") && list.output.contains("owner: hapticsd (pid \(rig.daemon!.pid))"), "\(list.output)")
        let inProcess = try rig.run([Self.hapticCal, "list"], environment: ["HAPTICS_DAEMON": "0"])
        #expect(inProcess.output.contains("Mode: in-process") && inProcess.output.contains("owner: this process"), "\(inProcess.output)")
        let forced = try rig.run([Self.hapticCal, "list", "--in-process"])
        #expect(forced.output.contains("Mode: in-process"), "\(forced.output)")

        let play = try rig.run([Self.hapticCal, "play", "recording:lra", "impact.medium"])
        #expect(play.status == 0 && play.output.contains("playing through hapticsd") && play.output.contains("played impact.medium on recording:lra"), "\(play.output)")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").map(\.channels) == (try InProcessReference.effect("impact.medium")))
    }

    @Test("HapticEngine's players through hapticsd: loop, parameters, stop with its completion error; the service leaving loses the device")
    func players() throws {
        let rig = try DaemonRig()
        let system = HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                settings: ["daemon.bus": rig.address, "daemon.app-id": "org.example.SwiftPlayers"], logger: TestSupport.quietLogger, daemon: .required))
        guard case .daemon(let info) = system.mode else {
            Issue.record("not through hapticsd: \(system.mode)")
            return
        }
        #expect(info.processID == Int(rig.daemon!.pid))
        #expect(system.plugins.backends.isEmpty, "no backend is loaded in this process")
        let device = try system.openDevice("recording:lra")
        let engine = try HapticEngine(devices: [device], profileStore: nil, logger: TestSupport.quietLogger)
        let lost = Completion()
        engine.stoppedHandler = { reason in lost.signal("\(reason)") }
        let player = try engine.makeAdvancedPlayer(with: try HapticPattern.continuous(duration: 0.2, intensity: 1, sharpness: 0.5))
        let ended = Completion()
        player.completionHandler = { error in ended.signal(error.map { "\($0)" } ?? "finished") }
        player.loopEnabled = true
        #expect(player.loopEnabled)
        try player.start(atTime: 0)
        usleep(300_000)
        try player.sendParameters([HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5)], atTime: 0)
        usleep(100_000)
        #expect(player.currentTime >= 0 && player.currentTime < 0.2, "looping: \(player.currentTime)")
        try player.stop(atTime: 0)
        #expect(ended.wait(seconds: 10) == "\(HapticEngineError.playerStopped)")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        let driven = recording.driveFrames("recording:lra").filter(\.isDriven).map { $0.channels[0].amplitude }
        #expect(driven.count >= 2 && driven.last! < driven.first! * 0.75, "HapticIntensityControl 0.5 lowered the drive: \(driven)")

        let generator = ImpactFeedbackGenerator(style: .medium, engine: engine)
        generator.prepare()
        generator.impactOccurred()
        try rig.stopDaemon()
        #expect(lost.wait(seconds: 10) == "device lost: recording:lra", "the service left: its devices are lost")
        #expect(device.isLost)
    }
}

/// A one-shot value a callback hands to the test thread.
final class Completion: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: String?

    func signal(_ text: String) {
        condition.lock()
        if value == nil { value = text }
        condition.signal()
        condition.unlock()
    }

    func wait(seconds: Double) -> String? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while value == nil, condition.wait(until: deadline) {}
        return value
    }
}
