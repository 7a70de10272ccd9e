import Foundation
import Haptics
import Logging

/// The CLI reports problems itself, in one line each; library log lines below errors stay quiet.
func quietLogger() -> Logger {
    var logger = Logger(label: "haptic-cal") { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .error
        return handler
    }
    logger.logLevel = .error
    return logger
}

/// Writes to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// A number with `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}

/// A tap shape in one line: `16.6 ms, kick ×1.50 for 8.3 ms, level 0.964, by sharpness 0…1 ×1.020 / 1.000 / 0.981`.
func describe(_ tap: CalibrationProfile.TransientShape) -> String {
    var text = "\(fixed(tap.duration * 1000, 1)) ms, " + (tap.overdriveGain > 1 ? "kick ×\(fixed(tap.overdriveGain, 2)) for \(fixed(tap.overdriveDuration * 1000, 1)) ms" : "no kick")
    if tap.intensityExponent != 1 { text += ", intensity^\(fixed(tap.intensityExponent, 3))" }
    if tap.level != 1 { text += ", level \(fixed(tap.level, 3))" }
    if !tap.sharpnessTrim.isEmpty { text += ", by sharpness 0…1 ×" + tap.sharpnessTrim.map { fixed($0, 3) }.joined(separator: " / ") }
    return text
}

/// Left-justifies `text` in `width` columns.
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// Right-justifies `text` in `width` columns.
func padLeft(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

extension DeviceDescription {
    /// One line about the channels: `main 80–300 Hz f0 175 Hz`, `strong + weak`.
    var channelSummary: String {
        channels.map { channel in
            var text = "\(channel.name) (\(channel.actuator.rawValue)"
            if let range = channel.frequencyRange { text += ", \(fixed(range.lowerBound, 0))–\(fixed(range.upperBound, 0)) Hz" }
            if let f0 = channel.resonantFrequency { text += ", f0 \(fixed(f0, 0)) Hz" }
            return text + ")"
        }.joined(separator: " + ")
    }
}
