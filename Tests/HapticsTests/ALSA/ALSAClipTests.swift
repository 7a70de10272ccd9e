import Foundation
import Haptics
import HapticsAudioFile
import HapticsTools
import Testing

/// AHAP `AudioCustom` clips through the engine, `libhaptics-alsa.so` and alsa-lib's `file` PCM:
/// what the coil is sent is read back from the raw file.
@Suite("Clips on a waveform device: an AudioCustom event's clip reaches the coil's samples at its time, follows pause and stop", .serialized)
struct ALSAClipTests {
    let pcm = ALSAFilePCMTests()

    /// A mono sine clip: `seconds` of `frequency` Hz at `amplitude`, sampled at `rate`.
    static func sine(_ frequency: Double, amplitude: Float, seconds: Double, rate: Double) throws -> AudioClip {
        let samples = (0..<Int(seconds * rate)).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / rate)) }
        return try AudioClip(interleaved: samples, channelCount: 1, sampleRate: rate, name: "sine")
    }

    /// A tap at 0 and the clip registered as `sound.wav` at `at` seconds, at `volume`.
    static func pattern(clipAt at: Double, volume: Double = 1, duration: Double = 0) throws -> HapticPattern {
        try HapticPattern(events: [
            HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 1)], relativeTime: 0),
            HapticEvent(
                eventType: .audioCustom, parameters: [.init(parameterID: .audioVolume, value: volume)], relativeTime: at, duration: duration,
                waveformPath: "sound.wav"),
        ])
    }

    /// Plays `pattern` with `clip` registered, calling `during` with the player once it started;
    /// waits `seconds` in all.
    func play(
        _ pattern: HapticPattern, clip: AudioClip, on rig: ALSAFilePCMTests.Rig, for seconds: Double,
        during: (any HapticAdvancedPatternPlayer) throws -> Void = { _ in }
    ) throws {
        let device = try rig.system.openDevice("alsa:testcoil")
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        try engine.start()
        try engine.registerAudioResource(clip, named: "sound.wav")
        let player = try engine.makeAdvancedPlayer(with: pattern)
        let started = Date()
        try player.start(atTime: 0)
        try during(player)
        usleep(UInt32(max(seconds - Date().timeIntervalSince(started), 0) * 1e6))
        engine.stop()
        device.close()
    }

    /// How long the rig's coil sounded, first to last audible sample, in seconds.
    func sounded(_ rig: ALSAFilePCMTests.Rig) throws -> Double {
        let span = try #require(Signal.extent(try pcm.read(rig)[1]))
        return Double(span.count) / rig.rate
    }

    @Test("a 24 kHz clip 0.3 s after a tap: on the coil 0.3 s after the tap's first sample, at its pitch, volume and length")
    func clipAtItsTime() throws {
        let rig = try pcm.rig()
        let clip = try Self.sine(60, amplitude: 0.5, seconds: 0.2, rate: 24_000)
        try play(try Self.pattern(clipAt: 0.3, volume: 0.8), clip: clip, on: rig, for: 0.9)
        let coil = try pcm.read(rig)[1]
        let tap = try #require(Signal.extent(coil))
        let afterTap = Int(0.1 * rig.rate) + tap.lowerBound
        let sound = try #require(Signal.extent(Array(coil[afterTap...]), threshold: 0.02))
        let start = Double(afterTap + sound.lowerBound - tap.lowerBound) / rig.rate
        // The tap's first sample is its burst's zero crossing; the sine's first sample over 0.02 is
        // a few samples into it (0.02 of 0.4 at 60 Hz: 0.13 ms).
        #expect(abs(start - 0.3) < 0.002, "the clip began \(start) s after the tap")
        let length = Double(sound.count) / rig.rate
        #expect(abs(length - 0.2) < 0.003, "it lasted \(length) s")
        let body = coil[(afterTap + sound.lowerBound)..<(afterTap + sound.upperBound)]
        #expect(Signal.peak(of: body, in: 30...200, rate: rig.rate) == 60)
        let level = Signal.amplitude(of: body, at: 60, rate: rig.rate)
        #expect(abs(level - 0.4) < 0.01, "amplitude \(level): 0.5 × AudioVolume 0.8")
        #expect(try pcm.read(rig)[0].allSatisfy { $0 == 0 }, "the channel with no actuator stays silent")
    }

    @Test("paused mid-clip and resumed: the clip carries on from where it was, with no step, and plays whole")
    func pauseAndResume() throws {
        let rig = try pcm.rig()
        // A ramp: every sample says how far into the clip it is (0.8 at its end, 1 s in).
        let rate = 48_000.0
        let clip = try AudioClip(interleaved: (0..<48_000).map { Float($0) / 48_000 * 0.8 }, channelCount: 1, sampleRate: rate)
        let pattern = try HapticPattern(events: [HapticEvent(eventType: .audioCustom, relativeTime: 0, waveformPath: "sound.wav")])
        try play(pattern, clip: clip, on: rig, for: 1.8) { player in
            usleep(300_000)
            try player.pause(atTime: 0)
            usleep(300_000)
            try player.resume(atTime: 0)
        }
        let coil = try pcm.read(rig)[1]
        let first = try #require(coil.firstIndex { $0 != 0 })
        // While paused the coil idles and its stream stops, so the file holds no pause: only the
        // silence that pushed the clip's last samples out of the card's buffer (a few hundred frames).
        var silentRun = 0, gapStart: Int?
        for index in first..<coil.count {
            silentRun = coil[index] == 0 ? silentRun + 1 : 0
            if silentRun == 200 {
                gapStart = index - silentRun + 1
                break
            }
        }
        let pausedAt = try #require(gapStart, "no silence where it paused")
        let resumedAt = try #require(coil[pausedAt...].firstIndex { $0 != 0 })
        // Before the 1 ms fade out, and after the 1 ms fade in: the same place in the clip.
        let before = coil[pausedAt - 60], after = coil[resumedAt + 60]
        #expect(abs(after - before) < 0.004, "the clip went on from \(before) to \(after)")
        #expect(before > 0.2 && before < 0.3, "paused 0.3 s in: \(before)")
        let end = try #require(coil.lastIndex { $0 != 0 })
        #expect(abs(coil[end - 60] - 0.8) < 0.01, "it played to its end: \(coil[end - 60])")
        let played = Double(end - first - (resumedAt - pausedAt)) / rig.rate
        #expect(abs(played - 1) < 0.01, "\(played) s of clip in all")
    }

    @Test("a stop mid-clip silences the coil within the stream's latency, and nothing follows")
    func stop() throws {
        let rig = try pcm.rig()
        let clip = try Self.sine(100, amplitude: 0.5, seconds: 1, rate: 48_000)
        let pattern = try HapticPattern(events: [HapticEvent(eventType: .audioCustom, relativeTime: 0, waveformPath: "sound.wav")])
        try play(pattern, clip: clip, on: rig, for: 1.2) { player in
            usleep(200_000)
            try player.stop(atTime: 0)
        }
        let seconds = try sounded(rig)
        #expect(seconds > 0.19 && seconds < 0.23, "sounded \(seconds) s of a 1 s clip stopped at 0.2 s")
    }

    @Test("an AudioContinuous event on a coil: a sine at its pitch's place in the coil's band, at its volume, for its duration; a motor plays nothing of it")
    func audioContinuous() throws {
        func tone(pitch: Double, volume: Double) throws -> [Float] {
            let rig = try pcm.rig()
            let event = HapticEvent(
                eventType: .audioContinuous, parameters: [.init(parameterID: .audioVolume, value: volume), .init(parameterID: .audioPitch, value: pitch)],
                relativeTime: 0, duration: 0.2)
            try pcm.play(try HapticPattern(events: [event]), on: rig, for: 0.5)
            return try pcm.read(rig)[1]
        }
        for (pitch, frequency) in [(-1.0, 112.5), (1.0, 225.0)] {
            let coil = try tone(pitch: pitch, volume: 1)
            let span = try #require(Signal.extent(coil))
            #expect(abs(Double(span.count) / 48_000 - 0.2) < 0.012, "pitch \(pitch): sounded \(Double(span.count) / 48_000) s")
            let middle = coil[(span.lowerBound + 960)..<(span.upperBound - 960)]
            // The uncalibrated band of a 150 Hz coil: 112.5…225 Hz, its ends for pitch -1 and 1.
            #expect(abs(Signal.peak(of: middle, in: 90...260, rate: 48_000) - frequency) <= 1, "pitch \(pitch)")
            #expect(abs(Signal.amplitude(of: middle, at: frequency, rate: 48_000) - 1) < 0.03, "volume 1 is full scale")
        }
        let quiet = try tone(pitch: 0, volume: 0.3)
        let span = try #require(Signal.extent(quiet))
        let level = Signal.amplitude(of: quiet[(span.lowerBound + 960)..<(span.upperBound - 960)], at: 112.5 * 2.0.squareRoot(), rate: 48_000)
        #expect(level > 0.05 && level < 0.6, "volume 0.3: amplitude \(level)")

        // On a motor (the recording LRA) the same pattern sends no drive.
        let output = TestSupport.makeTemporaryDirectory("audio-continuous") + "/rec.jsonl"
        let system = TestSupport.recordingSystem(devices: "lra", output: output)
        let device = try system.openDevice("recording:lra")
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        let event = HapticEvent(eventType: .audioContinuous, relativeTime: 0, duration: 0.1)
        try engine.makePlayer(with: try HapticPattern(events: [event])).start(atTime: 0)
        usleep(300_000)
        engine.stop()
        device.close()
        let frames = try Recording(contentsOf: output).frames(for: "recording:lra")
        #expect(frames.allSatisfy { $0.frame.isSilent }, "\(frames.count) frames, \(frames.filter { !$0.frame.isSilent }.count) not silent")
    }

    @Test("haptic-cal play: an AHAP file's AudioCustom clip, a WAV beside it, plays on the coil; a missing clip file is an error naming it")
    func hapticCalPlays() throws {
        let rig = try pcm.rig()
        let directory = TestSupport.makeTemporaryDirectory("clip-ahap")
        try FileManager.default.createDirectory(atPath: directory + "/Sounds", withIntermediateDirectories: true)
        let tone = (0..<4_800).map { Int16(16_384 * sin(2 * Double.pi * 200 * Double($0) / 48_000)) }
        try WAVFile.write(tone, channels: 1, rate: 48_000, to: directory + "/Sounds/tone.wav")
        func ahap(_ path: String) -> String {
            """
            {"Version": 1.0, "Pattern": [{"Event": {"Time": 0.1, "EventType": "AudioCustom", "EventWaveformPath": "\(path)",
              "EventParameters": [{"ParameterID": "AudioVolume", "ParameterValue": 1.0}]}}]}
            """
        }
        try ahap("Sounds/tone.wav").write(toFile: directory + "/tone.ahap", atomically: false, encoding: .utf8)
        try ahap("Sounds/missing.wav").write(toFile: directory + "/missing.ahap", atomically: false, encoding: .utf8)
        let options = [
            "--plugin-path", TestSupport.buildDirectory, "--in-process", "--set", "alsa.devices=\(rig.directory)", "--set", "alsa.dualsense=off",
            "--set", "recording.devices=none",
        ]
        let (status, output) = try TestSupport.run(TestSupport.buildDirectory + "/haptic-cal", ["play", "alsa:testcoil", directory + "/tone.ahap"] + options)
        #expect(status == 0, "\(output)")
        #expect(output.contains("clips: 1 file decoded for 1 AudioCustom event"), "\(output)")
        #expect(!output.contains("note:"), "\(output)")
        let coil = try pcm.read(rig)[1]
        let span = try #require(Signal.extent(coil, threshold: 0.02))
        #expect(abs(Double(span.count) / rig.rate - 0.1) < 0.003, "sounded \(Double(span.count) / rig.rate) s")
        let body = coil[span]
        #expect(Signal.peak(of: body, in: 100...300, rate: rig.rate) == 200)
        #expect(abs(Signal.amplitude(of: body, at: 200, rate: rig.rate) - 0.5) < 0.01)

        let (failed, message) = try TestSupport.run(TestSupport.buildDirectory + "/haptic-cal", ["play", "alsa:testcoil", directory + "/missing.ahap"] + options)
        #expect(failed == 1, "\(message)")
        #expect(message.contains("\(directory)/Sounds/missing.wav: No such file or directory"), "\(message)")
    }

    @Test("the engine stopped mid-clip while the coil is kept prepared: the clip stops with it, it does not play on")
    func engineStopWhilePrepared() throws {
        let rig = try pcm.rig()
        let clip = try Self.sine(100, amplitude: 0.5, seconds: 1, rate: 48_000)
        let device = try rig.system.openDevice("alsa:testcoil")
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        try engine.start()
        try engine.registerAudioResource(clip, named: "sound.wav")
        let player = try engine.makePlayer(with: try HapticPattern(events: [HapticEvent(eventType: .audioCustom, relativeTime: 0, waveformPath: "sound.wav")]))
        try player.start(atTime: 0)
        usleep(200_000)
        // Prepared: the device stays awake after the engine lets go, and its stream runs on.
        device.prepare()
        engine.stop()
        usleep(900_000)
        device.close()
        let seconds = try sounded(rig)
        #expect(seconds > 0.19 && seconds < 0.25, "sounded \(seconds) s of a 1 s clip whose engine stopped at 0.2 s")
    }

    @Test("an audio file decoded by libsndfile: the samples and rate as written; a missing, a non-audio and a 4-channel file are clear errors")
    func decoding() throws {
        let directory = TestSupport.makeTemporaryDirectory("clips")
        let samples: [Int16] = [0, 16_384, -16_384, 32_767, -32_768, 1]
        let stereo = directory + "/stereo.wav"
        try WAVFile.write(samples, channels: 2, rate: 22_050, to: stereo)
        let clip = try AudioClip(contentsOfFile: stereo)
        #expect(clip.channelCount == 2 && clip.sampleRate == 22_050 && clip.frameCount == 3)
        #expect(clip.samples == samples.map { Float($0) / 32_768 })

        #expect(throws: AudioFileError.unreadable(path: directory + "/none.wav", reason: "No such file or directory")) {
            try AudioClip(contentsOfFile: directory + "/none.wav")
        }
        let text = directory + "/notes.wav"
        try "not audio".write(toFile: text, atomically: false, encoding: .utf8)
        do {
            _ = try AudioClip(contentsOfFile: text)
            Issue.record("a text file decoded")
        } catch {
            guard case .notAudio(let path, _) = error else { throw error }
            #expect(path == text)
            #expect(error.description.contains("WAV, FLAC"))
        }
        let four = directory + "/dualsense.wav"
        try WAVFile.write([Int16](repeating: 0, count: 8), channels: 4, rate: 48_000, to: four)
        #expect(throws: AudioFileError.clip(.channelCount(name: four, 4))) { try AudioClip(contentsOfFile: four) }
        let long = directory + "/long.wav"
        try WAVFile.write([Int16](repeating: 0, count: 61_000), channels: 1, rate: 1_000, to: long)
        #expect(throws: AudioFileError.clip(.tooLong(name: long, seconds: 61))) { try AudioClip(contentsOfFile: long) }
    }
}

/// Writes 16-bit PCM WAV files for tests (the canonical 44-byte header), for libsndfile to read.
enum WAVFile {
    static func write(_ samples: [Int16], channels: Int, rate: Int, to path: String) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        let bytes = samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + bytes))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(channels))
        append(UInt32(rate))
        append(UInt32(rate * channels * 2))
        append(UInt16(channels * 2))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(bytes))
        for sample in samples { append(sample) }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
