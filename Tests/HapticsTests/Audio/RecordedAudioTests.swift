import Foundation
import Haptics
import HapticsAudioAnalysis
import HapticsAudioFile
import Testing

/// Audio to haptics on real recordings the test makes with tools nobody here wrote: speech from
/// `espeak-ng` (22.05 kHz mono WAV) and plucked notes from `sox` (44.1 kHz stereo FLAC), each between
/// stretches of silence. No exact truth here: the output is deterministic, its taps are bounded in
/// density and match the sound's structure, and nothing plays in the silence.
@Suite("Audio to haptics on recordings made by espeak-ng and sox")
struct RecordedAudioTests {
    static func tool(_ arguments: [String], in directory: String) throws {
        let run = try ChildProcess(arguments, outputPath: directory + "/\((arguments[0] as NSString).lastPathComponent).log")
        #expect(try run.wait(timeout: 60) == .exited(0), "\(arguments.joined(separator: " ")): \(run.output)")
    }

    static func convert(_ path: String) throws -> HapticClip {
        let reader = try AudioFileReader(path: path)
        var analyzer = try AudioToHaptics(sampleRate: reader.sampleRate)
        try reader.stream(blockFrames: 4_096) { analyzer.feed($0) }
        return try analyzer.finish()
    }

    /// Checks what every recording must give: the same clip twice, at most 8 taps a second (the
    /// default density) and a minimum gap of 50 ms, and neither tap nor vibration within the
    /// leading and trailing silences (`lead` and `trail` seconds, less 0.1 s for the release).
    static func checkCommon(_ clip: HapticClip, again: HapticClip, lead: Double, trail: Double, length: Double) {
        #expect(clip == again, "two conversions of one file differ")
        let taps = clip.amplitude.filter { $0.emphasis != nil }.map(\.time)
        #expect(Double(taps.count) <= 8 * length, "\(taps.count) taps in \(length) s")
        #expect(zip(taps, taps.dropFirst()).allSatisfy { $1 - $0 >= 0.05 - 1e-9 }, "taps at \(taps)")
        let sound = (lead - 0.1)...(length - trail + 0.3)
        #expect(taps.allSatisfy { sound.contains($0) }, "a tap in the silence: \(taps), sound within \(sound)")
        let loud = clip.amplitude.filter { $0.amplitude > 0.001 }.map(\.time)
        #expect(loud.allSatisfy { sound.contains($0) }, "vibration in the silence at \(loud.filter { !sound.contains($0) })")
    }

    @Test("speech from espeak-ng between 1.5 s silences: deterministic, taps on the syllables at most 8 a second, nothing in the silence")
    func speech() throws {
        let directory = TestSupport.makeTemporaryDirectory("espeak")
        try Self.tool(["/usr/bin/espeak-ng", "-w", directory + "/voice.wav", "Haptics follow the voice. Taps land on the syllables, and nothing plays in silence."], in: directory)
        try Self.tool(["/usr/bin/sox", directory + "/voice.wav", directory + "/speech.wav", "pad", "1.5", "1.5"], in: directory)
        let clip = try Self.convert(directory + "/speech.wav"), again = try Self.convert(directory + "/speech.wav")
        let length = try { let r = try AudioFileReader(path: directory + "/speech.wav"); return Double(r.declaredFrames) / r.sampleRate }()
        Self.checkCommon(clip, again: again, lead: 1.5, trail: 1.5, length: length)
        let taps = clip.amplitude.filter { $0.emphasis != nil }
        print("espeak-ng: \(String(format: "%.2f", length)) s, \(taps.count) taps at \(taps.map { ($0.time * 100).rounded() / 100 })")
        // About five seconds of speech: syllables make taps, but not one per 5 ms hop.
        #expect(taps.count >= 5, "\(taps.count) taps")
    }

    @Test("eight plucked notes from sox, 0.5 s apart, between 1 s silences: a tap per note, and the low note's body as vibration")
    func music() throws {
        let directory = TestSupport.makeTemporaryDirectory("sox-music")
        let path = directory + "/notes.flac"
        try Self.tool(["/usr/bin/sox", "-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "0.4", "pluck", "E2", "pad", "0", "0.1", "repeat", "7", "pad", "1", "1"], in: directory)
        let clip = try Self.convert(path), again = try Self.convert(path)
        let reader = try AudioFileReader(path: path)
        let length = Double(reader.declaredFrames) / reader.sampleRate
        #expect(abs(length - 6) < 0.01, "\(length) s")
        Self.checkCommon(clip, again: again, lead: 1, trail: 1, length: length)
        let taps = clip.amplitude.filter { $0.emphasis != nil }.map(\.time)
        print("sox: taps at \(taps.map { ($0 * 100).rounded() / 100 })")
        let notes = (0..<8).map { 1 + 0.5 * Double($0) }
        for note in notes { #expect(taps.contains { abs($0 - note) <= 0.015 }, "no tap within 15 ms of the note at \(note) s: \(taps)") }
        #expect(taps.count == notes.count, "\(taps)")
        // E2 (82 Hz) lies in the 20–250 Hz band: each note's body vibrates.
        for note in notes {
            let body = stride(from: note + 0.02, to: note + 0.3, by: 0.01).map { clip.amplitude(at: $0) }.max() ?? 0
            #expect(body > 0.2, "the note at \(note) s: vibration \(body)")
        }
    }
}
