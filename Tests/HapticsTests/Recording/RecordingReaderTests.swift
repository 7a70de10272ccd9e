import Foundation
import Haptics
import HapticsTools
import Testing

/// The recording reader's range checks, and the plot of recordings whose numbers are odd but valid.
@Suite("Recording reader and plot")
struct RecordingReaderTests {
    static let fixtures = TestSupport.packageRoot + "/Tests/Fixtures/fuzz/recording/"
    static let header =
        #"{"t_ns":1000,"event":"recording","version":1,"devices":[{"id":"recording:lra","name":"LRA","actuator":"lra","min_update_interval_ms":1,"#
        + #""wake_latency_ms":1,"channels":[{"name":"main","actuator":"lra","amplitude_steps":256,"frequency_min_hz":80,"frequency_max_hz":300}]}]}"#

    func problem(_ text: String) -> String {
        do {
            _ = try Recording(jsonLines: text, path: "r.jsonl")
            return "read"
        } catch {
            return "\(error)"
        }
    }

    @Test("a channel whose frequency range runs backwards is an error naming the key, not an invalid range that traps")
    func invertedFrequencyRange() {
        let error = #expect(throws: RecordingError.self) { try Recording(contentsOf: Self.fixtures + "inverted-frequency-range.jsonl") }
        #expect(error?.line == 1)
        #expect(error?.problem == "$.devices[0].channels[0].frequency_max_hz: 80 is outside the allowed range 300...100000")
    }

    @Test("device numbers are range-checked with the line, the key, the value and the range")
    func deviceRanges() {
        func replacing(_ old: String, _ new: String) -> String { Self.header.replacingOccurrences(of: old, with: new) }
        #expect(problem(Self.header) == "read")
        #expect(
            problem(replacing(#""min_update_interval_ms":1"#, #""min_update_interval_ms":1e300"#))
                == "r.jsonl:1: $.devices[0].min_update_interval_ms: 1e+300 is outside the allowed range 0...10000")
        #expect(
            problem(replacing(#""wake_latency_ms":1"#, #""wake_latency_ms":-1"#))
                == "r.jsonl:1: $.devices[0].wake_latency_ms: -1 is outside the allowed range 0...10000")
        #expect(
            problem(replacing(#""frequency_min_hz":80"#, #""frequency_min_hz":0"#))
                == "r.jsonl:1: $.devices[0].channels[0].frequency_min_hz: 0 is outside the allowed range 1...100000")
        #expect(
            problem(replacing(#""channels":[{"name":"main","actuator":"lra","amplitude_steps":256,"frequency_min_hz":80,"frequency_max_hz":300}]"#, #""channels":[]"#))
                == "r.jsonl:1: $.devices[0].channels: expected 1...4 channels, found 0")
        #expect(problem(replacing(#""id":"recording:lra""#, #""id":"""#)) == "r.jsonl:1: $.devices[0].id: expected a non-empty device id")
        #expect(
            problem(Self.header + "\n" + #"{"t_ns":2e19,"event":"open","device":"recording:lra"}"#)
                == "r.jsonl:2: $.t_ns: 2e+19 is outside the allowed range 0...1.8e+19")
        #expect(
            problem(Self.header + "\n" + #"{"t_ns":2,"event":"frame","device":"recording:lra","frame_ns":2,"channels":[]}"#)
                == "r.jsonl:2: $.channels: expected 1...4 channels, found 0")
    }

    @Test("a recording whose last frame is meant for before its first, after a wake, plots (its x axis once ended before it began)")
    func plotEndingBeforeStart() throws {
        let recording = try Recording(contentsOf: Self.fixtures + "ends-before-start.jsonl")
        let svg = RecordingPlot.chart(recording: recording, deviceID: "recording:lra").render()
        #expect(svg.contains("LRA (recording:lra): 2 frames") || svg.contains("(recording:lra): 2 frames"))
        #expect(svg.hasSuffix("</svg>\n"))
    }

    @Test("a chart whose span is below the resolution of its bounds renders one tick, and labels beyond Int stay numbers")
    func chartResolution() {
        let chart = SVGChart(
            title: "far", xLabel: "time (ms)", xRange: 1e17...(1e17 + 10),
            panels: [SVGChart.Panel(title: "huge", yRange: 0...1e300, series: [.init(label: "s", points: [(1e17, 1e300)], color: "#000")])])
        let svg = chart.render()
        #expect(svg.contains(">1e+17</text>"))
        #expect(svg.contains(">1e+300</text>"))
    }
}
