import Foundation
import Haptics
import HapticsTools
import Synchronization
import Testing

/// The engine's side of ABI 1.8: a feedback effect plays from a device's own stored effects where
/// the device says one fits, and with frames everywhere else.
@Suite("Feedback on a device's own effects (ABI 1.8)")
struct NativeFeedbackTests {
    /// The recording backend's LRA, saying it stores `stored` effects (vocabulary name → its text)
    /// and logging every start and every frame with an amplitude.
    final class StoringActuator: Actuator {
        let inner: any Actuator
        let description: DeviceDescription
        let stored: [String: String]
        let failsToStart: Bool
        let log = Mutex<[String]>([])

        init(_ inner: any Actuator, stored: [String: String], failsToStart: Bool = false) {
            self.inner = inner
            var description = inner.description
            description.hasNativeEffects = true
            self.description = description
            self.stored = stored
            self.failsToStart = failsToStart
        }

        func wake() throws(DeviceError) { try inner.wake() }
        func sleep() throws(DeviceError) { try inner.sleep() }
        func submit(_ frame: DriveFrame) throws(DeviceError) {
            if frame.channels.contains(where: { $0.amplitude > 0 }) { log.withLock { $0.append("frame") } }
            try inner.submit(frame)
        }
        func stop() throws(DeviceError) { try inner.stop() }
        func close() { inner.close() }
        func nativeFeedback(_ effect: String, scale: Double) -> String? {
            stored[effect].map { "\($0)@\(scale)" }
        }
        func startNative(_ sequence: String) throws(DeviceError) {
            if failsToStart {
                throw .backendFailure(deviceID: description.id, backend: "test", operation: .startNative, errno: EIO, message: "bus error")
            }
            log.withLock { $0.append("start \(sequence)") }
        }
    }

    /// An engine over the storing LRA and the recording ERM, on a manual clock.
    struct Rig {
        let clock = ManualClock()
        let storing: StoringActuator
        let engine: HapticEngine
        let output: String
        let devices: [HapticDevice]

        init(policy: HapticPolicy = HapticPolicy(), failsToStart: Bool = false) throws {
            output = TestSupport.makeTemporaryDirectory("native-feedback") + "/rec.jsonl"
            let system = TestSupport.recordingSystem(devices: "lra,erm", output: output, clock: clock)
            let backend = try #require(system.backends.first { $0.name == "recording" })
            storing = StoringActuator(
                try backend.open(deviceID: "recording:lra"), stored: ["impact.heavy": "strong-click", "selection": "sharp-tick"], failsToStart: failsToStart)
            devices = [HapticDevice(actuator: storing, clock: clock, logger: TestSupport.quietLogger), try system.openDevice("recording:erm")]
            engine = try HapticEngine(devices: devices, clock: clock, profileStore: nil, policy: policy, logger: TestSupport.quietLogger)
        }

        func advance(by seconds: Double) { clock.advance(to: clock.now().advanced(bySeconds: seconds)) }

        /// What the ERM received: frames with an amplitude, after everything is closed.
        func ermFrames() throws -> Int {
            engine.stop()
            for device in devices { device.close() }
            return try Recording(contentsOf: output).frames(for: "recording:erm").filter { $0.frame.channels.contains { $0.amplitude > 0 } }.count
        }
    }

    @Test("an effect the device stores starts there, scaled, with no frame for it; the other device renders it; its power follows the playback")
    func storedEffectPlaysNatively() throws {
        let rig = try Rig()
        let impact = ImpactFeedbackGenerator(style: .heavy, engine: rig.engine)
        impact.impactOccurred(intensity: 0.5)
        #expect(rig.devices[0].powerState == .active, "held awake while the tap plays elsewhere")
        rig.advance(by: 0.2)
        #expect(rig.storing.log.withLock { $0 } == ["start strong-click@0.5"])
        #expect(rig.devices[0].powerState == .idle, "idle once the playback ended (the backend lets its effect finish)")
        #expect(try rig.ermFrames() > 0)
    }

    @Test("an effect the device does not store (a rhythm) renders with frames on it")
    func otherEffectsRenderWithFrames() throws {
        let rig = try Rig()
        NotificationFeedbackGenerator(engine: rig.engine).notificationOccurred(.success)
        rig.advance(by: 0.4)
        let log = rig.storing.log.withLock { $0 }
        #expect(!log.contains { $0.hasPrefix("start") } && log.contains("frame"), "\(log)")
    }

    @Test("a deferred feedback (the overuse guard) plays from the stored effect too; a device busy with frames mixes the effect in")
    func deferredAndBusy() throws {
        let rig = try Rig()
        let selection = SelectionFeedbackGenerator(engine: rig.engine)
        selection.selectionChanged()
        selection.selectionChanged()  // within the selection interval: deferred
        rig.advance(by: 0.3)
        #expect(rig.storing.log.withLock { $0 } == ["start sharp-tick@1.0", "start sharp-tick@1.0"])

        // A continuous pattern plays: the device is not silent, so the impact mixes into its frames.
        let buzz = try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 0.5), .init(parameterID: .hapticSharpness, value: 0.5)],
                relativeTime: 0, duration: 0.2)
        ])
        rig.storing.log.withLock { $0 = [] }
        try rig.engine.makePlayer(with: buzz).start(atTime: 0)
        rig.advance(by: 0.01)
        ImpactFeedbackGenerator(style: .heavy, engine: rig.engine).impactOccurred()
        rig.advance(by: 0.3)
        let log = rig.storing.log.withLock { $0 }
        #expect(!log.contains { $0.hasPrefix("start") } && log.contains("frame"), "\(log)")
    }

    @Test("a device that cannot start its stored effect renders the effect with frames; haptics switched off play nothing there")
    func fallbacks() throws {
        let rig = try Rig(failsToStart: true)
        ImpactFeedbackGenerator(style: .heavy, engine: rig.engine).impactOccurred()
        rig.advance(by: 0.2)
        #expect(rig.storing.log.withLock { $0 } == ["frame"])

        var off = HapticPolicy()
        off.isEnabled = false
        let silent = try Rig(policy: off)
        ImpactFeedbackGenerator(style: .heavy, engine: silent.engine).impactOccurred()
        silent.advance(by: 0.2)
        #expect(silent.storing.log.withLock { $0 }.isEmpty)
    }
}
