import Foundation
import Haptics
import Testing

/// `.haptic` clips: reading them as real files are written, refusing broken ones by name, playing
/// them, and the round trips through patterns.
@Suite(".haptic clips (Lofelt / Meta Haptics Studio)")
struct HapticClipTests {
    /// A clip in the style of a Studio export (every metadata key, full-precision floats, integers
    /// 0 and 1, a frequency envelope ending early, emphasis, the last two amplitude breakpoints at
    /// one time), written here: `count` breakpoints every `spacing` seconds.
    static func studioStyle(count: Int = 40, spacing: Double = 0.0125, pretty: Bool = false) -> String {
        var amplitude: [String] = []
        for index in 0..<count {
            let time = Double(index) * spacing
            let value = index == 0 ? 0.0078125 : 0.5 + 0.45 * sin(Double(index) * 0.7)
            var point = "{\"time\":\(time),\"amplitude\":\(Float(value))"
            if index % 9 == 4 { point += ",\"emphasis\":{\"amplitude\":\(Float(min(1, value * 1.6))),\"frequency\":1}" }
            amplitude.append(point + "}")
        }
        let last = Double(count - 1) * spacing
        amplitude.append("{\"time\":\(last),\"amplitude\":0}")
        var frequency: [String] = []
        for index in 0..<(count / 2 - 1) {
            frequency.append("{\"time\":\(Double(index) * spacing * 2),\"frequency\":\(Float(0.3 + 0.2 * cos(Double(index))))}")
        }
        let text = """
            {"version":{"major":1,"minor":0,"patch":0},"metadata":{"editor":"Lofelt Studio","author":"someone@example.org",\
            "source":"boom.wav","project":"boom","tags":[],"description":""},"signals":{"continuous":{"envelopes":\
            {"amplitude":[\(amplitude.joined(separator: ","))],"frequency":[\(frequency.joined(separator: ","))]}}}}
            """
        return pretty ? (try! HapticClip(haptic: text)).hapticText() : text
    }

    @Test("a Studio-style clip reads: version, metadata, envelopes, emphasis, a final step; its text reads back equal")
    func reads() throws {
        let clip = try HapticClip(haptic: Self.studioStyle())
        #expect(clip.version == .init(major: 1))
        #expect(clip.metadata.editor == "Lofelt Studio" && clip.metadata.project == "boom" && clip.metadata.tags.isEmpty)
        #expect(clip.amplitude.count == 41 && clip.frequency?.count == 19)
        #expect(clip.amplitude.filter { $0.emphasis != nil }.count == 4)
        #expect(abs(clip.duration - 0.4875) < 1e-12)
        #expect(clip.amplitude(at: clip.duration) == 0, "the step at the end lands at 0")
        #expect(try HapticClip(haptic: clip.hapticText()) == clip)
        #expect(try HapticClip(haptic: clip.hapticText(pretty: false)) == clip)
    }

    @Test("tolerant as real files need: trailing commas, no minor or patch, no metadata, unknown keys, no or empty frequency, a late first breakpoint")
    func tolerant() throws {
        let minimal = #"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0.1,"amplitude":1,},{"time":0.2,"amplitude":0},],},},},"x":1,}"#
        let clip = try HapticClip(haptic: minimal)
        #expect(clip.version == .init(major: 1, minor: 0, patch: 0) && clip.frequency == nil && clip.metadata == .init())
        #expect(clip.frequency(at: 0.15) == HapticClip.defaultFrequency)
        // Before a late first breakpoint the envelope rises from 0 at 0, as Lofelt's player plays it.
        let voice = clip.pattern.strongestVoice(spacing: 0.01).first { abs($0.time - 0.05) < 1e-9 }
        #expect(voice.map { abs($0.intensity - 0.5) < 1e-6 } == true, "\(String(describing: voice))")
        let empty = try HapticClip(haptic: #"{"version":{"major":1,"minor":2},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":0.5}],"frequency":[]}}}}"#)
        #expect(empty.frequency == [] && empty.duration == 0)
    }

    @Test("broken clips are refused naming the key, the value and the rule", arguments: [
        ("{\"version\":", "not valid JSON"),
        (#"{"signals":{}}"#, "no \"version\""),
        (#"{"version":{"major":0,"minor":2,"patch":0},"voices":{}}"#, ".vij"),
        (#"{"version":{"major":2},"signals":{}}"#, "only version 1"),
        (#"{"version":{"major":1}}"#, "$.signals"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[]}}}}"#, "amplitude envelope is empty"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":1.2}]}}}}"#, "amplitude[0].amplitude"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":-1,"amplitude":1}]}}}}"#, "amplitude[0].time"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0.2,"amplitude":1},{"time":0.1,"amplitude":0}]}}}}"#, "must not decrease"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":0.8,"emphasis":{"amplitude":0.5,"frequency":1}}]}}}}"#, "weaker than the envelope"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":0.8,"emphasis":{"amplitude":0.9}}]}}}}"#, "emphasis.frequency"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":0}],"frequency":[{"time":0,"frequency":-0.1}]}}}}"#, "frequency[0].frequency"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":0}],"frequency":[{"time":1,"frequency":0.1},{"time":0.5,"frequency":0.1}]}}}}"#, "frequency[1].time"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":4000,"amplitude":0}]}}}}"#, "amplitude[0].time"),
        (#"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":"loud"}]}}}}"#, "amplitude[0].amplitude"),
    ])
    func refused(_ text: String, _ expected: String) {
        #expect {
            _ = try HapticClip(haptic: text)
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test("the fixtures: every valid clip reads, plays as a pattern and round-trips; every invalid one is refused naming the file")
    func fixtures() throws {
        let root = TestSupport.packageRoot + "/Tests/Fixtures/haptic"
        let valid = try FileManager.default.contentsOfDirectory(atPath: root + "/valid").filter { $0.hasSuffix(".haptic") }
        let invalid = try FileManager.default.contentsOfDirectory(atPath: root + "/invalid").filter { $0.hasSuffix(".haptic") }
        #expect(valid.count >= 5 && invalid.count >= 7)
        for name in valid {
            let clip = try HapticClip(contentsOfFile: root + "/valid/" + name)
            _ = try HapticPattern(ahap: clip.pattern.ahapText())
            #expect(try HapticPattern(document: Array(clip.hapticText().utf8)) == clip.pattern, "\(name)")
        }
        for name in invalid {
            #expect(throws: HapticClipError.self, "\(name)") { _ = try HapticClip(contentsOfFile: root + "/invalid/" + name) }
            #expect { _ = try HapticClip(contentsOfFile: root + "/invalid/" + name) } throws: { "\($0)".hasPrefix(root + "/invalid/" + name + ": ") }
        }
    }

    @Test("a file's error names the file; a missing file is an error naming it")
    func fileErrors() throws {
        let directory = TestSupport.makeTemporaryDirectory("haptic-clip")
        let path = directory + "/bad.haptic"
        try #"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[]}}}}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect { _ = try HapticClip(contentsOfFile: path) } throws: { "\($0)".hasPrefix(path + ": $.signals.continuous.envelopes.amplitude") }
        #expect { _ = try HapticClip(contentsOfFile: directory + "/none.haptic") } throws: { "\($0)".contains("none.haptic") }
    }

    /// The largest difference between `a` and `b` over `0…end` every millisecond, where `where` holds.
    static func largestDifference(_ a: (Double) -> Double, _ b: (Double) -> Double, to end: Double, where condition: (Double) -> Bool = { _ in true }) -> Double {
        var worst = 0.0
        for step in 0...Int(end * 1000) {
            let time = Double(step) / 1000
            guard condition(time) else { continue }
            worst = max(worst, abs(a(time) - b(time)))
        }
        return worst
    }

    @Test("the pattern plays the clip: the rendered intensity is its amplitude envelope, each emphasis a transient at its own strength")
    func patternPlaysTheClip() throws {
        let clip = try HapticClip(haptic: Self.studioStyle())
        let pattern = clip.pattern
        let rendered = pattern.strongestVoice(transientDuration: 0, spacing: 0.001)
        var worst = 0.0, worstSharpness = 0.0
        for sample in rendered where sample.time < clip.duration - 1e-9 {
            worst = max(worst, abs(sample.intensity - clip.amplitude(at: sample.time)))
            if clip.amplitude(at: sample.time) > 0.05 { worstSharpness = max(worstSharpness, abs(sample.sharpness - clip.frequency(at: sample.time))) }
        }
        #expect(worst < 1e-6, "intensity strays \(worst) from the amplitude envelope")
        #expect(worstSharpness <= HapticClip.sharpnessToleranceForTests + 1e-9, "sharpness strays \(worstSharpness)")
        let transients = pattern.events.filter { $0.type == .hapticTransient }
        let emphases = clip.amplitude.filter { $0.emphasis != nil }
        #expect(transients.map(\.relativeTime) == emphases.map(\.time))
        #expect(transients.map { $0.value(of: .hapticIntensity) } == emphases.map { $0.emphasis!.amplitude })
        // The AHAP written from it reads back as the same pattern.
        #expect(try HapticPattern(ahap: pattern.ahapText()) == pattern)
        print("haptic → pattern: \(clip.amplitude.count) breakpoints → \(pattern.events.count) events; intensity error \(worst), sharpness error \(worstSharpness)")
    }

    @Test("round trip .haptic → pattern → .haptic keeps the envelopes within the stated tolerances and every emphasis exactly")
    func roundTrip() throws {
        let clip = try HapticClip(haptic: Self.studioStyle(count: 120, spacing: 0.011))
        let again = HapticClip(pattern: clip.pattern)
        let amplitudeError = Self.largestDifference(clip.amplitude(at:), again.amplitude(at:), to: clip.duration - 0.001)
        let frequencyError = Self.largestDifference(clip.frequency(at:), again.frequency(at:), to: clip.duration - 0.001) { clip.amplitude(at: $0) > 0.05 }
        #expect(amplitudeError <= HapticClip.exportTolerance + 1e-6, "amplitude \(amplitudeError)")
        #expect(frequencyError <= HapticClip.sharpnessToleranceForTests + HapticClip.exportTolerance + 1e-6, "frequency \(frequencyError)")
        let before = clip.amplitude.compactMap { point in point.emphasis.map { (point.time, $0) } }
        let after = again.amplitude.compactMap { point in point.emphasis.map { (point.time, $0) } }
        #expect(before.count == after.count)
        for (a, b) in zip(before, after) {
            #expect(abs(a.0 - b.0) < 1e-9 && abs(a.1.amplitude - b.1.amplitude) < 1e-6 && abs(a.1.frequency - b.1.frequency) < 1e-6, "\(a) → \(b)")
        }
        #expect(again.amplitude.count <= clip.amplitude.count + 2, "\(clip.amplitude.count) breakpoints became \(again.amplitude.count)")
        print("haptic round trip: amplitude error \(amplitudeError), frequency error \(frequencyError); \(clip.amplitude.count) → \(again.amplitude.count) amplitude breakpoints")
    }

    @Test("an AHAP pattern becomes a clip of what it renders: steps stay steps, fades become lines, taps become emphasis; and plays back alike")
    func fromPattern() throws {
        let pattern = try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: 0.6), .init(parameterID: .hapticSharpness, value: 0.3)],
                relativeTime: 0.1, duration: 0.3),
            HapticEvent(
                eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 0.9), .init(parameterID: .hapticSharpness, value: 0.8)],
                relativeTime: 0.2),
            HapticEvent(
                eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 0.4), .init(parameterID: .hapticSharpness, value: 1)],
                relativeTime: 0.5),
        ], parameterCurves: [
            HapticParameterCurve(parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: 1), .init(relativeTime: 0.3, value: 0.5)], relativeTime: 0.1),
        ])
        let clip = HapticClip(pattern: pattern)
        #expect(clip.metadata.editor == "swift-haptics")
        // The step up at 0.1 s: two breakpoints at one time.
        let atStart = clip.amplitude.filter { abs($0.time - 0.1) < 1e-9 }.map(\.amplitude)
        #expect(atStart.count == 2 && atStart[0] == 0 && abs(atStart[1] - 0.6) < 1e-6, "\(clip.amplitude)")
        // The curve's fade: 0.6 → 0.3 over 0.3 s is one line.
        #expect(abs(clip.amplitude(at: 0.25) - 0.45) < 0.002)
        // Taps: emphasis at their times, as they sound under the curve (0.9 × 0.8333 at 0.2 s).
        let emphases = clip.amplitude.compactMap { point in point.emphasis.map { (point.time, $0) } }
        #expect(emphases.count == 2)
        #expect(abs(emphases[0].0 - 0.2) < 1e-9 && abs(emphases[0].1.amplitude - 0.9 * (1 - 0.5 * (0.1 / 0.3))) < 1e-6 && emphases[0].1.frequency == 0.8)
        // After its last point the curve holds 0.5.
        #expect(abs(emphases[1].0 - 0.5) < 1e-9 && abs(emphases[1].1.amplitude - 0.2) < 1e-9 && emphases[1].1.frequency == 1)
        #expect(clip.frequency?.allSatisfy { abs($0.frequency - 0.3) < 1e-9 } == true)
        // Back to a pattern, it renders what the original pattern renders.
        let original = pattern.strongestVoice(transientDuration: 0, spacing: 0.001)
        let replayed = clip.pattern.strongestVoice(transientDuration: 0, spacing: 0.001)
        var worst = 0.0
        for (a, b) in zip(original, replayed) where abs(a.time - 0.1) > 0.0015 && abs(a.time - 0.4) > 0.0015 { worst = max(worst, abs(a.intensity - b.intensity)) }
        #expect(worst <= HapticClip.exportTolerance + 1e-6, "\(worst)")
        // Written and read as a file.
        let path = TestSupport.makeTemporaryDirectory("haptic-export") + "/out.haptic"
        try clip.writeHaptic(toFile: path)
        #expect(try HapticClip(contentsOfFile: path) == clip)
    }

    @Test("a clip plays on the recording LRA: frames follow the envelope, an emphasis is a tap")
    func playsOnADevice() throws {
        let rig = try EngineRig()
        let clip = try HapticClip(haptic: #"{"version":{"major":1},"signals":{"continuous":{"envelopes":{"amplitude":[{"time":0,"amplitude":0},{"time":0.1,"amplitude":0.8,"emphasis":{"amplitude":1,"frequency":1}},{"time":0.2,"amplitude":0}],"frequency":[{"time":0,"frequency":0},{"time":0.2,"frequency":1}]}}}}"#)
        try rig.engine.makePlayer(with: clip.pattern).start(atTime: 0)
        for step in 1...40 { rig.advance(to: Double(step) * 0.01) }
        let frames = try rig.frames()
        let peak = try #require(frames.max { $0.amplitudes[0] < $1.amplitudes[0] })
        #expect(abs(peak.milliseconds - 100) <= 2, "the emphasis at 100 ms is the strongest frame: \(frames)")
        let rising = frames.filter { $0.milliseconds > 10 && $0.milliseconds < 90 }.map { $0.amplitudes[0] }
        #expect(rising.count >= 3 && zip(rising, rising.dropFirst()).allSatisfy { $0 <= $1 }, "\(frames)")
        let frequencies = frames.filter { $0.amplitudes[0] > 0 && $0.milliseconds > 110 }.map { $0.frequencies[0] }
        #expect(frequencies.count >= 2 && frequencies.first! < frequencies.last!, "the frequency rises: \(frames)")
        #expect(frames.last?.amplitudes == [0])
    }
}

extension HapticClip {
    /// The tolerance the pattern's sharpness keeps to the clip's frequency (see the conversion).
    static let sharpnessToleranceForTests = 0.01
}
