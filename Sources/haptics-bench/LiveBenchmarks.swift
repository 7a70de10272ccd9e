import Foundation
import Haptics
import HapticsAudioAnalysis

#if canImport(Glibc)
import Glibc
#endif

/// Live audio to haptics: latency from audio in to drive out through the alsa plugin's capture
/// (ABI 1.9) and the engine, on the `null` device (issue #29's goal: p50 ≤ 20 ms) and the recording
/// LRA, at three capture periods, side by side in one run. The capture is alsa-lib's `file` PCM
/// reading beats over `null`, which the backend paces at 48 kHz as a card would: what is measured
/// is this project's part (the period's wait, the analysis, the engine's pass), with no sound
/// card's buffer (`Scripts/test`'s VM suite measures one on `snd-aloop`).
enum LiveBenchmarks {
    static func run(quick: Bool) throws {
        let directory = NSTemporaryDirectory() + "haptics-bench-live-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let seconds = quick ? 2.0 : 10.0
        try writeBeats(seconds: seconds + 1, to: directory + "/beats.raw")
        try #"pcm.benchlive { type file slave.pcm null file "/dev/null" infile "\#(directory)/beats.raw" format "raw" }"#
            .write(toFile: directory + "/.asoundrc", atomically: true, encoding: .utf8)
        // alsa-lib reads ~/.asoundrc once, at the first PCM it opens: before the plugins load.
        setenv("HOME", directory, 1)
        let system = HapticSystem(configuration: .init(settings: ["recording.devices": "lra", "recording.output": directory + "/rec.jsonl", "alsa.dualsense": "off"], daemon: .never))
        print("live audio → haptics (\(Int(seconds)) s of beats, stereo 48 kHz, through the alsa plugin's capture of a paced file PCM; latency from a block's oldest sample to its drive leaving for the device)")
        print("device          period     blocks   updates   p50        p99        max        overruns")
        for deviceID in ["null:0", "recording:lra"] {
            for period in [120, 240, 480] {
                let device = try system.openDevice(deviceID)
                let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
                let capture = try system.openCapture("alsa:benchlive", periodFrames: period)
                let live = try LiveHaptics(capture: capture, engine: engine)
                let report = live.run(for: seconds)
                capture.close()
                engine.stop()
                device.close()
                func ms(_ value: Double?) -> String { value.map { String(format: "%.2f ms", $0 * 1000) } ?? "–" }
                print(
                    AudioBenchmarks.pad(deviceID, 16) + AudioBenchmarks.pad(String(format: "%.1f ms", Double(capture.format.periodFrames) / 48)  , 11) + AudioBenchmarks.pad("\(report.blocks)", 9)
                        + AudioBenchmarks.pad("\(report.updates)", 10) + AudioBenchmarks.pad(ms(report.latency(percentile: 0.5)), 11) + AudioBenchmarks.pad(ms(report.latency(percentile: 0.99)), 11)
                        + AudioBenchmarks.pad(ms(report.latency(percentile: 1)), 11) + "\(report.overruns)")
                if let failure = report.failure { print("  failed: \(failure)") }
            }
        }
        print("(a sound in a block is felt at most a period after it entered, plus the rest: the p50 less the period is the analysis and the engine's pass)")
    }

    /// Beats (a 55 Hz kick every 0.5 s with a noise hat between) as raw stereo S16.
    static func writeBeats(seconds: Double, to path: String) throws {
        let rate = 48_000.0
        var data = Data(capacity: Int(seconds * rate) * 4)
        var state: UInt32 = 1
        for index in 0..<Int(seconds * rate) {
            let time = Double(index) / rate
            let beat = time.truncatingRemainder(dividingBy: 0.5)
            var value = exp(-beat / 0.06) * sin(2 * .pi * 55 * beat) * 0.8
            let hat = (time + 0.25).truncatingRemainder(dividingBy: 0.5)
            state = state &* 1_664_525 &+ 1_013_904_223
            value += exp(-hat / 0.01) * (Double(state >> 8) / Double(1 << 24) * 2 - 1) * 0.2
            let sample = Int16(max(-32_767, min(32_767, (value * 32_767).rounded())))
            withUnsafeBytes(of: sample.littleEndian) { data.append(contentsOf: $0); data.append(contentsOf: $0) }
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
