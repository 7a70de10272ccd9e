import Foundation
import Haptics
import Testing

/// Each invalid file of the AHAP corpus fails with exactly the error it deserves: a JSON syntax
/// error with its line, column and problem, or a JSON path and problem.
@Suite("AHAP corpus: invalid files")
struct AHAPInvalidCorpusTests {
    enum Expected: Sendable {
        /// `AHAPError.syntax` at this line and column.
        case syntax(line: Int, column: Int, String)
        /// `AHAPError.invalid` at this JSON path.
        case invalid(path: String, String)

        /// The full message (`AHAPError.description`).
        var message: String {
            switch self {
            case .syntax(let line, let column, let problem): "AHAP is not valid JSON: line \(line), column \(column): \(problem)"
            case .invalid(let path, let problem): "\(path): \(problem)"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var expected: Expected
        var testDescription: String { name }

        init(_ name: String, _ expected: Expected) {
            self.name = name
            self.expected = expected
        }
    }

    static let negative = "is negative; times and durations must be ≥ 0 seconds"
    static let tooLate = "s is outside 0...3600 s, the times a pattern may use"
    static let endsTooLate = "s from the pattern's start, past the 3600 s a pattern may last"
    static let eventTypes = "HapticTransient, HapticContinuous, AudioContinuous, AudioCustom"
    static let eventParameterIDs =
        "HapticIntensity, HapticSharpness, AttackTime, DecayTime, ReleaseTime, Sustained, AudioVolume, AudioPitch, AudioPan, AudioBrightness"
    static let controlIDs =
        "HapticIntensityControl, HapticSharpnessControl, HapticAttackTimeControl, HapticDecayTimeControl, HapticReleaseTimeControl, "
        + "AudioVolumeControl, AudioPanControl, AudioBrightnessControl, AudioPitchControl, AudioAttackTimeControl, AudioDecayTimeControl, "
        + "AudioReleaseTimeControl"

    /// Every invalid fixture and its error. The coverage test checks this table against the directory.
    static let cases: [Case] = [
        // Documents that are not patterns.
        Case("lone-event.ahap", .invalid(path: "$", #"this is a lone Event, not a pattern; wrap it as {"Pattern": [{"Event": …}]}"#)),
        Case("event-without-pattern.ahap", .invalid(path: "$", #"this is a lone Event, not a pattern; wrap it as {"Pattern": [{"Event": …}]}"#)),
        Case(
            "lone-event-parameters.ahap",
            .invalid(
                path: "$",
                #"this is a lone EventParameters array, not a pattern; an AHAP document is an object with a "Pattern" array"#)),
        Case(
            "missing-pattern.ahap",
            .invalid(path: "$.Pattern", #"required key is missing; an AHAP document holds its events in a "Pattern" array"#)),
        // Pattern items.
        Case(
            "misspelt-item-kind.ahap",
            .invalid(path: "$.Pattern[1]", #"unknown pattern item "ParameterCurves"; expected Event, Parameter or ParameterCurve"#)),
        Case("two-kinds-in-one-item.ahap", .invalid(path: "$.Pattern[0]", "holds Event and Parameter; each pattern item holds exactly one")),
        // Wrong value types.
        Case("time-as-string.ahap", .invalid(path: "$.Pattern[1].Event.Time", #"expected a number, found string "0.5""#)),
        Case("event-parameters-as-object.ahap", .invalid(path: "$.Pattern[0].Event.EventParameters", "expected an array, found object")),
        Case(
            "parameter-value-as-string.ahap",
            .invalid(path: "$.Pattern[0].Event.EventParameters[1].ParameterValue", #"expected a number, found string "high""#)),
        Case("pattern-as-object.ahap", .invalid(path: "$.Pattern", "expected an array, found object")),
        Case("version-as-string.ahap", .invalid(path: "$.Version", #"expected a number, found string "1.0""#)),
        // Unknown and missing names.
        Case(
            "unknown-event-type.ahap",
            .invalid(path: "$.Pattern[0].Event.EventType", #"unknown event type "HapticPulse"; expected one of: \#(eventTypes)"#)),
        Case("missing-event-type.ahap", .invalid(path: "$.Pattern[0].Event.EventType", "required key is missing")),
        Case(
            "unknown-parameter-id.ahap",
            .invalid(
                path: "$.Pattern[0].Event.EventParameters[1].ParameterID",
                #"unknown parameter "HapticStrength"; expected one of: \#(eventParameterIDs)"#)),
        Case(
            "unknown-control-id.ahap",
            .invalid(
                path: "$.Pattern[1].Parameter.ParameterID",
                #"unknown parameter "HapticIntensity"; did you mean "HapticIntensityControl"? expected one of: \#(controlIDs)"#)),
        // Times.
        Case("negative-time.ahap", .invalid(path: "$.Pattern[0].Event.Time", "-0.1 \(negative)")),
        Case("negative-duration.ahap", .invalid(path: "$.Pattern[1].Event.EventDuration", "-0.5 \(negative)")),
        Case("negative-curve-time.ahap", .invalid(path: "$.Pattern[1].ParameterCurve.Time", "-0.25 \(negative)")),
        Case(
            "negative-control-point-time.ahap",
            .invalid(path: "$.Pattern[0].ParameterCurve.ParameterCurveControlPoints[0].Time", "-0.5 \(negative)")),
        Case(
            "decreasing-control-point-times.ahap",
            .invalid(
                path: "$.Pattern[2].ParameterCurve.ParameterCurveControlPoints[2].Time",
                "control point time 0.3 s is earlier than the previous point's 0.4 s")),
        // Times past HapticPattern.maximumTime (each of these once ended the process converting
        // seconds to nanoseconds in the engine).
        Case("time-past-limit.ahap", .invalid(path: "$.Pattern[0].Event.Time", "1e+300 \(tooLate)")),
        Case("curve-time-past-limit.ahap", .invalid(path: "$.Pattern[1].ParameterCurve.Time", "9.3e+18 \(tooLate)")),
        Case("parameter-time-past-limit.ahap", .invalid(path: "$.Pattern[1].Parameter.Time", "3600.5 \(tooLate)")),
        Case("audio-duration-past-limit.ahap", .invalid(path: "$.Pattern[1].Event.EventDuration", "1.5e+308 \(tooLate)")),
        Case("event-ends-past-limit.ahap", .invalid(path: "$.Pattern[0].Event.EventDuration", "20 s ends at 3610 \(endsTooLate)")),
        Case(
            "control-point-past-limit.ahap",
            .invalid(path: "$.Pattern[0].ParameterCurve.ParameterCurveControlPoints[1].Time", "700 s ends at 3700 \(endsTooLate)")),
        // Missing content.
        Case(
            "audio-custom-without-waveform.ahap",
            .invalid(path: "$.Pattern[1].Event.EventWaveformPath", "an AudioCustom event needs EventWaveformPath")),
        Case(
            "curve-without-control-points.ahap",
            .invalid(path: "$.Pattern[1].ParameterCurve.ParameterCurveControlPoints", "a parameter curve needs at least one control point")),
        // JSON syntax.
        Case("missing-comma.ahap", .syntax(line: 7, column: 17, #"expected ',' or '}' after the value of "Time""#)),
        Case("unterminated-string.ahap", .syntax(line: 7, column: 30, "unterminated string")),
        Case("unterminated-string-at-end.ahap", .syntax(line: 3, column: 34, "unterminated string")),
        Case("trailing-garbage.ahap", .syntax(line: 12, column: 1, "unexpected text after the end of the document")),
        Case("empty.ahap", .syntax(line: 1, column: 1, "unexpected end of the document; expected a value")),
        Case("huge-exponent.ahap", .syntax(line: 6, column: 25, "number out of range: 1e999")),
    ]

    @Test("an invalid file fails with its exact error", arguments: cases)
    func invalidFile(_ fixture: Case) throws {
        let bytes = try AHAPCorpus.bytes(fixture.name, .invalid)
        do throws(AHAPError) {
            let pattern = try HapticPattern(ahapBytes: bytes)
            Issue.record("\(fixture.name) parsed into \(pattern.events.count) events; expected: \(fixture.expected.message)")
        } catch {
            switch (error, fixture.expected) {
            case (.syntax(let syntax, nil), .syntax(let line, let column, let problem)):
                #expect(syntax.line == line)
                #expect(syntax.column == column)
                #expect(syntax.problem == problem)
            case (.invalid(let invalid, nil), .invalid(let path, let problem)):
                #expect(invalid.path == path)
                #expect(invalid.problem == problem)
            default:
                Issue.record("wrong kind of error: \(error)")
            }
            #expect(error.description == fixture.expected.message)
        }
    }

    @Test("reading a file names it in path errors")
    func fileNamedInPathError() throws {
        let path = AHAPCorpus.path("negative-time.ahap", .invalid)
        let error = #expect(throws: AHAPError.self) { try HapticPattern(contentsOfFile: path) }
        guard case .invalid(let invalid, let file) = error else {
            Issue.record("expected a path error, got \(String(describing: error))")
            return
        }
        #expect(file == path)
        #expect(invalid.path == "$.Pattern[0].Event.Time")
        #expect(invalid.problem == "-0.1 \(Self.negative)")
        #expect(error?.description == "\(path): $.Pattern[0].Event.Time: -0.1 \(Self.negative)")
    }

    @Test("reading a file names it in syntax errors and keeps the line and column")
    func fileNamedInSyntaxError() throws {
        let path = AHAPCorpus.path("missing-comma.ahap", .invalid)
        let error = #expect(throws: AHAPError.self) { try HapticPattern(contentsOfFile: path) }
        guard case .syntax(let syntax, let file) = error else {
            Issue.record("expected a syntax error, got \(String(describing: error))")
            return
        }
        #expect(file == path)
        #expect(syntax.line == 7)
        #expect(syntax.column == 17)
        #expect(syntax.problem == #"expected ',' or '}' after the value of "Time""#)
        #expect(error?.description == #"\#(path):7:17: not valid JSON: expected ',' or '}' after the value of "Time""#)
    }

    @Test("reading a file that does not exist is a file error naming it")
    func missingFile() throws {
        let path = AHAPCorpus.path("no-such-file.ahap", .invalid)
        let error = #expect(throws: AHAPError.self) { try HapticPattern(contentsOfFile: path) }
        guard case .file(let file) = error else {
            Issue.record("expected a file error, got \(String(describing: error))")
            return
        }
        #expect(file.path == path)
        #expect(file.errno == ENOENT)
        #expect(error?.description == "\(path): cannot open: No such file or directory")
    }

    @Test("reading a valid file gives the same pattern as reading its bytes")
    func fileMatchesBytes() throws {
        let pattern = try HapticPattern(contentsOfFile: AHAPCorpus.path("audio-events.ahap", .valid))
        #expect(pattern == (try AHAPCorpus.pattern("audio-events.ahap")))
    }
}
