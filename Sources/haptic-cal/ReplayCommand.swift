import ArgumentParser
import Foundation
import Haptics
import HapticsInteraction
import HapticsSupport

/// `haptic-cal replay TRACE DEVICE`: plays a recorded pointer or knob trace's feedback on a device.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a pointer or knob trace against its targets or detents, playing the feedback it earns.",
        discussion: "The trace format is documented in Docs/Interaction.md. Prints which feedback fired when; --svg draws the trace, the targets and the feedback (and, on a recording device, its frames).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The trace file.")
    var trace: String

    @Argument(help: "The device: an id (see `haptic-cal list`), a unique id prefix, or part of its name.")
    var device: String

    @Option(help: ArgumentHelp("Write an SVG of the trace, its targets and the feedback.", valueName: "file"))
    var svg: String?

    func run() throws {
        let parsed = try InteractionTrace(contentsOfFile: trace)
        let (fired, description, recording) = try global.withDevice(device) { _, engine in TraceReplay.run(parsed, on: engine) }
        print("replayed \(trace) on \(description.id) (\(description.name))")
        for entry in fired { print("  \(entry)") }
        let played = fired.filter { if case .played? = $0.decision { true } else if case .deferred? = $0.decision { true } else { false } }.count
        print("  \(fired.filter { $0.effect != nil }.count) feedback requests, \(played) played, \(fired.filter { $0.decision == .coalesced }.count) coalesced by the overuse guard")
        if let svg {
            try writeSVG(TracePlot.svg(trace: parsed, fired: fired, recording: recording.map { ($0, description.id) }), to: svg)
            print("wrote \(svg)")
        }
    }
}
