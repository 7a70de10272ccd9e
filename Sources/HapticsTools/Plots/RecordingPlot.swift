import Haptics
/// Plots what the recording backend captured for one device: amplitude and frequency per channel
/// as the frames set them, power transitions as markers, and, given the pattern that was played,
/// its intensity and sharpness over time.
public enum RecordingPlot {
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]

    /// The chart for `deviceID` in `recording`.
    /// - Parameters:
    ///   - recording: what the recording backend captured.
    ///   - deviceID: the device whose frames are drawn, e.g. `recording:lra`.
    ///   - pattern: the pattern played, drawn from the first frame's time.
    public static func chart(recording: Recording, deviceID: String, pattern: HapticPattern? = nil) -> SVGChart {
        let entries = recording.entries(for: deviceID)
        let frames = recording.frames(for: deviceID)
        let origin = frames.first?.frame.time ?? entries.first?.time ?? HapticInstant(nanoseconds: 0)
        func milliseconds(_ instant: HapticInstant) -> Double { instant.seconds(since: origin) * 1000 }
        let description = recording.devices.first { $0.id == deviceID }
        let channelNames = description?.channels.map(\.name) ?? (frames.first?.frame.channels.indices.map { "channel \($0)" } ?? [])

        var panels: [SVGChart.Panel] = []
        var end = frames.last.map { milliseconds($0.frame.time) } ?? 1
        if let pattern {
            let voice = pattern.strongestVoice()
            let intensity = voice.map { (x: $0.time * 1000, y: $0.intensity) }, sharpness = voice.map { (x: $0.time * 1000, y: $0.sharpness) }
            end = max(end, (voice.last?.time ?? 0) * 1000)
            panels.append(SVGChart.Panel(title: "pattern (0…1)", yRange: 0...1, series: [
                .init(label: "intensity", points: intensity, color: "#000"),
                .init(label: "sharpness", points: sharpness, color: "#ff7f0e"),
            ]))
        }
        let amplitude = channelNames.indices.map { channel in
            SVGChart.Series(
                label: channelNames[channel],
                points: frames.map { (milliseconds($0.frame.time), $0.frame.channels.indices.contains(channel) ? $0.frame.channels[channel].amplitude : 0) },
                style: .step, color: palette[channel % palette.count])
        }
        panels.append(SVGChart.Panel(title: "amplitude per channel (0…1)", yRange: 0...1, series: amplitude))
        let frequencies = frames.flatMap { $0.frame.channels.map(\.frequency) }.filter { $0 > 0 }
        if let highest = frequencies.max() {
            let series = channelNames.indices.map { channel in
                SVGChart.Series(
                    label: "\(channelNames[channel]) Hz",
                    points: frames.compactMap { entry in
                        guard entry.frame.channels.indices.contains(channel), entry.frame.channels[channel].amplitude > 0 else { return nil }
                        return (milliseconds(entry.frame.time), entry.frame.channels[channel].frequency)
                    },
                    style: .dots, color: palette[channel % palette.count])
            }
            panels.append(SVGChart.Panel(title: "drive frequency (Hz)", yRange: 0...(highest * 1.15), series: series))
        }
        let markers = entries.compactMap { entry -> SVGChart.Marker? in
            switch entry.event {
            case .wake, .sleep, .unplug: SVGChart.Marker(x: milliseconds(entry.time), label: entry.event.name)
            default: nil
            }
        }
        let start = min(0, markers.map(\.x).min() ?? 0)
        // A recording whose last frame is meant for before its first, or whose markers all lie
        // before it, ends before it starts: the axis then covers just the start.
        let stop = max(end, markers.map(\.x).max() ?? 0) * 1.05 + 1
        return SVGChart(
            title: "\(description?.name ?? deviceID) (\(deviceID)): \(frames.count) frames", xLabel: "time (ms)",
            xRange: start...max(stop, start), panels: panels, markers: markers)
    }
}
