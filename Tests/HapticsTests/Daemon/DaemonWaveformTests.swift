import Foundation
import Haptics
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// hapticsd serves a waveform device (`libhaptics-alsa.so` on alsa-lib's `file` PCM) like any
/// other: a client describes it as an in-process host does, its sample stream included, and plays
/// on it with the same API; the service renders the samples, read back from the raw file.
@Suite("hapticsd: a waveform device served like any other")
struct DaemonWaveformTests {
    @Test("a client lists an alsa coil as an in-process host does, sample stream included, and plays on it: the service writes the sine")
    func coilThroughService() throws {
        let devices = TestSupport.makeTemporaryDirectory("alsad")
        let raw = devices + "/out.raw"
        let (rig, client) = try Self.coilService(devices, raw: raw, extra: ", \"latency_us\": 1500")
        let served = try #require(client.devices().first { $0.id == "alsa:testcoil" }, "\(client.devices().map(\.id)); \(rig.daemonLog)")
        // The same description as this process's own alsa backend gives (listing opens no PCM).
        let own = try #require(ALSAFilePCMTests.system(devices: devices).devices().first { $0.id == "alsa:testcoil" })
        #expect(served == own, "through hapticsd: \(served)\nin-process: \(own)")
        #expect(served.sampleStream == SampleStreamFormat(rate: 48_000, periodFrames: 96, bufferFrames: 288, latency: 0.0015))
        // A frame device's envelope crosses too.
        let lra = try #require(client.devices().first { $0.id == "recording:lra" })
        let ownLRA = try #require(
            HapticSystem(
                configuration: .init(
                    searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                    settings: ["recording.devices": "lra", "recording.output": devices + "/own.jsonl", "alsa.dualsense": "off"],
                    logger: TestSupport.quietLogger, daemon: .never)
            ).devices().first { $0.id == "recording:lra" })
        #expect(lra == ownLRA, "through hapticsd: \(lra)\nin-process: \(ownLRA)")

        let list = try rig.run([TestSupport.buildDirectory + "/haptic-cal", "list"])
        #expect(list.output.contains("samples 48 kHz, 2.0 ms periods × 3"), "\(list.output)")

        let device = try client.openDevice("alsa:testcoil")
        let engine = try HapticEngine(devices: [device], profileStore: nil, logger: TestSupport.quietLogger)
        let player = try engine.makePlayer(with: try .continuous(duration: 0.3, intensity: 1, sharpness: 0.5))
        try player.start(atTime: 0)
        // The service plays it out, then sleeps the device once a buffer of silence has pushed the tail out.
        let (done, coil) = Self.playedOut(raw)
        engine.stop()
        device.close()
        #expect(done, "the service wrote \(coil.count) frames; its log:\n\(rig.daemonLog)")
        let span = try #require(Signal.extent(coil))
        #expect(abs(Double(span.count) / 48_000 - 0.3) < 0.012, "sounded \(Double(span.count) / 48_000) s")
        // Sharpness 0.5 in the uncalibrated band 112.5…225 Hz: 159.1 Hz, at full scale.
        let middle = coil[(span.lowerBound + 2_400)..<(span.upperBound - 2_400)]
        #expect(abs(Signal.peak(of: middle, in: 100...240, rate: 48_000) - 159) <= 1)
        #expect(abs(Signal.amplitude(of: middle, at: 112.5 * 2.0.squareRoot(), rate: 48_000) - 1) < 0.02)
    }

    /// A service with an alsa file-PCM coil (mono) writing to `raw`, its device file in `directory`
    /// with `extra` keys, and a client library on it.
    static func coilService(_ directory: String, raw: String, extra: String = "") throws -> (DaemonRig, HapticSystem) {
        try """
            {"format": 1, "name": "testcoil", "description": "A coil on a file PCM", "pcm": "file:FILE=\(raw),FORMAT=raw",
             "channels": 1, "rate_hz": 48000, "period_us": 2000, "periods": 3\(extra),
             "actuators": [{"name": "coil", "channel": 1, "actuator": "voice-coil", "resonant_frequency_hz": 150,
                            "frequency_min_hz": 75, "frequency_max_hz": 300}]}
            """.write(toFile: directory + "/testcoil.json", atomically: true, encoding: .utf8)
        let rig = try DaemonRig(arguments: ["--set", "alsa.devices=\(directory)", "--set", "alsa.dualsense=off"])
        let client = HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), settings: ["daemon.bus": rig.address],
                logger: TestSupport.quietLogger, daemon: .required))
        return (rig, client)
    }

    /// Waits until the mono coil file `raw` holds a sound after frame `after` followed by a buffer
    /// of silence (the service played it out and slept the device); whether it did, and the samples.
    static func playedOut(_ raw: String, after: Int = 0) -> (Bool, [Float]) {
        var coil: [Float] = []
        let done = ChildProcess.waitUntil(timeout: 10) {
            coil = (try? Signal.channels(ofRawS16: raw, channels: 1))?.first ?? []
            guard coil.count > after, let span = Signal.extent(Array(coil[after...])) else { return false }
            return coil.count - after - 1 - span.upperBound >= 288
        }
        return (done, coil)
    }

    /// `GetStatistics`' value for `key`.
    static func statistic(_ key: String, of client: TestBusClient) throws -> BusValue? {
        try client.call("GetStatistics").first?.entries.first { $0.key == key }?.value.unwrapped
    }

    @Test("a client's clip plays on the service's coil; another client's pattern cannot name it; it goes when its client leaves")
    func clipThroughService() throws {
        let directory = TestSupport.makeTemporaryDirectory("alsad-clip")
        let raw = directory + "/out.raw"
        let (rig, client) = try Self.coilService(directory, raw: raw)
        let observer = try TestBusClient(address: rig.address)
        let device = try client.openDevice("alsa:testcoil")
        let engine = try HapticEngine(devices: [device], profileStore: nil, logger: TestSupport.quietLogger)
        let tone = (0..<4_800).map { Float(0.5 * sin(2 * Double.pi * 200 * Double($0) / 48_000)) }
        let id = try engine.registerAudioResource(try AudioClip(interleaved: tone, channelCount: 1, sampleRate: 48_000), named: "Sounds/tone.wav")
        #expect(try Self.statistic("audio-clips", of: observer) == .uint32(1))
        #expect(try Self.statistic("audio-bytes", of: observer) == .uint64(4_800 * 4))
        let pattern = try HapticPattern(events: [HapticEvent(eventType: .audioCustom, relativeTime: 0, waveformPath: "Sounds/tone.wav")])
        let player = try engine.makePlayer(with: pattern)
        try player.start(atTime: 0)
        var (done, coil) = Self.playedOut(raw)
        #expect(done, "the service wrote \(coil.count) frames; its log:\n\(rig.daemonLog)")
        let span = try #require(Signal.extent(coil, threshold: 0.02))
        #expect(abs(Double(span.count) / 48_000 - 0.1) < 0.003, "sounded \(Double(span.count) / 48_000) s")
        #expect(Signal.peak(of: coil[span], in: 100...300, rate: 48_000) == 200)
        #expect(abs(Signal.amplitude(of: coil[span], at: 200, rate: 48_000) - 0.5) < 0.01)

        // Another connection's pattern names the same path: it has no such clip, so nothing sounds.
        let written = coil.count
        let ahap = pattern.ahapText(pretty: false)
        _ = try observer.call("PlayPattern", [.string("org.example.Other"), .string("alsa:testcoil"), .string(ahap), .double(1), .dictionary([])])
        observer.pump(for: 0.5)
        let after = (try Signal.channels(ofRawS16: raw, channels: 1)).first ?? []
        #expect(after.count == written || after[written...].allSatisfy { $0 == 0 }, "another client's pattern played the clip")

        try engine.unregisterAudioResource(id)
        #expect(try Self.statistic("audio-clips", of: observer) == .uint32(0))
        #expect(throws: HapticEngineError.self) { try engine.unregisterAudioResource(id) }
        engine.stop()
        device.close()

        // haptic-cal, a client of its own: decodes the AHAP file's clip, plays it through the
        // service, and leaves; the service drops its clip with it.
        let sounds = TestSupport.makeTemporaryDirectory("alsad-ahap")
        try WAVFile.write(tone.map { Int16($0 * 32_767) }, channels: 1, rate: 48_000, to: sounds + "/tone.wav")
        try pattern.ahapText(pretty: true).replacingOccurrences(of: "Sounds/tone.wav", with: "tone.wav").write(toFile: sounds + "/tone.ahap", atomically: false, encoding: .utf8)
        let played = try rig.run([TestSupport.buildDirectory + "/haptic-cal", "play", "alsa:testcoil", sounds + "/tone.ahap", "--plugin-path", TestSupport.buildDirectory])
        #expect(played.status == 0 && played.output.contains("playing through hapticsd"), "\(played.output)")
        #expect(played.output.contains("clips: 1 file decoded for 1 AudioCustom event") && !played.output.contains("note:"), "\(played.output)")
        let second: Bool
        (second, coil) = Self.playedOut(raw, after: written)
        #expect(second, "haptic-cal's clip did not reach the coil; the service's log:\n\(rig.daemonLog)")
        let tail = Array(coil[written...])
        let sounded = try #require(Signal.extent(tail, threshold: 0.02))
        #expect(abs(Double(sounded.count) / 48_000 - 0.1) < 0.003 && Signal.peak(of: tail[sounded], in: 100...300, rate: 48_000) == 200)
        let dropped = ChildProcess.waitUntil(timeout: 5) { (try? Self.statistic("audio-bytes", of: observer)) == .uint64(0) }
        #expect(dropped, "the departed client's clip is still held")
    }

    @Test("RegisterAudio from a hostile client: bad channels, rate, bytes and samples are InvalidArgument naming the argument; budgets are OverBudget; ids are the caller's")
    func clipBounds() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        let other = try TestBusClient(address: rig.address)
        /// RegisterAudio with raw sample bytes (sent as they are: no per-byte value).
        func register(_ bytes: [UInt8], rate: UInt32 = 48_000, channels: UInt32 = 1, name: String = "a.wav", on connection: TestBusClient? = nil) throws(BusError) -> UInt64 {
            let reply = try (connection ?? client).bus.call(
                destination: "org.swifthaptics.Haptics1", path: "/org/swifthaptics/Haptics1", interface: "org.swifthaptics.Haptics1", member: "RegisterAudio",
                timeout: 30
            ) { writer throws(BusError) in
                try writer.string("org.example.Clips")
                try writer.string(name)
                try writer.uint32(rate)
                try writer.uint32(channels)
                var failure: BusError?
                bytes.withUnsafeBytes { raw in
                    do throws(BusError) { try writer.bytes(raw) } catch { failure = error }
                }
                if let failure { throw failure }
            }
            return try reply.reader.uint64()
        }
        func floats(_ values: [Float]) -> [UInt8] { values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } } }
        func refusal(_ body: () throws(BusError) -> UInt64) -> BusError? {
            do {
                _ = try body()
                return nil
            } catch { return error }
        }
        let cases: [(BusError?, String, String)] = [
            (refusal { () throws(BusError) in try register(floats([0, 0, 0]), channels: 3) }, "InvalidArgument", "3 channels"),
            (refusal { () throws(BusError) in try register(floats([0]), rate: 0) }, "InvalidArgument", "0 Hz is outside 1000…384000 Hz"),
            (refusal { () throws(BusError) in try register([0, 0, 0, 0, 0, 0, 0], channels: 1) }, "InvalidArgument", "7 bytes are not whole frames"),
            (refusal { () throws(BusError) in try register(floats([0, 0, 0, 0]), channels: 2, name: "") }, "InvalidArgument", "1…4096 bytes"),
            (refusal { () throws(BusError) in try register(floats([0, .nan])) }, "InvalidArgument", "frame 1 is not a finite number"),
            (refusal { () throws(BusError) in try register([]) }, "InvalidArgument", "no audio"),
            (refusal { () throws(BusError) in try register(floats([Float](repeating: 0, count: 61_000)), rate: 1_000) }, "InvalidArgument", "at most 60 s"),
        ]
        for (error, name, message) in cases {
            #expect(error?.name.hasSuffix(name) == true && error?.message.contains(message) == true, "expected \(name) saying '\(message)': \(String(describing: error))")
        }

        // 11.5 MB each (60 s of mono at 48 kHz): two fit in a connection's 32 MiB, the third does not.
        let minute = floats([Float](repeating: 0.25, count: 2_880_000))
        let first = try register(minute, name: "one.wav")
        Thread.sleep(forTimeInterval: 1.6)  // its bytes charged the connection's 8 MiB/s byte rate
        let second = try register(minute, name: "two.wav")
        Thread.sleep(forTimeInterval: 1.6)
        let third = refusal { () throws(BusError) in try register(minute, name: "three.wav") }
        #expect(third?.name.hasSuffix("OverBudget") == true && third?.message.contains("at most 33554432 are held per client") == true, "\(String(describing: third))")
        // The same name again replaces: no more held.
        Thread.sleep(forTimeInterval: 1.6)
        _ = try register(minute, name: "two.wav")
        #expect(try Self.statistic("audio-clips", of: other) == .uint32(2))
        #expect(try Self.statistic("audio-bytes", of: other) == .uint64(2 * 11_520_000))

        // Ids are the caller's own.
        let foreign = refusal { () throws(BusError) in try other.call("UnregisterAudio", [.uint64(first)]); return 0 }
        #expect(foreign?.name.hasSuffix("UnknownAudio") == true, "\(String(describing: foreign))")
        _ = try client.call("UnregisterAudio", [.uint64(first)])
        let again = refusal { () throws(BusError) in try client.call("UnregisterAudio", [.uint64(first)]); return 0 }
        #expect(again?.name.hasSuffix("UnknownAudio") == true, "\(String(describing: again))")
        _ = second
        #expect(try Self.statistic("audio-clips", of: other) == .uint32(1))
    }
}
