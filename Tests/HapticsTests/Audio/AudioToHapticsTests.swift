import Foundation
import Haptics
import HapticsAudioAnalysis
import HapticsAudioFile
import Testing

/// Audio to haptics on synthetic audio with known truth, written as WAV files and read back through
/// libsndfile (the real path): onsets, their loudness and brightness, the envelope, silence.
@Suite("Audio to haptics: onsets, loudness, brightness and envelope from audio files")
struct AudioToHapticsTests {
    /// Writes 16-bit PCM WAV: `channels` interleaved.
    static func writeWAV(_ samples: [Float], rate: Int = 48_000, channels: Int = 1, to path: String, declaredFrames: Int? = nil) throws {
        var data = Data()
        func le32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
        func le16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        let bytes = (declaredFrames.map { $0 * channels } ?? samples.count) * 2
        data.append(contentsOf: Array("RIFF".utf8)); le32(36 + bytes); data.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16); le16(1); le16(channels); le32(rate); le32(rate * channels * 2); le16(channels * 2); le16(16)
        data.append(contentsOf: Array("data".utf8)); le32(bytes)
        for sample in samples {
            let value = Int16(max(-32_767, min(32_767, (sample * 32_767).rounded())))
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// A deterministic noise floor at `level` (a linear congruential generator).
    static func noise(count: Int, level: Float, seed: UInt32 = 1) -> [Float] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return (Float(state >> 8) / Float(1 << 24) * 2 - 1) * level
        }
    }

    /// Clicks (2 ms decaying bursts of broadband noise) at `times` with `levels`, over a quiet floor.
    static func clicks(times: [Double], levels: [Float], duration: Double, rate: Int = 48_000) -> [Float] {
        var samples = noise(count: Int(duration * Double(rate)), level: 0.0005)
        let burst = noise(count: rate / 500, level: 1, seed: 7)
        for (time, level) in zip(times, levels) {
            let start = Int(time * Double(rate))
            for index in burst.indices where start + index < samples.count {
                samples[start + index] += burst[index] * level * exp(-Float(index) / Float(rate / 2_000))
            }
        }
        return samples
    }

    static func convert(_ samples: [Float], rate: Int = 48_000, channels: Int = 1, options: AudioToHapticsOptions = .init(), name: String = "audio") throws -> HapticClip {
        let path = TestSupport.makeTemporaryDirectory("audio-haptics") + "/\(name).wav"
        try writeWAV(samples, rate: rate, channels: channels, to: path)
        let reader = try AudioFileReader(path: path)
        var analyzer = try AudioToHaptics(sampleRate: reader.sampleRate, options: options)
        try reader.stream(blockFrames: 4_096) { analyzer.feed($0) }
        return try analyzer.finish()
    }

    static let clickTimes = [0.25, 0.61, 0.9, 1.3, 1.55, 2.0, 2.2, 2.65, 3.1, 3.3, 3.75, 4.2]
    static let clickLevels: [Float] = [0.9, 0.2, 0.5, 1.0, 0.05, 0.7, 0.35, 0.12, 0.8, 0.6, 0.28, 0.42]

    @Test("clicks at known times: every onset found within 10 ms (F-measure ≥ 0.95), intensities in the order of the levels")
    func clicksFound() throws {
        let clip = try Self.convert(Self.clicks(times: Self.clickTimes, levels: Self.clickLevels, duration: 4.5))
        let taps = clip.amplitude.compactMap { point in point.emphasis.map { (time: point.time, intensity: $0.amplitude) } }
        var matched = 0, worst = 0.0
        var used = Set<Int>()
        for time in Self.clickTimes {
            guard let index = taps.indices.filter({ !used.contains($0) }).min(by: { abs(taps[$0].time - time) < abs(taps[$1].time - time) }),
                abs(taps[index].time - time) <= 0.010
            else { continue }
            used.insert(index)
            matched += 1
            worst = max(worst, abs(taps[index].time - time))
        }
        let precision = Double(matched) / Double(max(taps.count, 1)), recall = Double(matched) / Double(Self.clickTimes.count)
        let f = 2 * precision * recall / max(precision + recall, 1e-9)
        print("clicks: taps at \(taps.map { (($0.time * 1000).rounded()) }) ms; \(taps.count) taps for \(Self.clickTimes.count) clicks, F-measure \(f), worst timing \(worst * 1000) ms")
        #expect(f >= 0.95, "F \(f): taps at \(taps.map(\.time))")
        // Intensity grows with the click's level.
        let byLevel = zip(Self.clickTimes, Self.clickLevels).sorted { $0.1 < $1.1 }
        let intensities = byLevel.compactMap { pair in taps.first { abs($0.time - pair.0) <= 0.010 }?.intensity }
        #expect(intensities.count == byLevel.count && zip(intensities, intensities.dropFirst()).allSatisfy { $0 <= $1 + 1e-9 }, "\(intensities)")
        // The clicks are too short to carry the low band: no continuous vibration to speak of.
        #expect(clip.amplitude.allSatisfy { $0.emphasis != nil || $0.amplitude < 0.3 })
    }

    @Test("tone bursts at rising frequencies: the taps' sharpness rises with the brightness")
    func brightness() throws {
        let rate = 48_000
        var samples = Self.noise(count: rate * 2, level: 0.0005)
        let frequencies = [100.0, 300, 1_000, 3_000, 8_000]
        for (index, frequency) in frequencies.enumerated() {
            let start = Int((0.2 + Double(index) * 0.35) * Double(rate))
            for offset in 0..<(rate / 20) {
                samples[start + offset] += 0.6 * Float(sin(2 * Double.pi * frequency * Double(offset) / Double(rate)))
            }
        }
        let clip = try Self.convert(samples, options: { var options = AudioToHapticsOptions(); options.content = .transients; return options }())
        let sharpness = clip.amplitude.compactMap { $0.emphasis?.frequency }
        #expect(sharpness.count == frequencies.count, "\(clip.amplitude.filter { $0.emphasis != nil }.map { ($0.time, $0.emphasis!.frequency) })")
        #expect(zip(sharpness, sharpness.dropFirst()).allSatisfy { $0 < $1 }, "\(sharpness)")
        #expect(clip.amplitude.allSatisfy { $0.amplitude == 0 }, "transients only: no envelope")
    }

    @Test("a bass note is a continuous vibration while it sounds and nothing in the silence around it; silence alone is an empty clip")
    func envelopeAndSilence() throws {
        let rate = 44_100
        var samples = [Float](repeating: 0, count: rate * 3)
        for index in Int(1.0 * Double(rate))..<Int(2.0 * Double(rate)) { samples[index] = 0.7 * Float(sin(2 * Double.pi * 60 * Double(index) / Double(rate))) }
        let clip = try Self.convert(samples, rate: rate)
        for time in stride(from: 0.0, to: 0.9, by: 0.05) { #expect(clip.amplitude(at: time) == 0, "silent at \(time) s") }
        // After the 60 ms release has died away.
        for time in stride(from: 2.4, to: 3.0, by: 0.05) { #expect(clip.amplitude(at: time) == 0, "silent at \(time) s") }
        for time in stride(from: 1.1, to: 1.9, by: 0.05) { #expect(clip.amplitude(at: time) > 0.8, "sounding at \(time) s: \(clip.amplitude(at: time))") }
        // One onset: where the note starts (its steady flicker and its end bring no rise).
        #expect(clip.amplitude.filter { $0.emphasis != nil }.map { ($0.time * 100).rounded() / 100 } == [1.0], "\(clip.amplitude.filter { $0.emphasis != nil }.map(\.time))")
        #expect(Double(clip.amplitude.count) / clip.duration <= 20, "\(clip.amplitude.count) breakpoints")

        let silence = try Self.convert([Float](repeating: 0, count: rate))
        #expect(silence.amplitude.allSatisfy { $0.amplitude == 0 && $0.emphasis == nil } && silence.frequency == nil)
    }

    @Test("stereo, four channels and other rates give the same onsets; the output is deterministic, loads as AHAP and plays")
    func formatsAndOutput() throws {
        let mono = Self.clicks(times: Self.clickTimes, levels: Self.clickLevels, duration: 4.5, rate: 44_100)
        let reference = try Self.convert(mono, rate: 44_100)
        #expect(try Self.convert(mono, rate: 44_100) == reference, "deterministic")
        let stereo = mono.flatMap { [$0, $0] }
        let quad = mono.flatMap { [$0, $0, $0, $0] }
        for (samples, channels) in [(stereo, 2), (quad, 4)] {
            let clip = try Self.convert(samples, rate: 44_100, channels: channels)
            #expect(clip.amplitude.compactMap { $0.emphasis == nil ? nil : $0.time } == reference.amplitude.compactMap { $0.emphasis == nil ? nil : $0.time }, "\(channels) channels")
        }
        let slow = try Self.convert(Self.clicks(times: Self.clickTimes, levels: Self.clickLevels, duration: 4.5, rate: 16_000), rate: 16_000)
        // 16 kHz: a 32 ms window; the quietest click (−26 dB) may go, F-measure still above 0.95.
        let slowTaps = slow.amplitude.compactMap { $0.emphasis == nil ? nil : $0.time }
        #expect(slowTaps.count >= 11 && slowTaps.allSatisfy { tap in Self.clickTimes.contains { abs($0 - tap) <= 0.010 } }, "\(slowTaps)")
        // The AHAP written loads back (the project's reader), and plays on a recording device.
        let pattern = try HapticPattern(ahap: reference.pattern.ahapText())
        let rig = try EngineRig()
        try rig.engine.makePlayer(with: pattern).start(atTime: 0)
        for step in 1...460 { rig.advance(to: Double(step) * 0.01) }
        #expect(try rig.frames().filter { $0.amplitudes[0] > 0 }.count >= Self.clickTimes.count)
        #expect(try HapticClip(haptic: reference.hapticText()) == reference)
    }

    @Test("haptic-cal convert SOUND -o PATTERN.ahap writes the pattern and says what it found; a bad option is a usage error naming it")
    func command() throws {
        let directory = TestSupport.makeTemporaryDirectory("audio-cli")
        try Self.writeWAV(Self.clicks(times: Self.clickTimes, levels: Self.clickLevels, duration: 4.5), to: directory + "/clicks.wav")
        let run = try ChildProcess([TestSupport.buildDirectory + "/haptic-cal", "convert", directory + "/clicks.wav", "-o", directory + "/clicks.ahap"],
                                   environment: [:], outputPath: directory + "/convert.txt")
        #expect(try run.wait(timeout: 60) == .exited(0), "\(run.output)")
        #expect(run.output.contains("12 taps"), "\(run.output)")
        let pattern = try HapticPattern(contentsOfFile: directory + "/clicks.ahap")
        #expect(pattern.events.filter { $0.type == .hapticTransient }.count == 12)
        let bad = try ChildProcess([TestSupport.buildDirectory + "/haptic-cal", "convert", directory + "/clicks.wav", "-o", directory + "/x.ahap", "--sensitivity", "3"],
                                   environment: [:], outputPath: directory + "/bad.txt")
        #expect(try bad.wait(timeout: 60) != .exited(0))
        #expect(bad.output.contains("sensitivity 3.0 is outside 0.0…1.0"), "\(bad.output)")

        // --svg: the audio, the onsets and the haptics on one time axis.
        let plotted = try ChildProcess(
            [TestSupport.buildDirectory + "/haptic-cal", "convert", directory + "/clicks.wav", "-o", directory + "/clicks.haptic", "--svg", directory + "/clicks.svg"],
            environment: [:], outputPath: directory + "/svg.txt")
        #expect(try plotted.wait(timeout: 60) == .exited(0), "\(plotted.output)")
        let svg = try String(contentsOfFile: directory + "/clicks.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("clicks.wav: audio to haptics") && svg.contains("taps") && svg.contains("band"))
        #expect(try HapticClip(contentsOfFile: directory + "/clicks.haptic").amplitude.filter { $0.emphasis != nil }.count == 12)
    }

    @Test("haptic-cal play --audio-to-haptics adds the haptics of an AHAP's AudioCustom audio at the event's time, scaled by its volume")
    func audioEvents() throws {
        let directory = TestSupport.makeTemporaryDirectory("audio-events")
        try Self.writeWAV(Self.clicks(times: [0.1, 0.4], levels: [1, 1], duration: 0.6), to: directory + "/two.wav")
        let ahap = #"{"Version": 1, "Pattern": [{"Event": {"Time": 0.5, "EventType": "AudioCustom", "EventWaveformPath": "two.wav", "EventParameters": [{"ParameterID": "AudioVolume", "ParameterValue": 0.5}]}}]}"#
        try ahap.write(toFile: directory + "/song.ahap", atomically: true, encoding: .utf8)
        let run = try ChildProcess(
            [TestSupport.buildDirectory + "/haptic-cal", "play", "recording:lra", directory + "/song.ahap", "--audio-to-haptics", "--in-process"],
            environment: ["HAPTICS_RECORDING_DEVICES": "lra", "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory, "HAPTICS_DAEMON": "never"],
            outputPath: directory + "/play.txt")
        #expect(try run.wait(timeout: 60) == .exited(0), "\(run.output)")
        #expect(run.output.contains("derived from 1 audio file (1 AudioCustom event)"), "\(run.output)")
        // Two taps (0.6 and 0.9 s into the pattern) at half strength: frames with amplitude.
        let frames = run.output.split(separator: "\n").filter { $0.contains(" frame ") && !$0.hasSuffix("frame  0.000") }
        #expect(frames.count >= 2, "\(run.output)")
    }

    @Test("bad input: unreadable, not audio, empty, truncated, options out of range; each a clear error or sensible output")
    func badInput() throws {
        let directory = TestSupport.makeTemporaryDirectory("audio-bad")
        #expect { _ = try AudioFileReader(path: directory + "/none.wav") } throws: { "\($0)".contains("none.wav") }
        try "not audio".write(toFile: directory + "/text.wav", atomically: true, encoding: .utf8)
        #expect { _ = try AudioFileReader(path: directory + "/text.wav") } throws: { "\($0)".contains("not an audio file") }
        // No samples: an empty clip.
        let empty = try Self.convert([])
        #expect(empty.amplitude == [HapticClip.AmplitudePoint(time: 0, amplitude: 0)])
        // A header promising more than the file holds: what is there is read.
        let truncated = directory + "/truncated.wav"
        try Self.writeWAV(Self.clicks(times: [0.2], levels: [1], duration: 0.5), to: truncated, declaredFrames: 480_000)
        #expect(try AudioFileReader(path: truncated).stream { _ in } == 24_000)
        var options = AudioToHapticsOptions()
        options.sensitivity = 2
        #expect(throws: AudioToHapticsError.option("sensitivity", value: 2, range: "0.0…1.0")) { _ = try AudioToHaptics(sampleRate: 48_000, options: options) }
        #expect(throws: AudioToHapticsError.sampleRate(4_000)) { _ = try AudioToHaptics(sampleRate: 4_000) }
        // A file longer than a pattern may last (an hour and 10 s at 8 kHz, silent: a sparse file of
        // 58 MB): refused at once, naming the length and the fix, before any analysis.
        let long = directory + "/long.wav"
        try Self.writeWAV(Self.clicks(times: [0.2], levels: [1], duration: 0.5), rate: 8_000, to: long, declaredFrames: 3_610 * 8_000)
        #expect(truncate(long, off_t(44 + 3_610 * 8_000 * 2)) == 0)
        let run = try ChildProcess([TestSupport.buildDirectory + "/haptic-cal", "convert", long, "-o", directory + "/long.ahap"], environment: [:], outputPath: directory + "/long.txt")
        #expect(try run.wait(timeout: 30) != .exited(0))
        #expect(run.output.contains("the audio lasts 3610 s") && run.output.contains("trim 0 3600"), "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/long.ahap"))
    }
}
