import Foundation
import Haptics
import HapticsTools
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The core's benchmarks, on this machine, against the recording backend.
enum CoreBenchmarks {
    static func run(quick: Bool) throws {
        print("haptics-bench core\(quick ? " (quick)" : "") — \(ProcessInfo.processInfo.activeProcessorCount) cores, pid \(getpid())\n")
        try pluginLoad(runs: quick ? 5 : 30)
        try triggerLatency(samples: quick ? 40 : 300)
        try onsetError(events: quick ? 50 : 400)
        try ahapThroughput(megabytes: quick ? 1 : 8)
        try idleEngine(seconds: quick ? 1 : 10)
    }

    // MARK: - Plugin discovery and load

    /// Run in a fresh process: discover and load every plugin once; print the nanoseconds taken.
    static func loadChild() throws {
        let start = HapticInstant.monotonicNow()
        let report = PluginLoader(searchPath: .standard(), settings: ["recording.devices": "lra"]).loadAll()
        let elapsed = HapticInstant.monotonicNow().nanoseconds(since: start)
        print("\(elapsed) \(report.backends.count) \(report.failures.count)")
    }

    static func pluginLoad(runs: Int) throws {
        var times: [Double] = []
        var backends = 0, failures = 0
        for _ in 0..<runs {
            let output = try runChild(["load-child"])
            let fields = output.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard fields.count == 3 else { throw BenchError("load-child printed '\(output)'") }
            times.append(Double(fields[0]) / 1e6)
            backends = fields[1]
            failures = fields[2]
        }
        let stats = Stats(times)
        table(
            "Plugin discovery and load (fresh process each run, \(runs) runs, \(backends) backends loaded, \(failures) refused)",
            ["measure", "p50", "p90", "max", "target"],
            [["discover + dlopen + fill, all plugins", ms(stats.p50), ms(stats.p90), ms(stats.max), "≤ 20 ms"]])
    }

    static func runChild(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("child \(arguments) exited with \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Trigger latency

    /// From `impactOccurred()` to the frame the recording backend received, alternating prepared
    /// and idle in rounds so both see the same machine state.
    static func triggerLatency(samples: Int) throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bench-trigger-\(getpid()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        var prepared: [Double] = [], idle: [Double] = []
        var preparedStarts: [HapticInstant] = [], idleStarts: [HapticInstant] = []
        let wakeLatency: Double
        do {
            let system = HapticSystem(configuration: .init(settings: ["recording.devices": "lra", "recording.output": output], daemon: .never))
            let device = try system.openDevice("recording:lra")
            wakeLatency = device.description.wakeLatency
            let engine = try HapticEngine(devices: [device], policy: HapticPolicy())
            let generator = ImpactFeedbackGenerator(style: .medium, engine: engine)
            // Warm up both paths.
            for _ in 0..<5 {
                generator.prepare()
                generator.impactOccurred()
                Thread.sleep(forTimeInterval: 0.04)
            }
            for round in 0..<(samples * 2) {
                let fromPrepared = round % 2 == 0
                if fromPrepared {
                    generator.prepare()
                    Thread.sleep(forTimeInterval: 0.005)
                }
                guard device.powerState == (fromPrepared ? .prepared : .idle) else {
                    throw BenchError("device was \(device.powerState) before a \(fromPrepared ? "prepared" : "idle") trigger")
                }
                let start = HapticInstant.monotonicNow()
                generator.impactOccurred()
                if fromPrepared { preparedStarts.append(start) } else { idleStarts.append(start) }
                // Let the tap end (12 ms) and the overuse guard's 30 ms pass.
                Thread.sleep(forTimeInterval: 0.035)
            }
            engine.stop()
            device.close()
        }
        let frames = try Recording(contentsOf: output).frames(for: "recording:lra")
            .filter { $0.frame.channels.contains { $0.amplitude > 0 } }.map(\.received)
        func latencies(_ starts: [HapticInstant]) -> [Double] {
            starts.compactMap { start in frames.first { $0 >= start }.map { Double($0.nanoseconds(since: start)) / 1e3 } }
        }
        prepared = latencies(preparedStarts)
        idle = latencies(idleStarts)
        guard prepared.count == preparedStarts.count, idle.count == idleStarts.count else {
            throw BenchError("\(preparedStarts.count + idleStarts.count) triggers but \(prepared.count + idle.count) frames matched")
        }
        let p = Stats(prepared), i = Stats(idle)
        table(
            "Trigger latency: impactOccurred() → frame received by the recording backend (\(samples) each, alternating; simulated wake \(us(wakeLatency * 1e6)))",
            ["from", "p50", "p99", "max", "target"],
            [
                ["prepared", us(p.p50), us(p.p99), us(p.max), "p99 ≤ 100 µs"],
                ["idle (wakes first)", us(i.p50), us(i.p99), us(i.max), ""],
                ["idle ÷ prepared (p50)", String(format: "%.1f×", i.p50 / p.p50), "", "", ""],
            ])
    }

    // MARK: - Onset error

    /// Scheduled taps against the time the recording backend received their frames, while another
    /// thread keeps the other core busy.
    static func onsetError(events: Int) throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bench-onset-\(getpid()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let busy = Atomic<Bool>(true)
        let spinner = Thread {
            var x: UInt64 = 1
            while busy.load(ordering: .relaxed) { x = x &* 6364136223846793005 &+ 1442695040888963407 }
            if x == 42 { print("") }
        }
        spinner.start()
        defer { busy.store(false, ordering: .relaxed) }
        let spacing = 0.02
        var scheduled: [HapticInstant] = []
        let realtime: Bool
        do {
            let system = HapticSystem(configuration: .init(settings: ["recording.devices": "lra", "recording.output": output], daemon: .never))
            let device = try system.openDevice("recording:lra")
            let clock = SystemClock(name: "bench-engine")
            let engine = try HapticEngine(devices: [device], clock: clock, policy: HapticPolicy())
            let taps = (0..<events).map { index in
                HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 1)], relativeTime: Double(index) * spacing)
            }
            let start = clock.now().advanced(bySeconds: 0.1)
            scheduled = (0..<events).map { start.advanced(bySeconds: Double($0) * spacing) }
            let player = try engine.makeAdvancedPlayer(with: HapticPattern(events: taps))
            let done = DispatchSemaphore(value: 0)
            player.completionHandler = { _ in done.signal() }
            try player.start(atTime: start.seconds)
            _ = done.wait(timeout: .now() + Double(events) * spacing + 5)
            realtime = clock.isRealtime
            engine.stop()
            device.close()
        }
        let frames = try Recording(contentsOf: output).frames(for: "recording:lra")
            .filter { $0.frame.channels.contains { $0.amplitude > 0 } }.map(\.received)
        let errors = scheduled.compactMap { onset in frames.first { $0 >= onset }.map { Double($0.nanoseconds(since: onset)) / 1e3 } }
        guard errors.count == events else { throw BenchError("\(events) taps scheduled, \(errors.count) received") }
        if Environment.debug {
            let worst = errors.enumerated().sorted { $0.element > $1.element }.prefix(5)
            print("worst onsets (index, µs): \(worst.map { "(\($0.offset), \(Int($0.element)))" }.joined(separator: " ")); frames \(frames.count)")
        }
        let stats = Stats(errors)
        table(
            "Onset error: scheduled tap → frame received, other core busy (\(events) taps \(Int(spacing * 1000)) ms apart; scheduler \(realtime ? "SCHED_FIFO" : "SCHED_OTHER"))",
            ["measure", "p50", "p99", "max", "target"],
            [["onset error", us(stats.p50), us(stats.p99), us(stats.max), "p99 ≤ 500 µs"]])
    }

    // MARK: - AHAP parse throughput

    static func ahapThroughput(megabytes: Int) throws {
        let text = largeAHAP(bytes: megabytes << 20)
        let bytes = Array(text.utf8)
        let data = Data(bytes)
        var ours: [Double] = [], foundation: [Double] = []
        var events = 0
        for _ in 0..<5 {
            let t0 = HapticInstant.monotonicNow()
            let pattern = try HapticPattern(ahapBytes: bytes)
            let t1 = HapticInstant.monotonicNow()
            _ = try JSONSerialization.jsonObject(with: data)
            let t2 = HapticInstant.monotonicNow()
            events = pattern.events.count
            ours.append(Double(bytes.count) / 1e6 / t1.seconds(since: t0))
            foundation.append(Double(bytes.count) / 1e6 / t2.seconds(since: t1))
        }
        let o = Stats(ours), f = Stats(foundation)
        table(
            "AHAP parse throughput (\(String(format: "%.1f", Double(bytes.count) / 1e6)) MB generated file, \(events) events; 5 runs)",
            ["parser", "median MB/s", "min MB/s", "note"],
            [
                ["HapticPattern(ahapBytes:) — parse + validate + model", String(format: "%.1f", o.p50), String(format: "%.1f", o.min), ""],
                ["JSONSerialization (JSON only, for scale)", String(format: "%.1f", f.p50), String(format: "%.1f", f.min), String(format: "ours ÷ Foundation %.2f×", o.p50 / f.p50)],
            ])
    }

    /// A realistic AHAP document of about `bytes` bytes: events, parameters and curves with float noise.
    static func largeAHAP(bytes: Int) -> String {
        var items: [String] = []
        var size = 0, index = 0
        while size < bytes {
            let time = Double(index) * 0.01
            let item: String
            switch index % 4 {
            case 0:
                item = #"{"Event":{"Time":\#(time),"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0.21999999999999886},{"ParameterID":"HapticSharpness","ParameterValue":0.7}]}}"#
            case 1:
                item = #"{"Event":{"Time":\#(time),"EventType":"HapticContinuous","EventDuration":0.25,"EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1},{"ParameterID":"HapticSharpness","ParameterValue":0.3},{"ParameterID":"AttackTime","ParameterValue":0.1}]}}"#
            case 2:
                item = #"{"Parameter":{"ParameterID":"HapticSharpnessControl","Time":\#(time),"ParameterValue":-0.3}}"#
            default:
                let points = (0..<12).map { #"{"Time":\#(Double($0) * 0.02),"ParameterValue":\#(Double($0) / 12)}"# }.joined(separator: ",")
                item = #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":\#(time),"ParameterCurveControlPoints":[\#(points)]}}"#
            }
            items.append(item)
            size += item.utf8.count + 2
            index += 1
        }
        return "{\"Version\":1.0,\"Metadata\":{\"Project\":\"bench\"},\"Pattern\":[\n" + items.joined(separator: ",\n") + "\n]}\n"
    }

    // MARK: - Idle engine

    static func idleEngine(seconds: Double) throws {
        let system = HapticSystem(configuration: .init(settings: ["recording.devices": "lra"], daemon: .never))
        let device = try system.openDevice("recording:lra")
        let clock = SystemClock(name: "bench-idle")
        let engine = try HapticEngine(devices: [device], clock: clock, policy: HapticPolicy())
        try engine.start()
        // Play once so the scheduler thread exists, then measure it idle.
        let player = try engine.makeAdvancedPlayer(with: HapticPattern(events: [HapticEvent(eventType: .hapticTransient, relativeTime: 0)]))
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: 0)
        _ = done.wait(timeout: .now() + 2)
        Thread.sleep(forTimeInterval: 0.1)
        let wakeUps = clock.wakeUps
        let cpu0 = processCPUSeconds()
        Thread.sleep(forTimeInterval: seconds)
        let cpu = processCPUSeconds() - cpu0
        table(
            "Idle engine over \(seconds) s (engine started, nothing playing, auto-shutdown armed)",
            ["measure", "value", "target"],
            [
                ["scheduler wake-ups", "\(clock.wakeUps - wakeUps)", "0"],
                ["process CPU time", String(format: "%.3f ms", cpu * 1000), "≈ 0"],
            ])
        engine.stop()
    }

    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}

// MARK: - Table and statistics

enum Environment {
    static let debug = ProcessInfo.processInfo.environment["HAPTICS_BENCH_DEBUG"] != nil
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

struct Stats {
    let sorted: [Double]
    init(_ values: [Double]) { sorted = values.sorted() }
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
        return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
    }
    var p50: Double { percentile(50) }
    var p90: Double { percentile(90) }
    var p99: Double { percentile(99) }
    var min: Double { sorted.first ?? .nan }
    var max: Double { sorted.last ?? .nan }
}

func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }
func us(_ value: Double) -> String { value >= 1000 ? String(format: "%.2f ms", value / 1000) : String(format: "%.1f µs", value) }

/// Prints a Markdown table.
func table(_ title: String, _ header: [String], _ rows: [[String]]) {
    let widths = header.indices.map { column in ([header[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0 }
    func line(_ cells: [String]) -> String {
        "| " + cells.enumerated().map { $1 + String(repeating: " ", count: widths[$0] - $1.count) }.joined(separator: " | ") + " |"
    }
    print("### \(title)\n")
    print(line(header))
    print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
    for row in rows { print(line(row)) }
    print("")
}
