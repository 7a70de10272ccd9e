import Foundation
import Haptics
import HapticsTools

/// An engine on a manual clock over recording devices loaded through dlopen, and the frames the
/// backend received, as offsets from the rig's start.
final class EngineRig {
    let clock = ManualClock()
    let output: String
    let system: HapticSystem
    let devices: [HapticDevice]
    let engine: HapticEngine
    let start: HapticInstant

    init(devices ids: [String] = ["recording:lra"], presets: String = "lra,erm,gamepad", policy: HapticPolicy = HapticPolicy(), simulateWake: Bool = false) throws {
        let output = TestSupport.makeTemporaryDirectory("engine") + "/rec.jsonl"
        let clock = clock
        let system = TestSupport.recordingSystem(devices: presets, output: output, clock: clock, simulateWake: simulateWake)
        let devices = try ids.map { try system.openDevice($0) }
        self.output = output
        self.system = system
        self.devices = devices
        engine = try HapticEngine(devices: devices, clock: clock, profileStore: nil, policy: policy)
        start = clock.now()
    }

    /// Engine time `seconds` after the rig started.
    func time(_ seconds: Double) -> Double { start.advanced(bySeconds: seconds).seconds }

    /// Advances the clock to `seconds` after the rig started.
    func advance(to seconds: Double) { clock.advance(to: start.advanced(bySeconds: seconds)) }

    /// A frame as (offset in ms from start, amplitudes, frequencies), rounded for comparison.
    struct Frame: Equatable, CustomStringConvertible {
        var milliseconds: Double
        var amplitudes: [Double]
        var frequencies: [Double]
        var description: String { "@\(milliseconds)ms \(amplitudes) \(frequencies)" }
    }

    /// Closes everything so the recording is flushed, then reads the frames of `device`.
    func frames(_ device: String = "recording:lra") throws -> [Frame] {
        try recording().frames(for: device).map { entry in
            Frame(
                milliseconds: (entry.frame.time.seconds(since: start) * 1e6).rounded() / 1e3,
                amplitudes: entry.frame.channels.map { ($0.amplitude * 1e4).rounded() / 1e4 },
                frequencies: entry.frame.channels.map { ($0.frequency * 10).rounded() / 10 })
        }
    }

    /// The recording so far (the engine is stopped and devices closed first, which flushes it).
    func recording() throws -> Recording {
        engine.stop()
        for device in devices { device.close() }
        return try Recording(contentsOf: output)
    }
}

extension HapticPattern {
    /// One transient at `time`.
    static func transient(at time: Double = 0, intensity: Double, sharpness: Double) throws -> HapticPattern {
        try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticTransient,
                parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)],
                relativeTime: time)
        ])
    }

    /// One continuous event.
    static func continuous(
        at time: Double = 0, duration: Double, intensity: Double, sharpness: Double, extra: [HapticEventParameter] = []
    ) throws -> HapticPattern {
        try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)] + extra,
                relativeTime: time, duration: duration)
        ])
    }
}
