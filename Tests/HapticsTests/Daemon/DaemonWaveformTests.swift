import Foundation
import Haptics
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
        try """
            {"format": 1, "name": "testcoil", "description": "A coil on a file PCM", "pcm": "file:FILE=\(raw),FORMAT=raw",
             "channels": 1, "rate_hz": 48000, "period_us": 2000, "periods": 3, "latency_us": 1500,
             "actuators": [{"name": "coil", "channel": 1, "actuator": "voice-coil", "resonant_frequency_hz": 150,
                            "frequency_min_hz": 75, "frequency_max_hz": 300}]}
            """.write(toFile: devices + "/testcoil.json", atomically: true, encoding: .utf8)
        let rig = try DaemonRig(arguments: ["--set", "alsa.devices=\(devices)", "--set", "alsa.dualsense=off"])
        let client = HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), settings: ["daemon.bus": rig.address],
                logger: TestSupport.quietLogger, daemon: .required))
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
        var coil: [Float] = []
        let done = ChildProcess.waitUntil(timeout: 10) {
            coil = (try? Signal.channels(ofRawS16: raw, channels: 1))?.first ?? []
            guard let span = Signal.extent(coil) else { return false }
            return coil.count - 1 - span.upperBound >= 288
        }
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
}
