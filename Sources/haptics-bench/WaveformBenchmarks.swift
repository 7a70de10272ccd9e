import Foundation
import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// The sample path's costs on this machine: rendering a block, and the CPU one playing stream
/// takes end to end (engine, synth, stream thread, alsa-lib) through alsa-lib's `null` PCM.
enum WaveformBenchmarks {
    static func run(quick: Bool) throws {
        print("haptics-bench waveform\(quick ? " (quick)" : "") — \(ProcessInfo.processInfo.activeProcessorCount) cores, pid \(getpid())\n")
        try renderCost(blocks: quick ? 2_000 : 20_000)
        try streamCPU(seconds: quick ? 2 : 10)
    }

    // MARK: - Render cost

    /// A DualSense's stream: 2 coils, 48 kHz, 240-frame (5 ms) blocks, the sharpness sweeping (a
    /// frequency change every block), beside a bare loop that only writes `sin` into the same buffer,
    /// and the same stream with a stereo 44.1 kHz clip (AHAP `AudioCustom`) mixed in, rate-converted.
    static func renderCost(blocks: Int) throws {
        let period = 240
        let coil = ChannelDescription(name: "coil", actuator: .voiceCoil, amplitudeSteps: 32_768, frequencyRange: 20...400, resonantFrequency: 150)
        var synth = WaveformSynth(rate: 48_000, channels: [coil, coil])
        var withClip = WaveformSynth(rate: 48_000, channels: [coil, coil])
        let clipSamples = (0..<88_200).map { Float(0.3 * sin(Double($0) * 0.01)) }
        let clip = try AudioClip(interleaved: clipSamples, channelCount: 2, sampleRate: 44_100)
        var clips = InlineClips.none
        clips.append(ClipVoice(clip: clip, start: .init(nanoseconds: 0), gain: 0.8, length: 3_600, loops: true), startFrame: 0)
        var buffer = [Float](repeating: 0, count: period * 2)
        var synthTimes: [Double] = [], bareTimes: [Double] = [], clipTimes: [Double] = []
        var phase = [0.0, 0.0]
        // Alternated block by block, so both see the same machine.
        for block in 0..<blocks {
            var drives = InlineDrives.silence
            drives.amplitude = SIMD4(0.8, 0.6, 0, 0)
            drives.frequency = SIMD4(Float(100 + block % 200), Float(300 - block % 200), 0, 0)
            let start = HapticInstant.monotonicNow()
            synth.schedule(at: synth.position + 17, drives: drives)
            buffer.withUnsafeMutableBufferPointer { synth.render(into: $0, frames: period) }
            let middle = HapticInstant.monotonicNow()
            buffer.withUnsafeMutableBufferPointer { samples in
                for channel in 0..<2 {
                    for frame in 0..<period {
                        samples[frame * 2 + channel] = Float(0.8 * sin(2 * Double.pi * phase[channel]))
                        phase[channel] += (channel == 0 ? 150.0 : 210.0) / 48_000
                        if phase[channel] >= 1 { phase[channel] -= 1 }
                    }
                }
            }
            let end = HapticInstant.monotonicNow()
            withClip.schedule(at: withClip.position + 17, drives: drives, clips: clips)
            buffer.withUnsafeMutableBufferPointer { withClip.render(into: $0, frames: period) }
            let last = HapticInstant.monotonicNow()
            synthTimes.append(Double(middle.nanoseconds(since: start)))
            bareTimes.append(Double(end.nanoseconds(since: middle)))
            clipTimes.append(Double(last.nanoseconds(since: end)))
        }
        let synthStats = Stats(synthTimes), bareStats = Stats(bareTimes), clipStats = Stats(clipTimes)
        let perSecond = synthStats.p50 * 48_000 / Double(period) / 1e9
        table(
            "Render cost per block (2 channels × 240 frames = 5 ms at 48 kHz; \(blocks) blocks, alternated)",
            ["measure", "p50", "p90", "per frame", "share of a core at 48 kHz"],
            [
                ["WaveformSynth.render (a change every block)", us(synthStats.p50), us(synthStats.p90), ns(synthStats.p50 / Double(period)), percent(perSecond)],
                ["bare sin() per sample, two channels", us(bareStats.p50), us(bareStats.p90), ns(bareStats.p50 / Double(period)), percent(bareStats.p50 * 200 / 1e9)],
                ["ratio", String(format: "%.2f×", synthStats.p50 / bareStats.p50), "", "", ""],
                [
                    "the same with a stereo 44.1 kHz clip mixed in", us(clipStats.p50), us(clipStats.p90), ns(clipStats.p50 / Double(period)),
                    percent(clipStats.p50 * 200 / 1e9),
                ],
                ["clip ÷ synth alone", String(format: "%.2f×", clipStats.p50 / synthStats.p50), "", "", ""],
            ])
    }

    // MARK: - One stream's CPU

    /// CPU time of this process while a DualSense-shaped device (4 channels, coils on 3–4, 48 kHz,
    /// 5 ms periods × 3) on alsa-lib's `null` PCM plays a continuous event, against the same time
    /// with the engine started and nothing playing.
    static func streamCPU(seconds: Double) throws {
        let directory = NSTemporaryDirectory() + "haptics-bench-waveform-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try """
            {"format": 1, "name": "bench", "pcm": "null", "channels": 4, "rate_hz": 48000, "period_us": 5000, "periods": 3,
             "actuators": [{"name": "left", "channel": 3}, {"name": "right", "channel": 4}]}
            """.write(toFile: directory + "/bench.json", atomically: true, encoding: .utf8)
        let system = HapticSystem(configuration: .init(settings: ["alsa.devices": directory, "alsa.dualsense": "off", "recording.devices": "none"], daemon: .never))
        let device = try system.openDevice("alsa:bench")
        defer { device.close() }
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        try engine.start()
        func cpu() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        var streamShare = 0.0
        func measure(_ body: () throws -> Void) rethrows -> Double {
            try body()
            usleep(200_000)
            let before = cpu(), start = HapticInstant.monotonicNow(), threadBefore = threadCPU("haptics-samples")
            usleep(UInt32(seconds * 1e6))
            let elapsed = HapticInstant.monotonicNow().seconds - start.seconds
            streamShare = (threadCPU("haptics-samples") - threadBefore) / 1e9 / elapsed
            return (cpu() - before) / elapsed
        }
        let idle = measure {}
        let pattern = try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: 0.8), .init(parameterID: .hapticSharpness, value: 0.5)],
                relativeTime: 0, duration: seconds + 1)
        ])
        let player = try engine.makePlayer(with: pattern)
        let playing = try measure { try player.start(atTime: 0) }
        try player.stop(atTime: 0)
        engine.stop()
        let underruns = (device.actuator as? PluginActuator)?.underruns ?? 0
        table(
            "One playing stream through alsa-lib's null PCM (4 channels, 48 kHz, 5 ms × 3; \(fixed(seconds, 0)) s each)",
            ["state", "CPU (share of one core)", "underruns", "target"],
            [
                ["engine started, nothing playing", percent(idle), "", ""],
                ["a continuous event playing", percent(playing), "\(underruns)", ""],
                ["the difference", percent(playing - idle), "", "≤ 1 %"],
                ["of which the stream thread (its schedstat)", percent(streamShare), "", ""],
            ])
    }

    /// CPU nanoseconds of this process's threads named `name` (`/proc/self/task/*/schedstat`).
    static func threadCPU(_ name: String) -> Double {
        var total = 0.0
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            guard comm == name, let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8) else { continue }
            total += Double(stat.split(separator: " ").first.flatMap { Double($0) } ?? 0)
        }
        return total
    }

    static func us(_ nanoseconds: Double) -> String { String(format: "%.1f µs", nanoseconds / 1e3) }
    static func ns(_ nanoseconds: Double) -> String { String(format: "%.1f ns", nanoseconds) }
    static func percent(_ share: Double) -> String { String(format: "%.2f %%", share * 100) }
    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}
