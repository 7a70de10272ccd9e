import ALSADevices
import Foundation
import Haptics
import Testing

/// `libhaptics-alsa.so` through `dlopen` and alsa-lib, on alsa-lib's `file` PCM (its `null` slave
/// takes any format; the backend paces it in real time): what the engine plays is read back from
/// the raw file, sample by sample.
@Suite("ALSA backend on a file PCM: patterns become samples on the actuator's channel, the rest silent", .serialized)
struct ALSAFilePCMTests {
    struct Rig {
        let directory: String
        let raw: String
        let system: HapticSystem
        let channels: Int
        let rate = 48_000.0
    }

    /// A device file for a 150 Hz coil on channel `channel` of a `channels`-channel file PCM.
    func rig(channels: Int = 2, channel: Int = 2, extra: String = "") throws -> Rig {
        let directory = TestSupport.makeTemporaryDirectory("alsa")
        let raw = directory + "/out.raw"
        let file = """
            {"format": 1, "name": "testcoil", "description": "A coil on a file PCM", "pcm": "file:FILE=\(raw),FORMAT=raw",
             "channels": \(channels), "rate_hz": 48000, "period_us": 2000, "periods": 3\(extra),
             "actuators": [{"name": "coil", "channel": \(channel), "actuator": "voice-coil", "resonant_frequency_hz": 150,
                            "frequency_min_hz": 75, "frequency_max_hz": 300}]}
            """
        try file.write(toFile: directory + "/testcoil.json", atomically: true, encoding: .utf8)
        let system = Self.system(devices: directory)
        return Rig(directory: directory, raw: raw, system: system, channels: channels)
    }

    /// A system whose alsa backend reads the device files in `directory` (no pad, no recording devices).
    static func system(devices directory: String) -> HapticSystem {
        HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                settings: ["alsa.devices": directory, "alsa.dualsense": "off", "recording.devices": "none"],
                logger: TestSupport.quietLogger, daemon: .never))
    }

    /// The raw file as floats per channel.
    func read(_ rig: Rig) throws -> [[Float]] { try Signal.channels(ofRawS16: rig.raw, channels: rig.channels) }

    /// Plays `pattern` on the rig's device through an engine on the system clock, for `seconds`.
    func play(_ pattern: HapticPattern, on rig: Rig, for seconds: Double, stopAfter: Double? = nil) throws {
        let device = try rig.system.openDevice("alsa:testcoil")
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        try engine.start()
        let player = try engine.makePlayer(with: pattern)
        try player.start(atTime: 0)
        if let stopAfter {
            usleep(UInt32(stopAfter * 1e6))
            try player.stop(atTime: 0)
            usleep(UInt32((seconds - stopAfter) * 1e6))
        } else {
            usleep(UInt32(seconds * 1e6))
        }
        engine.stop()
        device.close()
    }

    @Test("a stream that fails on its own (the file PCM's disk is full) is reported without waiting for the next frame")
    func streamFailureReported() throws {
        let directory = TestSupport.makeTemporaryDirectory("alsafull")
        try """
            {"format": 1, "name": "full", "pcm": "file:FILE=/dev/full,FORMAT=raw", "channels": 1, "rate_hz": 48000, "period_us": 2000, "periods": 3,
             "actuators": [{"name": "coil", "channel": 1}]}
            """.write(toFile: directory + "/full.json", atomically: true, encoding: .utf8)
        let system = Self.system(devices: directory)
        let device = try system.openDevice("alsa:full")
        defer { device.close() }
        try device.beginActivity()
        let failed = ChildProcess.waitUntil(timeout: 5) { device.lastError != nil }
        #expect(failed, "no failure reported")
        let text = "\(device.lastError.map { "\($0)" } ?? "")"
        #expect(text.contains("alsa:full") && text.contains("write"), "\(text)")
        #expect(!device.isLost, "a full disk is no unplugged device")
        print("file PCM on /dev/full: \(text)")
    }

    @Test("listing: the device file's coil, a sample stream of 48 kHz in 2 ms periods, three in the buffer; the card is not opened")
    func listing() throws {
        let rig = try rig()
        let device = try #require(rig.system.devices().first { $0.id == "alsa:testcoil" })
        #expect(device.sampleStream == SampleStreamFormat(rate: 48_000, periodFrames: 96, bufferFrames: 288, latency: 0))
        #expect(device.channels == [ChannelDescription(name: "coil", actuator: .voiceCoil, amplitudeSteps: 32_768, frequencyRange: 75...300, resonantFrequency: 150)])
        #expect(device.isAvailable)
        #expect(!FileManager.default.fileExists(atPath: rig.raw), "listing opened the PCM")
    }

    @Test("a continuous event: a sine at the sharpness's frequency on the coil's channel for its duration; the other channel silent")
    func continuous() throws {
        let rig = try rig()
        try play(try .continuous(duration: 0.3, intensity: 1, sharpness: 0.5), on: rig, for: 0.6)
        let channels = try read(rig)
        #expect(channels[0].allSatisfy { $0 == 0 }, "channel 1 carries no actuator")
        let coil = channels[1]
        let span = try #require(Signal.extent(coil))
        let seconds = Double(span.count) / rig.rate
        #expect(abs(seconds - 0.3) < 0.012, "sounded \(seconds) s")
        // Sharpness 0.5 in the uncalibrated band 112.5…225 Hz (0.75–1.5 × f₀): the geometric middle, 159.1 Hz.
        let middle = coil[(span.lowerBound + 2_400)..<(span.upperBound - 2_400)]
        #expect(abs(Signal.peak(of: middle, in: 100...240, rate: rig.rate) - 159) <= 1)
        let level = Signal.amplitude(of: middle, at: 112.5 * 2.0.squareRoot(), rate: rig.rate)
        #expect(abs(level - 1) < 0.02, "amplitude \(level): intensity 1 is the uncalibrated full scale")
        // After the end, silence: the device went idle once the tail was pushed out of the card's buffer.
        #expect(coil[(span.upperBound + 1)...].allSatisfy { $0 == 0 })
        #expect(coil.count - 1 - span.upperBound >= 288, "a buffer of silence pushed the tail out: \(coil.count - 1 - span.upperBound) frames")
    }

    /// The stream threads of this process (`haptics-samples`) and their voluntary context switches
    /// (`/proc/self/task/*/status`): each one is a wake-up after the thread blocked or slept.
    static func streamThreadSwitches() -> [Int: Int] {
        var switches: [Int: Int] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let id = Int(task),
                let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .whitespacesAndNewlines) == "haptics-samples",
                let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
            else { continue }
            switches[id] = count
        }
        return switches
    }

    @Test("the stream wakes once a period: it waits for room in the backend (ABI 1.5), then renders and writes without blocking")
    func oneWakeUpPerPeriod() throws {
        let rig = try rig()
        let before = Set(Self.streamThreadSwitches().keys)
        let device = try rig.system.openDevice("alsa:testcoil")
        defer { device.close() }
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        try engine.start()
        defer { engine.stop() }
        let player = try engine.makePlayer(with: try .continuous(duration: 3, intensity: 0.8, sharpness: 0.5))
        try player.start(atTime: 0)
        usleep(300_000)
        let started = Self.streamThreadSwitches().filter { !before.contains($0.key) }
        let (thread, first) = try #require(started.count == 1 ? started.first : nil, "one new stream thread, found \(started)")
        let since = HapticInstant.monotonicNow().seconds
        usleep(1_500_000)
        let switches = try #require(Self.streamThreadSwitches()[thread]) - first
        let periods = (HapticInstant.monotonicNow().seconds - since) / 0.002
        // Waiting for room, then a write that does not block: one wake-up a period (the pacing's
        // sleep, on this clockless PCM; a card refuses the wait). Rendering by the host's own clock
        // and letting the write wait out the rest took two.
        #expect(Double(switches) / periods < 1.3, "\(switches) wake-ups in \(Int(periods)) periods")
        #expect(Double(switches) / periods > 0.7, "\(switches) wake-ups in \(Int(periods)) periods: the stream is not paced")
        print("stream thread: \(switches) wake-ups in \(Int(periods)) periods of 2 ms")
    }

    @Test("a transient: a burst of whole cycles at its frequency rising from a zero crossing, as long as the tap")
    func transient() throws {
        let rig = try rig()
        try play(try .transient(intensity: 1, sharpness: 1), on: rig, for: 0.3)
        let coil = try read(rig)[1]
        let span = try #require(Signal.extent(coil, threshold: 0))
        #expect(coil[span.lowerBound] > 0, "rising")
        let milliseconds = Double(span.count) / rig.rate * 1e3
        #expect(milliseconds > 11 && milliseconds < 15, "the 12 ms tap and its 1 ms fade: \(milliseconds) ms")
        // Sharpness 1: the top of the band, 225 Hz; the burst holds about 2.7 cycles.
        let crossings = zip(coil[span].dropFirst(), coil[span]).filter { $0 >= 0 && $1 < 0 || $0 < 0 && $1 >= 0 }.count
        #expect((4...7).contains(crossings), "\(crossings) zero crossings: \(coil[span].map { ($0 * 100).rounded() / 100 })")
        #expect(coil[span].map { abs($0) }.max()! > 0.6)
    }

    @Test("stopping the player silences the coil within the stream's latency; the rest of the stream is silence")
    func stop() throws {
        let rig = try rig()
        try play(try .continuous(duration: 2, intensity: 1, sharpness: 0), on: rig, for: 0.5, stopAfter: 0.2)
        let coil = try read(rig)[1]
        let span = try #require(Signal.extent(coil))
        let seconds = Double(span.count) / rig.rate
        #expect(abs(seconds - 0.2) < 0.03, "sounded \(seconds) s for a stop after 0.2 s")
    }

    @Test("an actuator on a missing channel, and a PCM that does not exist, are clear errors naming the key or the fix")
    func badInput() throws {
        let wrong = try rig(channels: 2, channel: 3)
        let listed = try #require(wrong.system.devices().first { $0.id == "alsa:testcoil" })
        let reason = try #require(listed.unavailableReason)
        #expect(reason.contains("$.actuators[0].channel") && reason.contains("beyond the 2 channels"), "\(reason)")

        let directory = TestSupport.makeTemporaryDirectory("alsa-missing")
        try """
            {"format": 1, "name": "gone", "pcm": "hw:CARD=NoSuchCard,DEV=0", "channels": 2,
             "actuators": [{"name": "coil", "channel": 1}]}
            """.write(toFile: directory + "/gone.json", atomically: true, encoding: .utf8)
        let system = Self.system(devices: directory)
        #expect(system.devices().contains { $0.id == "alsa:gone" && $0.isAvailable }, "listing opens no card")
        do {
            _ = try system.openDevice("alsa:gone")
            Issue.record("a missing card opened")
        } catch {
            #expect("\(error)".contains("hw:CARD=NoSuchCard") && "\(error)".contains("aplay -l"), "\(error)")
        }
    }
}
