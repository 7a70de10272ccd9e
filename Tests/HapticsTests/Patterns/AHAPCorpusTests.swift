import Foundation
import Haptics
import Testing

/// Each valid file of the AHAP corpus, parsed into exactly the model it describes: events (type,
/// time, duration, parameters), dynamic parameters, curves with their points, version and metadata.
@Suite("AHAP corpus: valid files")
struct AHAPCorpusTests: AHAPModelBuilding {
    @Test("trailing commas in arrays and objects, as in Apple's sample files")
    func trailingCommas() throws {
        let pattern = try AHAPCorpus.pattern("trailing-commas.ahap")
        #expect(pattern.version == 1)
        #expect(
            pattern.metadata == [
                "Project": .string("Trailing commas"), "Created": .string("2 March 2024"),
                "Description": .string("Written the way Apple's sample files are: a comma after the last member of arrays and objects."),
            ])
        #expect(
            pattern.events == [
                transient(0, [param(.hapticIntensity, 0.8), param(.hapticSharpness, 0.4)]),
                continuous(0.1, duration: 0.5, [param(.hapticIntensity, 0.6)]),
            ])
        #expect(pattern.parameters == [])
        #expect(pattern.parameterCurves == [curve(.hapticIntensityControl, at: 0.1, [point(0, 1), point(0.5, 0)])])
    }

    @Test("no Version key: the version is nil")
    func noVersion() throws {
        let pattern = try AHAPCorpus.pattern("no-version.ahap")
        #expect(pattern.version == nil)
        #expect(pattern.metadata == ["Project": .string("Doorbell"), "Created": .string("2023-11-04")])
        #expect(pattern.events == [transient(0, [param(.hapticIntensity, 1), param(.hapticSharpness, 0.7)])])
        #expect(pattern.parameters == [])
        #expect(pattern.parameterCurves == [])
    }

    @Test("Version 1 as an integer and Version 1.0 read the same")
    func versionIntegerAndFloat() throws {
        let integer = try AHAPCorpus.pattern("version-integer.ahap")
        let float = try AHAPCorpus.pattern("version-float.ahap")
        #expect(integer.version == 1.0)
        #expect(float.version == 1.0)
        for pattern in [integer, float] {
            #expect(pattern.metadata == nil)
            #expect(pattern.events == [transient(0, [param(.hapticIntensity, 0.5)])])
            #expect(pattern.parameters == [])
            #expect(pattern.parameterCurves == [])
        }
        #expect(integer == float)
    }

    @Test("integers where floats are expected: Time 1, ParameterValue 1, EventDuration 2")
    func integerValues() throws {
        let pattern = try AHAPCorpus.pattern("integer-values.ahap")
        #expect(pattern.version == 1)
        #expect(
            pattern.events == [
                continuous(1, duration: 2, [param(.hapticIntensity, 1), param(.hapticSharpness, 0), param(.sustained, 0)])
            ])
        #expect(pattern.parameters == [control(.hapticIntensityControl, 1, at: 2)])
        #expect(pattern.parameterCurves == [curve(.hapticSharpnessControl, at: 1, [point(0, 0), point(2, 1)])])
        #expect(pattern.duration == 3)
    }

    @Test("float noise like 0.21999999999999886 is kept exactly, in the model and in the export")
    func floatNoise() throws {
        let pattern = try AHAPCorpus.pattern("float-noise.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.metadata == ["Project": .string("Exported from a tool that prints every bit of the double")])
        #expect(
            pattern.events == [
                transient(0.21999999999999886, [param(.hapticIntensity, 0.30000000000000004), param(.hapticSharpness, 0.7)])
            ])
        #expect(pattern.events[0].relativeTime != 0.22)
        #expect(pattern.events[0].parameters[0].value != 0.3)
        #expect(pattern.parameters == [])
        #expect(
            pattern.parameterCurves == [
                curve(.hapticIntensityControl, at: 0.21999999999999886, [point(0, 0.6), point(0.10000000000000009, 0.1)])
            ])
        // 0.69999999999999996 and 0.59999999999999998 are the doubles 0.7 and 0.6: written in their shortest form.
        let text = pattern.ahapText()
        for literal in ["0.21999999999999886", "0.30000000000000004", "0.10000000000000009", "\"ParameterValue\": 0.7", "\"ParameterValue\": 0.6"] {
            #expect(text.contains(literal), "export lacks \(literal)")
        }
    }

    @Test("events out of time order stay in file order; hapticEvents is time-sorted and haptic only")
    func unsortedEvents() throws {
        let pattern = try AHAPCorpus.pattern("unsorted-events.ahap")
        let audio = HapticEvent(eventType: .audioContinuous, parameters: [param(.audioVolume, 0.5)], relativeTime: 0.3, duration: 0.2)
        #expect(
            pattern.events == [
                transient(0.5, [param(.hapticIntensity, 0.9)]),
                continuous(0, duration: 0.25, [param(.hapticIntensity, 0.4)]),
                audio,
                transient(0.25, [param(.hapticIntensity, 0.6)]),
            ])
        #expect(
            pattern.hapticEvents == [
                continuous(0, duration: 0.25, [param(.hapticIntensity, 0.4)]),
                transient(0.25, [param(.hapticIntensity, 0.6)]),
                transient(0.5, [param(.hapticIntensity, 0.9)]),
            ])
        #expect(pattern.parameters == [])
        #expect(pattern.parameterCurves == [])
        #expect(pattern.duration == 0.5)
    }

    @Test("curves listed before the events they shape")
    func curvesBeforeEvents() throws {
        let pattern = try AHAPCorpus.pattern("curves-before-events.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.events == [continuous(0, duration: 0.8, [param(.hapticIntensity, 0.7), param(.hapticSharpness, 0.3)])])
        #expect(pattern.parameters == [])
        #expect(
            pattern.parameterCurves == [
                curve(.hapticIntensityControl, at: 0, [point(0, 0.2), point(0.4, 1), point(0.8, 0.2)]),
                curve(.hapticSharpnessControl, at: 0.2, [point(0, 0), point(0.6, 0.5)]),
            ])
    }

    @Test("parameters and curves interleaved with events: each kind keeps its file order")
    func interleavedItems() throws {
        let pattern = try AHAPCorpus.pattern("interleaved-items.ahap")
        #expect(
            pattern.events == [
                continuous(0, duration: 1, [param(.hapticIntensity, 0.8)]),
                transient(1, [param(.hapticIntensity, 1), param(.hapticSharpness, 1)]),
                transient(1.25, [param(.hapticIntensity, 0.5)]),
            ])
        #expect(pattern.parameters == [control(.hapticIntensityControl, 0.5, at: 0.25), control(.hapticDecayTimeControl, -0.5, at: 1)])
        #expect(pattern.parameterCurves == [curve(.hapticSharpnessControl, at: 0.5, [point(0, 0), point(0.25, 0.5)])])
        #expect(pattern.duration == 1.25)
    }

    @Test("AudioCustom with its waveform keys and AudioContinuous with audio parameters are kept, not haptic")
    func audioEvents() throws {
        let pattern = try AHAPCorpus.pattern("audio-events.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.metadata?.keys == ["Project", "Description"])
        #expect(pattern.metadata?["Project"] == .string("Coin pickup"))
        let tap = transient(0, [param(.hapticIntensity, 0.9), param(.hapticSharpness, 0.8)])
        let chime = HapticEvent(
            eventType: .audioCustom, parameters: [param(.audioVolume, 0.75)], relativeTime: 0,
            waveformPath: "Sounds/coin-chime.wav", waveformUsesVolumeEnvelope: true, waveformLoopEnabled: false)
        let hum = HapticEvent(
            eventType: .audioContinuous,
            parameters: [
                param(.audioVolume, 0.3), param(.audioPitch, -0.25), param(.audioPan, 0.5), param(.audioBrightness, 0.2),
                param(.attackTime, 0.1), param(.releaseTime, 0.4),
            ],
            relativeTime: 0.05, duration: 0.6)
        #expect(pattern.events == [tap, chime, hum])
        #expect(pattern.events.map(\.type.isHaptic) == [true, false, false])
        #expect(pattern.events[1].waveformPath == "Sounds/coin-chime.wav")
        #expect(pattern.events[1].waveformUsesVolumeEnvelope == true)
        #expect(pattern.events[1].waveformLoopEnabled == false)
        #expect(pattern.hapticEvents == [tap])
        #expect(pattern.parameters == [control(.audioVolumeControl, 0.5, at: 0.3)])
        #expect(pattern.parameterCurves == [curve(.audioPitchControl, at: 0.05, [point(0, 0), point(0.6, -0.5)])])
    }

    @Test("out-of-range values are clamped; a negative sharpness control is in range and kept")
    func clampedValues() throws {
        let pattern = try AHAPCorpus.pattern("clamped-values.ahap")
        #expect(
            pattern.events == [
                transient(0, [param(.hapticIntensity, 1), param(.hapticSharpness, 0)]),  // 1.7 and -1.0
                continuous(0.1, duration: 0.5, [param(.sustained, 1), param(.attackTime, 0)]),  // 2 and -0.3
            ])
        #expect(
            pattern.parameters == [
                control(.hapticSharpnessControl, -0.5, at: 0.1),  // kept: sharpness control adds, -1…1
                control(.hapticIntensityControl, 0, at: 0.2),  // -0.2: intensity control multiplies, 0…1
                control(.hapticAttackTimeControl, -1, at: 0.3),  // -1.5
            ])
        #expect(
            pattern.parameterCurves == [
                curve(.hapticIntensityControl, at: 0.1, [point(0, 1), point(0.2, 0.5), point(0.4, 0)])  // 1.5 and -0.1
            ])
    }

    @Test("unknown Metadata keys, nested objects and arrays are kept in order")
    func metadata() throws {
        let pattern = try AHAPCorpus.pattern("metadata.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.metadata?.keys == ["Project", "Created", "Description", "Author", "Tool", "Tags", "Revision", "Reviewed"])
        let tool: JSONObject = [
            "Name": .string("Pattern Composer"), "Version": .string("2.3.1"),
            "Settings": .object(["Quantize": .bool(true), "Grid": .number(0.125)]),
        ]
        #expect(
            pattern.metadata == [
                "Project": .string("Heartbeat"), "Created": .string("2024-01-15T10:30:00Z"),
                "Description": .string("Two beats, the second softer. Metadata after Pattern, with custom keys."),
                "Author": .string("Haptics team"), "Tool": .object(tool), "Tags": .array([.string("pulse"), .string("loop")]),
                "Revision": .number(7), "Reviewed": .null,
            ])
        #expect(
            pattern.events == [
                transient(0, [param(.hapticIntensity, 1), param(.hapticSharpness, 0.2)]),
                transient(0.18, [param(.hapticIntensity, 0.6), param(.hapticSharpness, 0.2)]),
            ])
        // Exported in order, nested objects included.
        let text = pattern.ahapText(pretty: false)
        #expect(
            text.contains(
                #""Metadata":{"Project":"Heartbeat","Created":"2024-01-15T10:30:00Z","Description":"Two beats, the second softer. Metadata after Pattern, with custom keys.","Author":"Haptics team","Tool":{"Name":"Pattern Composer","Version":"2.3.1","Settings":{"Quantize":true,"Grid":0.125}},"Tags":["pulse","loop"],"Revision":7,"Reviewed":null}"#
            ))
    }

    @Test("unknown keys at the top level, in items, events, parameters, curves and points are ignored")
    func unknownKeys() throws {
        let pattern = try AHAPCorpus.pattern("unknown-keys.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.metadata == nil)
        #expect(pattern.events == [transient(0, [param(.hapticIntensity, 0.8)])])
        #expect(pattern.parameters == [control(.hapticIntensityControl, 0.5, at: 0.1)])
        #expect(pattern.parameterCurves == [curve(.hapticSharpnessControl, at: 0.1, [point(0, 0), point(0.2, 0.4)])])
        let text = pattern.ahapText()
        for ignored in ["Comment", "Generator", "Label", "Name", "Color", "EventTags", "Note", "Ease", "Tempo"] {
            #expect(!text.contains(ignored), "export kept the unknown key \(ignored)")
        }
    }

    @Test("a minified one-line file")
    func minified() throws {
        #expect(try AHAPCorpus.text("minified.ahap", .valid).split(separator: "\n").count == 1)
        let pattern = try AHAPCorpus.pattern("minified.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.metadata == nil)
        #expect(
            pattern.events == [
                transient(0, [param(.hapticIntensity, 0.9), param(.hapticSharpness, 0.6)]),
                continuous(0.05, duration: 0.3, [param(.hapticIntensity, 0.5)]),
            ])
        #expect(pattern.parameters == [control(.hapticSharpnessControl, 0.25, at: 0.1)])
        #expect(pattern.parameterCurves == [curve(.hapticIntensityControl, at: 0.05, [point(0, 1), point(0.3, 0)])])
    }

    @Test("curve points 0.00001 s apart are kept as written")
    func closeCurvePoints() throws {
        let pattern = try AHAPCorpus.pattern("close-curve-points.ahap")
        #expect(pattern.events == [continuous(0, duration: 0.1, [param(.hapticIntensity, 1)])])
        #expect(
            pattern.parameterCurves == [
                curve(
                    .hapticIntensityControl, at: 0,
                    [point(0, 0), point(0.00001, 1), point(0.00002, 0.5), point(0.05, 0.5), point(0.05001, 0)])
            ])
        let times = pattern.parameterCurves[0].controlPoints.map(\.relativeTime)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("a 17-point curve becomes a 16-point curve and a 2-point curve starting at its last point")
    func seventeenPointCurve() throws {
        let pattern = try AHAPCorpus.pattern("seventeen-point-curve.ahap")
        #expect(pattern.metadata?.keys == ["Description"])
        #expect(pattern.events == [continuous(0.5, duration: 4, [param(.hapticIntensity, 1)])])
        let first = curve(
            .hapticIntensityControl, at: 0.5,
            [
                point(0, 0), point(0.25, 0.0625), point(0.5, 0.125), point(0.75, 0.1875), point(1, 0.25), point(1.25, 0.3125),
                point(1.5, 0.375), point(1.75, 0.4375), point(2, 0.5), point(2.25, 0.5625), point(2.5, 0.625), point(2.75, 0.6875),
                point(3, 0.75), point(3.25, 0.8125), point(3.5, 0.875), point(3.75, 0.9375),
            ])
        let second = curve(.hapticIntensityControl, at: 4.25, [point(0, 0.9375), point(0.25, 1)])
        #expect(pattern.parameterCurves == [first, second])
        #expect(pattern.parameterCurves.map(\.controlPoints.count) == [16, 2])
        #expect(pattern.parameterCurves[1].relativeTime == pattern.parameterCurves[0].endTime)
        #expect(pattern.parameterCurves[1].controlPoints[0].value == pattern.parameterCurves[0].controlPoints[15].value)
        #expect(pattern.duration == 4.5)
    }

    @Test("a 16-point curve is the most one curve holds and stays whole")
    func sixteenPointCurve() throws {
        let pattern = try AHAPCorpus.pattern("sixteen-point-curve.ahap")
        #expect(pattern.events == [continuous(0.5, duration: 3.75, [param(.hapticIntensity, 1)])])
        let points = (0..<16).map { point(Double($0) * 0.25, $0.isMultiple(of: 2) ? -0.25 : 0.25) }
        #expect(pattern.parameterCurves == [curve(.hapticSharpnessControl, at: 0.5, points)])
    }

    @Test("a continuous event longer than 30 s is clamped to 30 s")
    func longContinuousEvent() throws {
        let pattern = try AHAPCorpus.pattern("long-continuous-event.ahap")
        #expect(HapticEvent.maximumContinuousDuration == 30)
        #expect(
            pattern.events == [
                continuous(2, duration: 30, [param(.hapticIntensity, 0.4), param(.hapticSharpness, 0.1)]),
                continuous(0, duration: 30, [param(.hapticIntensity, 0.2)]),
            ])
        #expect(pattern.duration == 32)
    }

    @Test("missing optional keys take their defaults")
    func defaults() throws {
        let pattern = try AHAPCorpus.pattern("defaults.ahap")
        #expect(pattern.version == nil)
        #expect(pattern.metadata == nil)
        #expect(
            pattern.events == [
                transient(0),  // no Time, no EventDuration, no EventParameters
                continuous(0.5, duration: 0),  // no EventDuration
                transient(0.75, [param(.hapticSharpness, 0.9)]),
            ])
        #expect(pattern.events[0].value(of: .hapticIntensity) == 1)
        #expect(pattern.events[0].value(of: .hapticSharpness) == 0.5)
        #expect(pattern.events[0].value(of: .sustained) == 1)
        #expect(pattern.events[0].value(of: .attackTime) == 0)
        #expect(pattern.events[2].value(of: .hapticIntensity) == 1)
        #expect(pattern.events[2].value(of: .hapticSharpness) == 0.9)
        #expect(pattern.parameters == [control(.hapticIntensityControl, 0.5, at: 0)])  // no Time
        #expect(pattern.parameterCurves == [curve(.hapticSharpnessControl, at: 0, [point(0, 0.1), point(0.5, 0.3)])])  // no Time
    }

    @Test("a UTF-8 byte order mark before the document is skipped")
    func byteOrderMark() throws {
        #expect(try AHAPCorpus.bytes("byte-order-mark.ahap", .valid).prefix(3) == [0xEF, 0xBB, 0xBF])
        let pattern = try AHAPCorpus.pattern("byte-order-mark.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.metadata == ["Description": .string("Saved by an editor that writes a UTF-8 byte order mark.")])
        #expect(pattern.events == [transient(0, [param(.hapticIntensity, 0.7)])])
    }

    @Test("an empty Pattern array is an empty pattern")
    func emptyPattern() throws {
        let pattern = try AHAPCorpus.pattern("empty-pattern.ahap")
        #expect(pattern.version == 1)
        #expect(pattern.metadata == ["Description": .string("Nothing to play yet.")])
        #expect(pattern.events == [])
        #expect(pattern.parameters == [])
        #expect(pattern.parameterCurves == [])
        #expect(pattern.duration == 0)
    }

    @Test("a generated 70 s pattern of over 100 KB with 77 curves parses into the pattern it was generated from")
    func largePattern() throws {
        var items: [String] = []
        var events: [HapticEvent] = []
        var curves: [HapticParameterCurve] = []
        // Three continuous events back to back, and a transient every half second.
        for (start, length) in [(0.0, 30.0), (30.0, 30.0), (60.0, 10.0)] {
            items.append(
                #"{"Event": {"Time": \#(start), "EventType": "HapticContinuous", "EventDuration": \#(length), "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": 0.5}, {"ParameterID": "HapticSharpness", "ParameterValue": 0.3}]}}"#
            )
            events.append(continuous(start, duration: length, [param(.hapticIntensity, 0.5), param(.hapticSharpness, 0.3)]))
        }
        for index in 0..<140 {
            let time = Double(index) * 0.5
            let intensity = 0.3 + 0.7 * Double(index % 10) / 10
            items.append(
                #"{"Event": {"Time": \#(time), "EventType": "HapticTransient", "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": \#(intensity)}, {"ParameterID": "HapticSharpness", "ParameterValue": 0.8}]}}"#
            )
            events.append(transient(time, [param(.hapticIntensity, intensity), param(.hapticSharpness, 0.8)]))
        }
        // A sharpness change every quarter second.
        var parameters: [HapticDynamicParameter] = []
        for index in 0..<280 {
            let time = Double(index) * 0.25
            let value = Double(index % 9) / 4 - 1
            items.append(#"{"Parameter": {"ParameterID": "HapticSharpnessControl", "ParameterValue": \#(value), "Time": \#(time)}}"#)
            parameters.append(control(.hapticSharpnessControl, value, at: time))
        }
        // 77 curves, one every 0.9 s (float noise in their times), every seventh one 20 points long.
        for index in 0..<77 {
            let start = Double(index) * 0.9
            let count = index.isMultiple(of: 7) ? 20 : 14
            let points = (0..<count).map { k in point(Double(k) * 0.04, (sin(Double(index * 31 + k)) + 1) / 2) }
            let pointText = points.map { #"{"Time": \#($0.relativeTime), "ParameterValue": \#($0.value)}"# }.joined(separator: ", ")
            let id: HapticDynamicParameter.ID = index.isMultiple(of: 2) ? .hapticIntensityControl : .hapticSharpnessControl
            items.append(
                #"{"ParameterCurve": {"ParameterID": "\#(id.rawValue)", "Time": \#(start), "ParameterCurveControlPoints": [\#(pointText)]}}"#
            )
            curves.append(curve(id, at: start, points))
        }
        let text = "{\n  \"Version\": 1,\n  \"Pattern\": [\n    " + items.joined(separator: ",\n    ") + ",\n  ]\n}\n"
        #expect(text.utf8.count > 100_000)

        let pattern = try HapticPattern(ahap: text)
        let expected = try HapticPattern(events: events, parameters: parameters, parameterCurves: curves)
        #expect(pattern.events == expected.events)
        #expect(pattern.parameters == expected.parameters)
        #expect(pattern.parameterCurves == expected.parameterCurves)
        #expect(pattern.version == 1)
        #expect(pattern.parameters.count == 280)
        #expect(pattern.events.count == 143)
        #expect(pattern.parameterCurves.count == 77 + 11)  // the 11 curves of 20 points split in two
        #expect(pattern.parameterCurves.allSatisfy { $0.controlPoints.count <= HapticParameterCurve.maximumControlPoints })
        #expect(pattern.duration == 70)
        #expect(pattern.hapticEvents.count == 143)
        #expect(zip(pattern.hapticEvents, pattern.hapticEvents.dropFirst()).allSatisfy { $0.relativeTime <= $1.relativeTime })
        #expect(try HapticPattern(ahap: pattern.ahapText()) == pattern)
        #expect(try HapticPattern(ahap: pattern.ahapText(pretty: false)) == pattern)
    }

    @Test("every fixture file is named by a test, and every named fixture exists")
    func corpusCoverage() throws {
        // Valid files: each must be read by an `AHAPCorpus.pattern("…")` call in this directory's test sources.
        let sources = try FileManager.default.contentsOfDirectory(atPath: AHAPCorpus.testSourceDirectory.path)
            .filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOf: AHAPCorpus.testSourceDirectory.appendingPathComponent($0), encoding: .utf8) }
        var named = Set<String>()
        for source in sources {
            for match in source.matches(of: /AHAPCorpus\.pattern\("([^"]+\.ahap)"\)/) { named.insert(String(match.1)) }
        }
        let valid = AHAPCorpus.allFiles(.valid)
        #expect(!valid.isEmpty)
        #expect(valid.filter { !named.contains($0) } == [], "valid fixtures no test names")
        #expect(named.subtracting(valid).sorted() == [], "tests name valid fixtures that do not exist")

        // Invalid files: each must have its expected error in the table.
        let invalid = AHAPCorpus.allFiles(.invalid)
        let expected = Set(AHAPInvalidCorpusTests.cases.map(\.name))
        #expect(!invalid.isEmpty)
        #expect(invalid.filter { !expected.contains($0) } == [], "invalid fixtures without an expected error")
        #expect(expected.subtracting(invalid).sorted() == [], "expected errors for invalid fixtures that do not exist")
        #expect(expected.count == AHAPInvalidCorpusTests.cases.count, "an invalid fixture is listed twice")

        // Every fixture is an .ahap file.
        #expect((valid + invalid).filter { !$0.hasSuffix(".ahap") } == [])
    }
}
