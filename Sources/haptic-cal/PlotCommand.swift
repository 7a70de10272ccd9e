import ArgumentParser
import Foundation
import Haptics
import HapticsTools
import HapticsSupport

/// `haptic-cal plot`: an SVG of a recording (frames per channel, the pattern's intensity and sharpness).
struct Plot: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Plot a recording as SVG: frames per channel and, given the pattern, its intensity and sharpness.")

    @Argument(help: "A recording (JSON Lines) written with --record.")
    var recording: String

    @Option(help: "The device to plot (default: the first with frames).")
    var device: String?

    @Option(help: "The AHAP file that was played, to draw its intensity and sharpness.")
    var pattern: String?

    @Option(name: .shortAndLong, help: "The SVG file to write.")
    var output: String

    func run() throws {
        let file = try Recording(contentsOf: recording)
        let candidates = Set(file.entries.compactMap { entry -> String? in
            if case .frame = entry.event { return entry.deviceID }
            return nil
        })
        let deviceID: String
        if let device {
            guard file.entries.contains(where: { $0.deviceID == device }) else {
                throw ValidationError("\(recording) holds nothing for '\(device)'; it has: \(Set(file.entries.map(\.deviceID)).sorted().joined(separator: ", "))")
            }
            deviceID = device
        } else {
            guard let first = file.entries.first(where: { candidates.contains($0.deviceID) })?.deviceID else {
                throw ValidationError("\(recording) holds no frames")
            }
            deviceID = first
        }
        let played = try pattern.map { try HapticPattern(contentsOfFile: $0) }
        try writeSVG(RecordingPlot.chart(recording: file, deviceID: deviceID, pattern: played).render(), to: output)
        print("wrote \(output)")
    }
}

/// Writes an SVG atomically, naming the file on failure.
func writeSVG(_ svg: String, to path: String) throws {
    try writeFileAtomically(Array(svg.utf8), toPath: path)
}
