import Foundation
import Haptics
import HapticsTools
import HapticsBus
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// hapticsd's benchmarks, on a private dbus-daemon (never the developer's session bus) with the
/// recording backend: a call's way to the frame through the service beside the in-process path,
/// how fast a killed client's pattern stops, and 50 clients triggering at 100 Hz each.
enum DaemonBenchmarks {
    static func run(quick: Bool) throws {
        print("haptics-bench hapticsd\(quick ? " (quick)" : "") — \(ProcessInfo.processInfo.activeProcessorCount) cores, pid \(getpid())\n")
        let bus = try PrivateBus()
        try latency(bus, samples: quick ? 40 : 300)
        try killToStop(bus, runs: quick ? 5 : 20)
        try load(bus, clients: 50, rate: 100, seconds: quick ? 5 : 30)
    }

    // MARK: - Call → frame

    /// The same impact, alternating three ways: in this process, through hapticsd from the Swift
    /// library (unchanged code: ImpactFeedbackGenerator), and a bare sd-bus PlayEffect call.
    static func latency(_ bus: PrivateBus, samples: Int) throws {
        let served = bus.directory + "/latency-daemon.jsonl", own = bus.directory + "/latency-own.jsonl"
        let daemon = try bus.startDaemon(devices: "lra", output: served)
        var starts: [String: [HapticInstant]] = ["in-process": [], "library": [], "bare": []]
        do {
            let local = HapticSystem(configuration: .init(
                settings: ["recording.devices": "lra", "recording.output": own, "recording.simulate-wake": "0"], daemon: .never))
            let localEngine = try HapticEngine(devices: [try local.openDevice("recording:lra")], profileStore: nil, policy: HapticPolicy())
            let remote = HapticSystem(configuration: .init(settings: ["daemon.bus": bus.address, "daemon.app-id": "org.swifthaptics.bench.Library"], daemon: .required))
            guard case .daemon = remote.mode else { throw BenchError("the library did not reach hapticsd: \(remote.mode)") }
            let remoteEngine = try HapticEngine(devices: [try remote.openDevice("recording:lra")], profileStore: nil, policy: HapticPolicy())
            let generators = ["in-process": ImpactFeedbackGenerator(style: .medium, engine: localEngine), "library": ImpactFeedbackGenerator(style: .medium, engine: remoteEngine)]
            let bare = try BusConnection(.address(bus.address))
            func bareCall(_ member: String, _ arguments: [BusValue]) throws {
                _ = try bare.call(destination: HapticsServiceName.bus, path: HapticsServiceName.objectPath, interface: HapticsServiceName.interface, member: member) {
                    writer throws(BusError) in for argument in arguments { try writer.append(argument) }
                }
                while try bare.process() {}
            }
            let app = BusValue.string("org.swifthaptics.bench.Bare")
            for round in 0..<(samples * 3 + 15) {
                let way = ["in-process", "library", "bare"][round % 3]
                if way == "bare" { try bareCall("Prepare", [app, .string("recording:lra")]) } else { generators[way]!.prepare() }
                Thread.sleep(forTimeInterval: 0.005)
                let start = HapticInstant.monotonicNow()
                if way == "bare" {
                    try bareCall("PlayEffect", [app, .string("recording:lra"), .string("impact.medium"), .double(1)])
                } else {
                    generators[way]!.impactOccurred()
                }
                if round >= 15 { starts[way]!.append(start) }  // the first rounds warm up
                Thread.sleep(forTimeInterval: 0.04)
            }
            localEngine.stop()
        }
        try bus.stop(daemon)
        func latencies(_ starts: [HapticInstant], in path: String) throws -> [Double] {
            let frames = try Recording(contentsOf: path).frames(for: "recording:lra").filter { $0.frame.channels.contains { $0.amplitude > 0 } }.map(\.received)
            let matched = starts.compactMap { start in frames.first { $0 >= start }.map { Double($0.nanoseconds(since: start)) / 1e3 } }
            guard matched.count == starts.count else { throw BenchError("\(starts.count) triggers, \(matched.count) frames matched in \(path)") }
            return matched
        }
        let local = Stats(try latencies(starts["in-process"]!, in: own))
        let library = Stats(try latencies(starts["library"]!, in: served))
        let bare = Stats(try latencies(starts["bare"]!, in: served))
        table(
            "Call → frame received by the recording backend (\(samples) each, alternating, device prepared, no simulated wake)",
            ["path", "p50", "p99", "max", "bus adds (p50)", "goal"],
            [
                ["in-process: ImpactFeedbackGenerator.impactOccurred()", us(local.p50), us(local.p99), us(local.max), "", ""],
                ["through hapticsd: the same code, the library in daemon mode", us(library.p50), us(library.p99), us(library.max), us(library.p50 - local.p50), "≤ 300 µs"],
                ["through hapticsd: a bare sd-bus PlayEffect call", us(bare.p50), us(bare.p99), us(bare.max), us(bare.p50 - local.p50), "≤ 300 µs"],
            ])
    }

    // MARK: - A killed client

    /// A client plays a looping ramp and is SIGKILLed: from the kill to the silence frame.
    static func killToStop(_ bus: PrivateBus, runs: Int) throws {
        let output = bus.directory + "/kill.jsonl"
        let daemon = try bus.startDaemon(devices: "lra", output: output)
        var kills: [HapticInstant] = []
        for _ in 0..<runs {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
            child.arguments = ["hold-pattern", bus.address]
            let pipe = Pipe()
            child.standardOutput = pipe
            try child.run()
            let line = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
            guard line.hasPrefix("playing") else { throw BenchError("the client said '\(line)'") }
            Thread.sleep(forTimeInterval: 0.2)
            kills.append(.monotonicNow())
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            Thread.sleep(forTimeInterval: 0.1)
        }
        try bus.stop(daemon)
        let frames = try Recording(contentsOf: output).frames(for: "recording:lra")
        var fromKill: [Double] = [], extra: [Int] = []
        for killed in kills {
            let after = frames.filter { $0.received >= killed }
            guard let silence = after.first(where: { !$0.frame.channels.contains { $0.amplitude > 0 } }) else { throw BenchError("no silence after a kill") }
            fromKill.append(Double(silence.received.nanoseconds(since: killed)) / 1e3)
            extra.append(after.prefix { $0.frame.channels.contains { $0.amplitude > 0 } }.count)
        }
        let kill = Stats(fromKill), extraFrames = Stats(extra.map(Double.init))
        table(
            "A client SIGKILLed mid-pattern: a looping ramp on the 175 Hz LRA (a frame every 4 ms, at most one per 1 ms); \(runs) runs",
            ["measure", "p50", "p99", "max", "goal"],
            [
                ["kill → silence frame (the kernel closes the client's socket, dbus-daemon says so, hapticsd stops)", us(kill.p50), us(kill.p99), us(kill.max), "≤ 4 ms (one frame interval)"],
                ["driven frames received after the kill", String(format: "%.0f", extraFrames.p50), String(format: "%.0f", extraFrames.p99), String(format: "%.0f", extraFrames.max), "≤ 1"],
            ])
    }

    /// `haptics-bench hold-pattern ADDRESS`: a client that loops a ramp until it is killed.
    static func holdPattern(address: String) throws {
        let bus = try BusConnection(.address(address))
        let ramp = try HapticPattern(
            events: [HapticEvent(eventType: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 1)], relativeTime: 0, duration: 1)],
            parameterCurves: [HapticParameterCurve(parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: 0.2), .init(relativeTime: 1, value: 1)])])
        _ = try bus.call(destination: HapticsServiceName.bus, path: HapticsServiceName.objectPath, interface: HapticsServiceName.interface, member: "PlayPattern") {
            writer throws(BusError) in
            try writer.string("org.swifthaptics.bench.Killed")
            try writer.string("recording:lra")
            try writer.string(ramp.ahapText(pretty: false))
            try writer.double(1)
            try writer.dictionary([("loop", .bool(true))])
        }
        FileHandle.standardOutput.write(Data("playing \(bus.uniqueName)\n".utf8))
        while true { pause() }
    }

    // MARK: - Load

    /// `clients` connections, each its own app, triggering `rate` effects a second for `seconds`.
    static func load(_ bus: PrivateBus, clients: Int, rate: Int, seconds: Double) throws {
        let daemon = try bus.startDaemon(devices: "lra,erm,gamepad", output: nil)
        let devices = ["recording:lra", "recording:erm", "recording:gamepad"]
        let effects = ["selection", "impact.light", "android.lightTick", "impact.medium"]
        struct Tally: Sendable {
            var latencies: [Double] = []
            var dispositions: [String: Int] = [:]
            var refused: [String: Int] = [:]
            var skipped = 0
        }
        let tallies = Mutex<[Tally]>([])
        let ready = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let period = 1.0 / Double(rate)
        let address = bus.address
        var threads: [Thread] = []
        for index in 0..<clients {
            ready.enter()
            let thread = Thread {
                var tally = Tally()
                defer { tallies.withLock { $0.append(tally) } }
                guard let connection = try? BusConnection(.address(address)) else {
                    ready.leave()
                    return
                }
                let app = "org.swifthaptics.bench.Load\(index)", device = devices[index % devices.count], effect = effects[index % effects.count]
                ready.leave()
                go.wait()
                let start = Monotonic.now()
                let end = start + UInt64(seconds * 1e9)
                var slot: UInt64 = 0
                while true {
                    let deadline = start + UInt64(Double(slot) * period * 1e9)
                    guard deadline < end else { break }
                    Monotonic.sleep(until: deadline)
                    let sent = Monotonic.now()
                    do {
                        let reply = try connection.call(
                            destination: HapticsServiceName.bus, path: HapticsServiceName.objectPath, interface: HapticsServiceName.interface, member: "PlayEffect"
                        ) { writer throws(BusError) in
                            try writer.string(app)
                            try writer.string(device)
                            try writer.string(effect)
                            try writer.double(1)
                        }
                        let reader = reply.reader
                        _ = try reader.objectPath()
                        tally.dispositions[try reader.string(), default: 0] += 1
                    } catch let failure as BusError {
                        tally.refused[failure.name.split(separator: ".").last.map(String.init) ?? failure.name, default: 0] += 1
                    } catch {
                        tally.refused["\(error)", default: 0] += 1
                    }
                    tally.latencies.append(Double(Monotonic.now() - sent) / 1e3)
                    // The Ended signals of this client's plays: read and dropped.
                    while (try? connection.process()) == true {}
                    slot += 1
                    let now = Monotonic.now()
                    let due = start + UInt64(Double(slot) * period * 1e9)
                    if now > due + UInt64(period * 1e9) {
                        let caughtUp = UInt64(Double(now - start) / (period * 1e9)) + 1
                        tally.skipped += Int(caughtUp - slot)
                        slot = caughtUp
                    }
                }
            }
            thread.stackSize = 1 << 20
            threads.append(thread)
            thread.start()
        }
        ready.wait()
        let sampler = ProcessSampler(pid: daemon.processIdentifier)
        let begin = HapticInstant.monotonicNow()
        for _ in 0..<clients { go.signal() }
        var samples: [(time: Double, cpu: Double, rss: Int)] = []
        while HapticInstant.monotonicNow().seconds(since: begin) < seconds + 0.5 {
            Thread.sleep(forTimeInterval: 1)
            samples.append((HapticInstant.monotonicNow().seconds(since: begin), sampler.cpuSeconds(), sampler.residentKilobytes()))
        }
        while tallies.withLock({ $0.count }) < clients { Thread.sleep(forTimeInterval: 0.05) }
        let statistics = try bus.statistics()
        try bus.stop(daemon)

        let all = tallies.withLock { $0 }
        let latency = Stats(all.flatMap(\.latencies))
        var dispositions: [String: Int] = [:], refused: [String: Int] = [:]
        for tally in all {
            dispositions.merge(tally.dispositions, uniquingKeysWith: +)
            refused.merge(tally.refused, uniquingKeysWith: +)
        }
        let sent = dispositions.values.reduce(0, +) + refused.values.reduce(0, +)
        let skipped = all.map(\.skipped).reduce(0, +)
        func count(_ key: String) -> Int { Int(statistics[key]?.doubleValue ?? -1) }
        let refusedText = refused.isEmpty ? "0" : refused.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        table(
            "Load: \(clients) clients × \(rate) PlayEffect/s for \(Int(seconds)) s (each its own app, 3 devices, 4 effect kinds)",
            ["measure", "client side", "hapticsd's GetStatistics"],
            [
                ["calls sent / answered", "\(sent) (\(String(format: "%.0f", Double(sent) / seconds))/s; \(skipped) slots missed by late clients)", "\(count("calls"))"],
                ["played at once", "\(dispositions["played"] ?? 0)", "\(count("played"))"],
                ["deferred by the overuse guard (each plays later)", "\(dispositions["deferred"] ?? 0)", "\(count("deferred"))"],
                ["coalesced into a deferred play", "\(dispositions["coalesced"] ?? 0)", "\(count("coalesced"))"],
                ["refused (with the reason)", refusedText, "\(count("refused"))"],
                ["unaccounted", "\(sent - count("calls"))", sent == count("calls") && count("played") + count("deferred") + count("coalesced") + count("refused") == count("calls") ? "0: every call accounted for" : "MISMATCH"],
                ["call round trip p50 / p99 / max", "\(us(latency.p50)) / \(us(latency.p99)) / \(us(latency.max))", ""],
                ["players alive at the end / guards", "", "\(count("players")) / \(count("guards"))"],
            ])
        guard samples.count >= 4 else { throw BenchError("too few samples of hapticsd's CPU and memory") }
        let window = max(1, min(5, samples.count / 3))
        let first = samples[window], last = samples[samples.count - 1], firstStart = samples[0], lastStart = samples[samples.count - 1 - window]
        let cpuStart = (first.cpu - firstStart.cpu) / (first.time - firstStart.time) * 100
        let cpuEnd = (last.cpu - lastStart.cpu) / (last.time - lastStart.time) * 100
        table(
            "hapticsd during the load run (sampled every second)",
            ["measure", "start (after \(Int(firstStart.time)) s)", "end (after \(Int(last.time)) s)"],
            [
                ["resident memory (VmRSS)", "\(firstStart.rss) kB", "\(last.rss) kB"],
                ["CPU (of one core, over \(window) s)", String(format: "%.1f %%", cpuStart), String(format: "%.1f %%", cpuEnd)],
            ])
    }
}

/// A private dbus-daemon for the benchmarks, and hapticsd instances on it.
final class PrivateBus {
    let directory: String
    let address: String
    private let daemon: Process

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("haptics-bench-bus-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        address = "unix:path=\(directory)/bus"
        try """
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(toFile: directory + "/bus.conf", atomically: false, encoding: .utf8)
        daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--nofork", "--nopidfile", "--config-file=\(directory)/bus.conf"]
        daemon.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try daemon.run()
        for _ in 0..<200 where access(directory + "/bus", F_OK) != 0 { Thread.sleep(forTimeInterval: 0.05) }
    }

    deinit {
        daemon.terminate()
        daemon.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts hapticsd (beside this executable) on the bus and waits until it owns its name.
    func startDaemon(devices: String, output: String?) throws -> Process {
        let process = Process()
        let daemon = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent().appendingPathComponent("hapticsd")
        guard access(daemon.path, X_OK) == 0 else {
            throw BenchError("no hapticsd beside haptics-bench (\(daemon.path)): `swift run` builds only the bench; run `swift build -c release` first")
        }
        process.executableURL = daemon
        var arguments = ["--address", address, "--set", "recording.devices=\(devices)", "--set", "recording.simulate-wake=0", "--log-level", "warning", "--no-feedbackd"]
        if let output { arguments += ["--set", "recording.output=\(output)"] }
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": directory + "/config"]) { $1 }
        try process.run()
        let probe = try BusConnection(.address(address))
        for _ in 0..<400 {
            if (try? probe.owner(of: HapticsServiceName.bus)) ?? nil != nil { return process }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw BenchError("hapticsd did not start on \(address)")
    }

    /// Stops hapticsd (SIGTERM: it stops and closes every device, flushing the recording).
    func stop(_ process: Process) throws {
        process.terminate()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("hapticsd exited with \(process.terminationStatus)") }
    }

    /// hapticsd's GetStatistics.
    func statistics() throws -> [(key: String, value: BusValue)] {
        let connection = try BusConnection(.address(address))
        let reply = try connection.call(
            destination: HapticsServiceName.bus, path: HapticsServiceName.objectPath, interface: HapticsServiceName.interface, member: "GetStatistics")
        return try reply.reader.dictionary()
    }
}

/// A process's CPU time and resident memory, from /proc.
struct ProcessSampler {
    let pid: Int32

    func cpuSeconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based, as proc(5) counts).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
