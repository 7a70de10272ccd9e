import Foundation
import Haptics
import HapticsAudioAnalysis
import HapticsBus
import HapticsTools
import Testing

/// Live audio to haptics: the follower on synthetic audio with known truth, and the whole path
/// (an ALSA capture through the alsa plugin's ABI 1.9 capture, the engine, a recording device) from
/// the CLI and from hapticsd's `Listen`.
@Suite("Live audio to haptics: the follower, haptic-cal listen and hapticsd's Listen")
struct LiveHapticsTests {
    static let rate = 48_000
    static let block = 240

    /// Each block's level after `samples` (mono) pass through a follower.
    static func follow(_ samples: [Float], band: ClosedRange<Double> = 30...250, options: LiveHapticsOptions = .init()) throws -> [LiveHapticsLevel] {
        var follower = try LiveAudioFollower(rate: Double(rate), band: band, options: options)
        var levels: [LiveHapticsLevel] = []
        samples.withUnsafeBufferPointer { buffer in
            var start = 0
            while start + block <= buffer.count {
                levels.append(follower.process(UnsafeBufferPointer(rebasing: buffer[start..<(start + block)]), frames: block, channels: 1))
                start += block
            }
        }
        return levels
    }

    static func tone(_ frequency: Double, level: Float, seconds: Double) -> [Float] {
        (0..<Int(seconds * Double(rate))).map { level * Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    /// Kick-like hits (a decaying 80 Hz burst) at `times` with `levels`, over a −66 dBFS floor.
    static func hits(times: [Double], levels: [Float], duration: Double) -> [Float] {
        var samples = AudioToHapticsTests.noise(count: Int(duration * Double(rate)), level: 0.0005)
        for (time, level) in zip(times, levels) {
            let start = Int(time * Double(rate))
            for index in 0..<(rate / 10) where start + index < samples.count {
                let t = Double(index) / Double(rate)
                samples[start + index] += level * Float(exp(-t / 0.02) * sin(2 * Double.pi * 80 * t))
            }
        }
        return samples
    }

    static let hitTimes = [0.3, 0.75, 1.2, 1.9, 2.35, 3.0]
    static let hitLevels: [Float] = [0.9, 0.3, 0.6, 1.0, 0.15, 0.5]

    @Test("hits at known times: every onset within one block (5 ms) of its hit, F-measure 1; silence before and between them is exactly 0")
    func onsetsAndSilence() throws {
        let levels = try Self.follow(Self.hits(times: Self.hitTimes, levels: Self.hitLevels, duration: 3.5))
        let seconds = Double(Self.block) / Double(Self.rate)
        let onsets = levels.indices.filter { levels[$0].onset }.map { Double($0) * seconds }
        var matched = 0
        for time in Self.hitTimes where onsets.contains(where: { $0 >= time - 0.001 && $0 <= time + 0.010 }) { matched += 1 }
        let precision = Double(matched) / Double(max(onsets.count, 1)), recall = Double(matched) / Double(Self.hitTimes.count)
        #expect(precision == 1 && recall == 1, "onsets \(onsets)")
        // Before the first hit, and once a hit's release has died away (0.3 s on), nothing.
        for (index, level) in levels.enumerated() {
            let time = Double(index) * seconds
            let sinceHit = Self.hitTimes.filter { $0 <= time }.map { time - $0 }.min()
            if sinceHit == nil || sinceHit! > 0.4 { #expect(level.intensity == 0, "at \(time) s: \(level.intensity)") }
        }
        // Each hit drives at once, the softest after the loudest too (the onset's accent): within
        // 10 ms of it the intensity passes 0.3.
        for time in Self.hitTimes {
            let first = Int(time / seconds)
            #expect(levels[first...(first + 2)].contains { $0.intensity > 0.3 }, "hit at \(time) s")
        }
    }

    @Test("the automatic gain: a tone at −30 dBFS and one at 0 dBFS both drive near full once it settles; below the gate nothing; a softer hit after a loud one stays softer")
    func automaticGain() throws {
        let quiet = try Self.follow(Self.tone(100, level: 0.0316, seconds: 1))
        let loud = try Self.follow(Self.tone(100, level: 1, seconds: 1))
        #expect(quiet.suffix(50).allSatisfy { $0.intensity > 0.85 }, "\(quiet.last!.intensity)")
        #expect(loud.suffix(50).allSatisfy { $0.intensity > 0.85 }, "\(loud.last!.intensity)")
        let gated = try Self.follow(Self.tone(100, level: 0.002, seconds: 1))
        #expect(gated.allSatisfy { $0.intensity == 0 })
        // 1.0 then 0.3 a quarter second later: the second's peak well below the first's.
        let pair = try Self.follow(Self.hits(times: [0.2, 0.45], levels: [1, 0.3], duration: 0.8), options: { var o = LiveHapticsOptions(); o.onsetEmphasis = 0; return o }())
        let seconds = Double(Self.block) / Double(Self.rate)
        let first = pair[Int(0.2 / seconds)..<Int(0.4 / seconds)].map(\.intensity).max()!
        let second = pair[Int(0.45 / seconds)..<Int(0.65 / seconds)].map(\.intensity).max()!
        #expect(first > 0.9 && second < 0.5 * first, "\(first) then \(second)")
    }

    @Test("sharpness rises with the tone's frequency (100 Hz … 6.4 kHz), as the file conversion's does")
    func brightness() throws {
        var previous = -1.0
        for frequency in [100.0, 400, 1_600, 6_400] {
            let levels = try Self.follow(Self.tone(frequency, level: 0.5, seconds: 0.3), band: 30...20_000)
            let sharpness = levels.last!.sharpness
            #expect(sharpness > previous + 0.1, "\(frequency) Hz: \(sharpness) after \(previous)")
            previous = sharpness
        }
    }

    @Test("options out of range and bad rates are errors naming the option, the value and the range")
    func badOptions() {
        var options = LiveHapticsOptions()
        options.gate = 3
        #expect(throws: AudioToHapticsError.option("gate", value: 3, range: "-120.0…0.0")) { try LiveAudioFollower(rate: 48_000, band: 30...250, options: options) }
        #expect(throws: AudioToHapticsError.sampleRate(4_000)) { try LiveAudioFollower(rate: 4_000, band: 30...250) }
        #expect(throws: (any Error).self) { try LiveAudioFollower(rate: 8_000, band: 30...5_000) }
    }

    /// A directory whose `.asoundrc` defines `pcm.!default` and `pcm.livetest` as alsa-lib's `file`
    /// PCM reading `samples` (as stereo S16 at 48 kHz) over `null`: a capture with no card, which the
    /// alsa backend paces at its rate. Two seconds of silence follow the samples, so no run reads
    /// past the file's end (where the file plugin was seen to give a few stale samples once).
    static func captureHome(_ samples: [Float]) throws -> String {
        let directory = TestSupport.makeTemporaryDirectory("live-capture")
        var data = Data()
        for sample in samples + [Float](repeating: 0, count: 2 * rate) {
            let value = Int16(max(-32_767, min(32_767, (sample * 32_767).rounded())))
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0); data.append(contentsOf: $0) }
        }
        try data.write(to: URL(fileURLWithPath: directory + "/audio.raw"))
        let pcm = #"{ type file slave.pcm null file "/dev/null" infile "\#(directory)/audio.raw" format "raw" }"#
        try "pcm.!default \(pcm)\npcm.livetest \(pcm)\n".write(toFile: directory + "/.asoundrc", atomically: true, encoding: .utf8)
        return directory
    }

    /// The starts of bursts of drive in a recording's frames: a frame with amplitude after 50 ms of
    /// none, in seconds from the first.
    static func bursts(_ frames: [(received: HapticInstant, frame: DriveFrame)]) -> [Double] {
        var starts: [Double] = []
        var lastDrive: HapticInstant?
        for (time, frame) in frames where frame.channels.contains(where: { $0.amplitude > 0.05 }) {
            if lastDrive == nil || time.seconds(since: lastDrive!) > 0.05 { starts.append(time.seconds) }
            lastDrive = time
        }
        return starts.map { $0 - (starts.first ?? 0) }
    }

    @Test("haptic-cal listen: an ALSA capture through the alsa plugin drives the recording LRA; each hit is a burst of drive, spaced as the hits; the device ends stopped; latency is reported")
    func listenCommand() throws {
        let home = try Self.captureHome(Self.hits(times: Self.hitTimes, levels: Self.hitLevels, duration: 3.5))
        let run = try ChildProcess(
            [TestSupport.buildDirectory + "/haptic-cal", "listen", "recording:lra", "--source", "livetest", "--seconds", "3.6", "--record", home + "/rec.jsonl"],
            environment: ["HOME": home, "HAPTICS_RECORDING_DEVICES": "lra", "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory, "HAPTICS_DAEMON": "never"],
            outputPath: home + "/listen.txt")
        #expect(try run.wait(timeout: 60) == .exited(0), "\(run.output)")
        #expect(run.output.contains("listening to alsa:livetest (48000 Hz, 2 channels, period 240 frames (5.0 ms)"), "\(run.output)")
        #expect(run.output.contains("6 onsets"), "\(run.output)")
        let recording = try Recording(contentsOf: home + "/rec.jsonl")
        let frames = recording.frames(for: "recording:lra")
        let bursts = Self.bursts(frames)
        let expected = Self.hitTimes.map { $0 - Self.hitTimes[0] }
        #expect(bursts.count == expected.count, "bursts at \(bursts)")
        for (burst, hit) in zip(bursts, expected) { #expect(abs(burst - hit) < 0.012, "burst at \(burst) s, hit at \(hit) s") }
        #expect(frames.last?.frame.channels.allSatisfy { $0.amplitude == 0 } == true, "the device ended driven")
        // p50 from a block's oldest sample: the 5 ms period and the work.
        let line = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("latency") })
        let p50 = try #require(Double(line.split(separator: " ")[7]))
        #expect(p50 >= 5 && p50 < 20, "\(line)")
    }

    @Test("haptic-cal listen names a missing capture source and the fix, and runs nothing")
    func missingSource() throws {
        let home = TestSupport.makeTemporaryDirectory("live-missing")
        let run = try ChildProcess(
            [TestSupport.buildDirectory + "/haptic-cal", "listen", "recording:lra", "--source", "hw:CARD=NoSuchCard,DEV=1", "--seconds", "1"],
            environment: ["HOME": home, "HAPTICS_RECORDING_DEVICES": "lra", "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory, "HAPTICS_DAEMON": "never"],
            outputPath: home + "/listen.txt")
        #expect(try run.wait(timeout: 30) != .exited(0))
        #expect(run.output.contains("no capture source hw:CARD=NoSuchCard,DEV=1") && run.output.contains("arecord -l"), "\(run.output)")
    }

    @Test("a live ring: writes land where their position says, continue without gaps, and a stalled writer is heard as silence, never as audio a ring old")
    func liveRing() {
        let ring = LiveAudioRing(seconds: 0.8, rate: 1_000)
        let clip = AudioClip(live: ring)
        #expect(ring.frames == 800 && ring.guardFrames == 700 && clip.frameCount == 800 && clip.channelCount == 1)
        let ones = [Float](repeating: 1, count: 10)
        for block in 0..<84 { ones.withUnsafeBufferPointer { ring.write($0, at: block * 10) } }
        // 840 frames written from 0 (wrapping once): the 100 written last (740…799, 0…39) are
        // audio, the 700 after them the guard.
        let samples = clip.samples
        #expect(samples[0..<40].allSatisfy { $0 == 1 } && samples[740...].allSatisfy { $0 == 1 }, "\(samples)")
        #expect(samples[40..<740].allSatisfy { $0 == 0 })
        // A jump (the writer stalled, then resynced) clears a whole guard after it: old audio too.
        ones.withUnsafeBufferPointer { ring.write($0, at: 1_000) }
        let after = clip.samples
        #expect(after[200..<210].allSatisfy { $0 == 1 } && after[210...].allSatisfy { $0 == 0 } && after[0..<10].allSatisfy { $0 == 0 })
        // A write longer than an eighth of the ring keeps only its first eighth.
        [Float](repeating: 2, count: 300).withUnsafeBufferPointer { ring.write($0, at: 0) }
        #expect(clip.samples.filter { $0 == 2 }.count == 100)
    }

    @Test("haptic-cal listen on a waveform device plays the band-passed audio itself: a 150 Hz tone in, 150 Hz out at the gain's full scale, the 3 kHz above the band left out, silence around it")
    func listenSignal() throws {
        let rate = Double(Self.rate)
        // 0.4 s of silence, 1 s of a 150 Hz tone at −20 dBFS with a 3 kHz one of the same level, 0.6 s of silence.
        let audio = (0..<Int(2 * rate)).map { index -> Float in
            let time = Double(index) / rate
            guard time >= 0.4 && time < 1.4 else { return 0 }
            return Float(0.1 * sin(2 * .pi * 150 * time) + 0.1 * sin(2 * .pi * 3_000 * time))
        }
        let home = try Self.captureHome(audio)
        let raw = home + "/coil.raw"
        try """
            {"format": 1, "name": "livecoil", "description": "A coil on a file PCM", "pcm": "file:FILE=\(raw),FORMAT=raw",
             "channels": 1, "rate_hz": 48000, "period_us": 2000, "periods": 3,
             "actuators": [{"name": "coil", "channel": 1, "actuator": "voice-coil", "resonant_frequency_hz": 150,
                            "frequency_min_hz": 75, "frequency_max_hz": 300}]}
            """.write(toFile: home + "/livecoil.json", atomically: true, encoding: .utf8)
        let run = try ChildProcess(
            [TestSupport.buildDirectory + "/haptic-cal", "listen", "alsa:livecoil", "--source", "livetest", "--seconds", "2.1",
             "--set", "alsa.devices=\(home)", "--set", "alsa.dualsense=off"],
            environment: ["HOME": home, "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory, "HAPTICS_DAEMON": "never", "XDG_CONFIG_HOME": home + "/config"],
            outputPath: home + "/listen.txt")
        #expect(try run.wait(timeout: 60) == .exited(0), "\(run.output)")
        #expect(run.output.contains("(the filtered signal, 12 ms behind)"), "\(run.output)")
        let coil = try #require(try Signal.channels(ofRawS16: raw, channels: 1).first)
        let span = try #require(Signal.extent(coil, threshold: 0.05), "the coil stayed silent: \(run.output)")
        #expect(abs(Double(span.count) / rate - 1) < 0.1, "sounded \(Double(span.count) / rate) s")
        let middle = coil[(span.lowerBound + 4_800)..<(span.upperBound - 4_800)]
        #expect(abs(Signal.peak(of: middle, in: 100...4_000, rate: rate) - 150) <= 2)
        let inBand = Signal.amplitude(of: middle, at: 150, rate: rate), above = Signal.amplitude(of: middle, at: 3_000, rate: rate)
        #expect(inBand > 0.5 && above < 0.05 * inBand, "150 Hz at \(inBand), 3 kHz at \(above)")
    }

    @Test("hapticsd Listen: the service captures and drives its device until StopListening, which reports; a file PCM as the source is refused and writes nothing; others cannot stop it; it ends when its client leaves")
    func serviceListen() throws {
        let home = try Self.captureHome(Self.hits(times: Self.hitTimes, levels: Self.hitLevels, duration: 3.5))
        let rig = try DaemonRig(devices: "lra", environment: ["HOME": home])
        let client = try TestBusClient(address: rig.address)
        // A PCM definition that writes a file is no source: refused before anything opens.
        let target = home + "/written.raw"
        #expect(throws: BusError.self) {
            try client.call("Listen", [.string("org.example.Live"), .string("recording:lra"), .string("file:FILE=\(target),FORMAT=raw"), .dictionary([])])
        }
        #expect(!FileManager.default.fileExists(atPath: target))
        do {
            _ = try client.call("Listen", [.string("org.example.Live"), .string("recording:lra"), .string("default"), .dictionary([("gate_db", .double(3))])])
            Issue.record("gate_db 3 was accepted")
        } catch { #expect(error.name.hasSuffix("InvalidValue") && error.message.contains("gate_db") && error.message.contains("3"), "\(error.name): \(error.message)") }
        do {
            _ = try client.call("Listen", [.string("org.example.Live"), .string("recording:lra"), .string("default"), .dictionary([("gate_db", .string("loud"))])])
            Issue.record("a string gate_db was accepted")
        } catch { #expect(error.name.hasSuffix("InvalidArgument") && error.message.contains("gate_db"), "\(error.name): \(error.message)") }
        let reply = try client.call("Listen", [.string("org.example.Live"), .string("recording:lra"), .string("default"), .dictionary([])])
        guard case .uint64(let id) = reply.first else { Issue.record("Listen answered \(reply)"); return }
        let other = try TestBusClient(address: rig.address)
        #expect(throws: BusError.self) { try other.call("StopListening", [.uint64(id)]) }
        // Two listeners a connection: a third is refused by name, and stopping one makes room.
        let second = try client.call("Listen", [.string("org.example.Live"), .string("recording:lra"), .string("default"), .dictionary([("intensity", .double(0))])])
        do {
            _ = try client.call("Listen", [.string("org.example.Live"), .string("recording:lra"), .string("default"), .dictionary([])])
            Issue.record("a third listener was accepted")
        } catch { #expect(error.name.hasSuffix("TooManyListeners"), "\(error.name): \(error.message)") }
        if case .uint64(let secondID) = second.first { _ = try client.call("StopListening", [.uint64(secondID)]) } else { Issue.record("Listen answered \(second)") }
        client.pump(for: 3.6)
        let report = try client.call("StopListening", [.uint64(id)])
        guard case .dictionary(let entries) = report.first else { Issue.record("StopListening answered \(report)"); return }
        let values = Dictionary(entries.map { ($0.key, $0.value.unwrapped) }, uniquingKeysWith: { first, _ in first })
        #expect(values["onsets"] == .uint64(6), "\(entries)")
        if case .double(let p50) = values["latency_p50_ms"] { #expect(p50 >= 5 && p50 < 20) } else { Issue.record("no latency: \(entries)") }
        let bursts = Self.bursts(try Recording(contentsOf: rig.recordingPath).frames(for: "recording:lra"))
        #expect(bursts.count == Self.hitTimes.count, "bursts at \(bursts); log:\n\(rig.daemonLog)")
        // A second listener, then its client leaves: the service stops it.
        var leaving: TestBusClient? = try TestBusClient(address: rig.address)
        _ = try leaving?.call("Listen", [.string("org.example.Live"), .string("recording:lra"), .string("default"), .dictionary([])])
        leaving = nil
        #expect(ChildProcess.waitUntil(timeout: 5) { rig.daemonLog.contains("stopped its 1 listener(s)") }, "\(rig.daemonLog)")
    }
}
