import Foundation
import Haptics
import Testing

/// Export then import gives back an equal pattern, in the pretty and the compact form.
@Suite("AHAP round trip")
struct AHAPRoundTripTests: AHAPModelBuilding {
    @Test("every valid fixture reads back equal from its export, pretty and compact", arguments: AHAPCorpus.names(.valid))
    func fixtureRoundTrip(_ name: String) throws {
        let pattern = try AHAPCorpus.pattern(name)
        let pretty = pattern.ahapText()
        let compact = pattern.ahapText(pretty: false)
        #expect(try HapticPattern(ahap: pretty) == pattern)
        #expect(try HapticPattern(ahap: compact) == pattern)
        #expect(pretty.hasSuffix("}\n"))
        #expect(!compact.contains("\n"))
        // The export is stable: exporting what was read back gives the same text.
        #expect(try HapticPattern(ahap: pretty).ahapText() == pretty)
        #expect(try HapticPattern(ahap: compact).ahapText(pretty: false) == compact)
    }

    /// A pattern with every event type, every event parameter, every control and a curve.
    func everything() throws -> HapticPattern {
        let allParameters = HapticEventParameter.ID.allCases.enumerated().map { index, id in
            param(id, id.range.lowerBound + Double(index + 1) * 0.0625)
        }
        let events = [
            transient(0, allParameters),
            continuous(0.125, duration: 1.5, allParameters),
            HapticEvent(eventType: .audioContinuous, parameters: allParameters, relativeTime: 0.25, duration: 0.75),
            HapticEvent(
                eventType: .audioCustom, parameters: allParameters, relativeTime: 0.5, waveformPath: "Sounds/ding \"loud\".caf",
                waveformUsesVolumeEnvelope: false, waveformLoopEnabled: true),
            HapticEvent(eventType: .audioCustom, relativeTime: 0.75, waveformPath: "Sounds/tick.wav"),
            transient(1.1, [param(.hapticIntensity, 0.21999999999999886)]),
        ]
        let parameters = HapticDynamicParameter.ID.allCases.enumerated().map { index, id in
            control(id, id.range.lowerBound + Double(index) * 0.125, at: Double(index) * 0.1)
        }
        let curves = [
            curve(.hapticIntensityControl, at: 0.125, [point(0, 0), point(0.00001, 1), point(0.5, 0.3), point(1.5, 0)]),
            curve(.hapticSharpnessControl, at: 0.2, (0..<20).map { point(Double($0) * 0.05, sin(Double($0)) * 0.9) }),
        ]
        var pattern = try HapticPattern(events: events, parameters: parameters, parameterCurves: curves)
        pattern.version = 1
        pattern.metadata = [
            "Project": .string("Everything"), "Created": .string("today"),
            "Custom": .object(["List": .array([.number(1), .bool(false), .null, .string("tab\tnewline\n")])]),
        ]
        return pattern
    }

    @Test("a pattern built in code with every event type, parameter id, control id and curves round-trips")
    func builtInCode() throws {
        let pattern = try everything()
        #expect(Set(pattern.events.map(\.type)) == Set(HapticEvent.EventType.allCases))
        #expect(Set(pattern.events[0].parameters.map(\.id)) == Set(HapticEventParameter.ID.allCases))
        #expect(Set(pattern.parameters.map(\.id)) == Set(HapticDynamicParameter.ID.allCases))
        #expect(pattern.parameterCurves.count == 3)  // the 20-point curve split in two
        #expect(try HapticPattern(ahap: pattern.ahapText()) == pattern)
        #expect(try HapticPattern(ahap: pattern.ahapText(pretty: false)) == pattern)
    }

    @Test("a pattern without version or metadata round-trips without them")
    func noVersionNoMetadata() throws {
        let pattern = try HapticPattern(events: [transient(0.5, [param(.hapticIntensity, 0.25)])])
        let text = pattern.ahapText(pretty: false)
        #expect(!text.contains("Version"))
        #expect(!text.contains("Metadata"))
        let read = try HapticPattern(ahap: text)
        #expect(read == pattern)
        #expect(read.version == nil)
        #expect(read.metadata == nil)
    }

    @Test("the compact export of a small pattern, exactly")
    func compactText() throws {
        var pattern = try HapticPattern(
            events: [
                transient(0, [param(.hapticIntensity, 1)]),
                HapticEvent(eventType: .audioCustom, relativeTime: 0.25, waveformPath: "a.wav", waveformLoopEnabled: true),
            ],
            parameters: [control(.hapticSharpnessControl, -0.5, at: 0.1)],
            parameterCurves: [curve(.hapticIntensityControl, at: 0, [point(0, 1), point(0.5, 0)])])
        pattern.version = 1
        #expect(
            pattern.ahapText(pretty: false)
                == #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1}]}},"#
                + #"{"Event":{"Time":0.25,"EventType":"AudioCustom","EventDuration":0,"EventWaveformPath":"a.wav","EventWaveformLoopEnabled":true,"EventParameters":[]}},"#
                + #"{"Parameter":{"ParameterID":"HapticSharpnessControl","ParameterValue":-0.5,"Time":0.1}},"#
                + #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":1},{"Time":0.5,"ParameterValue":0}]}}]}"#)
    }

    @Test("writing to a file and reading it back gives an equal pattern")
    func fileRoundTrip() throws {
        let pattern = try everything()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("everything.ahap").path
        try pattern.writeAHAP(toFile: path)
        #expect(try HapticPattern(contentsOfFile: path) == pattern)
    }
}
