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

/// Maps by output in one line, the band's two ends: `at 0.200 / 0.934 / 1.310 g: 166.0 Hz ×0.95 / 0.99 / 1.02, 171.4 Hz ×1.08 / 0.97 / 0.91`.
func describe(_ maps: [ChannelCalibration.OutputFrequencyMap], unit: String) -> String {
    guard let first = maps.first?.points, let low = first.first?.frequency, let high = first.last?.frequency else { return "none" }
    let outputs = maps.map { fixed($0.output, 3) }.joined(separator: " / ") + (unit.isEmpty ? "" : " \(unit)")
    // Every map spans the same frequencies: its first and last points are the band's ends.
    let ends = [(low, \[ChannelCalibration.FrequencyPoint].first), (high, \.last)].map { frequency, end in
        "\(fixed(frequency, 1)) Hz ×" + maps.map { fixed($0.points[keyPath: end]?.relativeOutput ?? 1, 2) }.joined(separator: " / ")
    }
    return "at \(outputs): " + ends.joined(separator: ", ")
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
        }.joined(separator: " + ") + sampleSummary
    }

    /// For a device that takes samples: `; samples 48 kHz, 5 ms periods × 3`.
    var sampleSummary: String {
        guard let stream = sampleStream else { return "" }
        return "; samples \(fixed(Double(stream.rate) / 1000, stream.rate % 1000 == 0 ? 0 : 1)) kHz, "
            + "\(fixed(stream.periodDuration * 1000, 1)) ms periods × \(stream.bufferFrames / max(stream.periodFrames, 1))"
    }
}
