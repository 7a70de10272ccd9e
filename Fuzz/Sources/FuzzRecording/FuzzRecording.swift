import FuzzSupport
import Haptics
import HapticsTools

/// The recording reader (JSON Lines): any text gives a recording or a `RecordingError` naming the
/// line. Every device of an accepted recording plots (as `haptic-cal plot` does), with a pattern
/// for the first.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecording(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let recording: Recording
    do {
        recording = try Recording(jsonLines: String(decoding: input(data, size), as: UTF8.self), path: "fuzz.jsonl")
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    let ids = Set(recording.entries.map(\.deviceID) + recording.devices.map(\.id)).sorted()
    for (index, id) in ids.prefix(8).enumerated() {
        for (_, frame) in recording.frames(for: id) {
            for drive in frame.channels { require((0...1).contains(drive.amplitude), "amplitude \(drive.amplitude)") }
        }
        _ = recording.transitions(for: id)
        let chart = RecordingPlot.chart(recording: recording, deviceID: id, pattern: index == 0 ? pattern : nil)
        require(!chart.render().isEmpty, "an empty plot")
    }
    return 0
}

/// A short pattern with a tap, a ramp and a pulse, drawn over the first device's frames.
private let pattern: HapticPattern = {
    do {
        return try HapticPattern(
            events: [
                HapticEvent(eventType: .hapticTransient, relativeTime: 0),
                HapticEvent(eventType: .hapticContinuous, relativeTime: 0.02, duration: 0.05),
            ],
            parameterCurves: [
                HapticParameterCurve(parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: 0.2), .init(relativeTime: 0.05, value: 1)])
            ])
    } catch {
        fatalError("the fixed pattern is invalid: \(error)")
    }
}()
