import ArgumentParser
import Foundation
import Haptics
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `haptics-bench instructions`: instructions per trigger, counted by callgrind (valgrind's
/// instruction counter: deterministic, unlike a clock, and the same on any x86-64 machine).
///
/// For each build given (`--build LABEL=DIRECTORY`, a directory holding a `haptics-bench` and a
/// `libhaptics-null.so` whose debug information is stripped: valgrind 3.19 cannot read the DWARF 5
/// that Swift 6.3 writes) and each scenario, it runs that build's `haptics-bench count-child` under
/// callgrind, twice:
///
/// - **caller thread**: `--collect-atstart=no --toggle-collect=<the section>`: only the instructions
///   the calling thread runs inside the trigger call (`impactOccurred()`, `player.start(atTime: 0)`,
///   `submit`) are counted, from its entry to its return;
/// - **all threads**: `--separate-threads=no --dump-before=<window opens and closes>`: every
///   instruction of every thread of the process (the caller, the engine's scheduler thread, the
///   power model's timer thread) from the start to the end of a loop of whole cycles — `prepare()`,
///   the trigger, the effect played to its end and the device back to idle (wake and sleep
///   included) — minus the same loop without the cycle (its sleeps alone), per cycle.
///
/// Counts are user-space instructions (valgrind does not see the kernel): a system call counts as
/// its few instructions of wrapper. The null backend's `submit` does nothing, so the figures are the
/// core's own cost. Warm-up cycles run first, outside the counted sections, so lazily built state
/// (metadata, caches) is not counted. Swift's hashing is made deterministic
/// (`SWIFT_DETERMINISTIC_HASHING=1`), so dictionary and set work repeats exactly between runs.
///
/// `Scripts/bench-instructions` builds the baseline and this tree, strips them and calls this with
/// both, so one run prints before and after side by side.
enum InstructionCounts {
    /// What is counted: a trigger, on a device prepared just before (the prepared fast path).
    enum Scenario: String, CaseIterable, ExpressibleByArgument {
        case impact, selection, player, deviceSubmit = "device-submit", backendSubmit = "backend-submit"

        var title: String {
            switch self {
            case .impact: "ImpactFeedbackGenerator(style: .rigid).impactOccurred()"
            case .selection: "SelectionFeedbackGenerator.selectionChanged()"
            case .player: "player.start(atTime: 0), a 40 ms pattern played before"
            case .deviceSubmit: "HapticDevice.submit, prepared (no engine)"
            case .backendSubmit: "backend submit: PluginActuator → null plugin"
            }
        }
    }

    enum Mode: String, ExpressibleByArgument { case caller, all, idle }

    // MARK: - The parent

    struct Build: ExpressibleByArgument {
        let label: String
        let directory: String

        init(label: String, directory: String) {
            self.label = label
            self.directory = directory
        }

        /// `LABEL=DIRECTORY`.
        init?(argument: String) {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else { return nil }
            label = String(argument[..<equals])
            directory = String(argument[argument.index(after: equals)...])
        }
    }

    struct Options: ParsableArguments {
        @Option(name: .customLong("build"), help: "LABEL=DIRECTORY of a build to count (repeatable; default this executable's).")
        var builds: [Build] = []
        @Option(help: "Counted cycles per figure.") var iterations = 20
        @Option(help: "Seconds each cycle lets the effect play out and the device go idle.") var settle = 0.25
        @Option(name: .customLong("only"), help: "Scenarios, comma-separated (\(Scenario.allCases.map(\.rawValue).joined(separator: ", "))).")
        var scenarioList: ScenarioList = ScenarioList(scenarios: Scenario.allCases)
        var scenarios: [Scenario] { scenarioList.scenarios }

        func validate() throws {
            guard iterations > 0 else { throw ValidationError("--iterations takes a positive number, not \(iterations)") }
            guard settle > 0 else { throw ValidationError("--settle takes seconds above 0, not \(settle)") }
        }
    }

    /// `--only a,b`: the scenarios to count.
    struct ScenarioList: ExpressibleByArgument {
        var scenarios: [Scenario]
        init(scenarios: [Scenario]) { self.scenarios = scenarios }
        init?(argument: String) {
            let found = argument.split(separator: ",").map { Scenario(rawValue: String($0)) }
            guard !found.isEmpty, found.allSatisfy({ $0 != nil }) else { return nil }
            scenarios = found.compactMap { $0 }
        }
        var defaultValueDescription: String { "all" }
    }

    static func run(_ given: Options) throws {
        var options = given
        let candidates: [String] = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"]
        guard let valgrind = candidates.first(where: { path in access(path, X_OK) == 0 }) else {
            throw BenchError("instructions needs valgrind (apt-get install valgrind); Scripts/bench-instructions sets everything up")
        }
        if options.builds.isEmpty {
            // This executable, as built: valgrind 3.19 may fail on its DWARF 5 (Scripts/bench-instructions strips it).
            let directory = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent().path
            options.builds = [Build(label: "this build", directory: directory)]
        }
        print("haptics-bench instructions — callgrind (\(valgrind)), null backend, \(options.iterations) counted cycles per figure\n")
        var results: [String: [Scenario: (caller: Double, all: Double)]] = [:]
        for build in options.builds {
            // The sleeps of a cycle through the engine, counted alone (the submits do not sleep).
            let idle = try count(valgrind, build, scenario: .impact, mode: .idle, options)
            for scenario in options.scenarios {
                let caller = try count(valgrind, build, scenario: scenario, mode: .caller, options)
                let all = try count(valgrind, build, scenario: scenario, mode: .all, options)
                let sleeps: Double = scenario == .deviceSubmit || scenario == .backendSubmit ? 0 : idle
                results[build.label, default: [:]][scenario] = (caller, all - sleeps)
                if Environment.debug { print("\(build.label) \(scenario.rawValue): caller \(caller), all \(all), idle loop \(idle)") }
            }
        }
        var rows: [[String]] = []
        for scenario in options.scenarios {
            var row = [scenario.title]
            for build in options.builds {
                let figures = results[build.label]![scenario]!
                row += [grouped(figures.caller), grouped(figures.all)]
            }
            if options.builds.count == 2 {
                let before = results[options.builds[0].label]![scenario]!, after = results[options.builds[1].label]![scenario]!
                row.append(String(format: "%.1f× / %.1f×", before.caller / after.caller, before.all / after.all))
            }
            rows.append(row)
        }
        var header = ["instructions per trigger"]
        for build in options.builds { header += ["\(build.label): caller", "\(build.label): all threads"] }
        if options.builds.count == 2 { header.append("fewer (caller / all)") }
        table(
            "Instructions per trigger (callgrind; caller: inside the call on the calling thread; all threads: prepare + trigger + play to the end and idle, every thread)",
            header, rows)
        print("goals: ≤ 2,000 on the caller thread (impactOccurred, player.start), ≤ 10,000 per impact over all threads\n")
    }

    private static func count(_ valgrind: String, _ build: Build, scenario: Scenario, mode: Mode, _ options: Options) throws -> Double {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("haptics-count-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var arguments = ["--tool=callgrind", "--callgrind-out-file=\(scratch)/cg.out", "--separate-threads=no"]
        switch mode {
        case .caller:
            arguments += ["--collect-atstart=no", "--toggle-collect=*InstructionCounts*callerSection*"]
        case .all, .idle:
            // One pattern for both functions: callgrind 3.19 honoured only the first of two
            // `--dump-before` patterns that share a wildcard prefix.
            arguments += ["--dump-before=*InstructionCounts*window*"]
        }
        arguments += [
            build.directory + "/haptics-bench", "count-child", scenario.rawValue, mode.rawValue, String(options.iterations),
            String(options.settle), build.directory,
        ]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: valgrind)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        environment["HAPTICS_DAEMON"] = "off"
        environment["XDG_CONFIG_HOME"] = scratch
        process.environment = environment
        let log = Pipe()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        let output = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("\(build.label) \(scenario.rawValue) \(mode.rawValue): valgrind exited with \(process.terminationStatus):\n\(output.suffix(3000))")
        }
        // The caller count is in the final dump; the loop's in the second dump (the first holds
        // everything before the window).
        let file = mode == .caller ? "\(scratch)/cg.out" : "\(scratch)/cg.out.2"
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw BenchError("\(build.label) \(scenario.rawValue) \(mode.rawValue): no callgrind output \(file):\n\(output.suffix(3000))")
        }
        let totals = text.split(separator: "\n").first { $0.hasPrefix("totals:") } ?? text.split(separator: "\n").first { $0.hasPrefix("summary:") }
        guard let totals, let instructions = Double(totals.split(separator: " ").last ?? "") else {
            throw BenchError("\(file): no totals line")
        }
        return instructions / Double(options.iterations)
    }

    private static func grouped(_ value: Double) -> String {
        let rounded = Int(value.rounded())
        var digits = String(abs(rounded))
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return (rounded < 0 ? "-" : "") + digits + grouped
    }

    // MARK: - The child, under callgrind

    /// `count-child SCENARIO MODE ITERATIONS SETTLE PLUGIN_DIRECTORY`.
    static func child(scenario: Scenario, mode: Mode, iterations: Int, settle: Double, pluginDirectory: String) throws {
        let system = HapticSystem(configuration: .init(searchPath: PluginSearchPath(directories: [pluginDirectory]), daemon: .never))
        let device = try system.openDevice("null:0")
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        engine.isAutoShutdownEnabled = false
        let cycle = try Cycle(scenario: scenario, device: device, engine: engine, settle: settle)
        for _ in 0..<5 { try cycle.run(counted: false) }
        switch mode {
        case .caller:
            for _ in 0..<iterations { try cycle.run(counted: true) }
        case .all:
            blackHole(try cycleSection(iterations) { try cycle.run(counted: false) })
        case .idle:
            blackHole(try cycleSection(iterations) { try cycle.pauseOnly() })
        }
        engine.stop()
        device.close()
    }

    /// The caller-thread count's window: callgrind collects from this function's entry to its return.
    @inline(never)
    static func callerSection(_ marker: Int, _ body: () throws -> Void) rethrows -> Int {
        try body()
        // Work after the call keeps it from being a tail call, which would end the window early.
        return marker &+ 1
    }

    /// The all-threads count's window: callgrind dumps every counter on entering ``windowOpens(_:)``
    /// and again on entering ``windowCloses(_:)``, so the second dump holds what every thread ran in
    /// between. (Entering a function is what callgrind sees reliably: `--dump-after` missed this
    /// loop's return, which it spends asleep while other threads run.)
    static func cycleSection(_ iterations: Int, _ body: () throws -> Void) rethrows -> Int {
        var done = windowOpens(iterations)
        for _ in 0..<iterations {
            try body()
            done &+= 1
        }
        return windowCloses(done)
    }

    @inline(never)
    static func windowOpens(_ value: Int) -> Int {
        blackHole(value)
        return 0
    }

    @inline(never)
    static func windowCloses(_ value: Int) -> Int {
        blackHole(value &+ 1)
        return value
    }

    @inline(never)
    static func blackHole(_ value: Int) {
        if value == -1 { print("") }
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// One prepare → trigger → end → idle cycle of a scenario.
    final class Cycle {
        let scenario: Scenario
        let device: HapticDevice
        let engine: HapticEngine
        let settle: Double
        let hold: DeviceHold
        let impact: ImpactFeedbackGenerator
        let selection: SelectionFeedbackGenerator
        let player: any HapticAdvancedPatternPlayer
        let finished = Flag()
        let on: DriveFrame
        let off: DriveFrame
        var marker = 0

        init(scenario: Scenario, device: HapticDevice, engine: HapticEngine, settle: Double) throws {
            self.scenario = scenario
            self.device = device
            self.engine = engine
            self.settle = settle
            hold = device.hold()
            impact = ImpactFeedbackGenerator(style: .rigid, engine: engine)
            selection = SelectionFeedbackGenerator(engine: engine)
            // The HID race's pattern: 40 ms of full-strength continuous drive.
            player = try engine.makeAdvancedPlayer(with: HapticPattern(events: [
                HapticEvent(
                    eventType: .hapticContinuous,
                    parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0)],
                    relativeTime: 0, duration: 0.04)
            ]))
            let channels = device.description.channels.count
            on = DriveFrame(time: .monotonicNow(), channels: Array(repeating: ChannelDrive(amplitude: 1, frequency: 0), count: channels))
            off = DriveFrame.silence(channelCount: channels, at: .monotonicNow())
            let finished = self.finished
            player.completionHandler = { _ in finished.value.store(true, ordering: .releasing) }
            if scenario == .backendSubmit { try device.beginActivity() }
        }

        deinit {
            if scenario == .backendSubmit { device.endActivity() }
        }

        func run(counted: Bool) throws {
            switch scenario {
            case .impact:
                impact.prepare()
                try expect(.prepared)
                if counted { marker = Self.section(marker) { impact.impactOccurred() } } else { impact.impactOccurred() }
                pause(settle)
                try expect(.idle)
            case .selection:
                selection.prepare()
                try expect(.prepared)
                if counted { marker = Self.section(marker) { selection.selectionChanged() } } else { selection.selectionChanged() }
                pause(settle)
                try expect(.idle)
            case .player:
                hold.prepare()
                try expect(.prepared)
                finished.value.store(false, ordering: .relaxed)
                if counted { marker = try Self.section(marker) { try player.start(atTime: 0) } } else { try player.start(atTime: 0) }
                pause(settle)
                guard finished.value.load(ordering: .acquiring) else { throw BenchError("the pattern did not end within \(settle) s; raise --settle") }
                try expect(.idle)
            case .deviceSubmit:
                hold.prepare()
                try device.beginActivity()
                if counted { marker = try Self.section(marker) { try device.submit(on) } } else { try device.submit(on) }
                try device.submit(off)
                device.endActivity()
                try expect(.idle)
            case .backendSubmit:
                // The device stays awake (an activity begun at set-up): the plugin's call alone.
                if counted { marker = try Self.section(marker) { try device.actuator.submit(on) } } else { try device.actuator.submit(on) }
                try device.actuator.submit(off)
            }
        }

        /// Whether a cycle sleeps while the effect plays out (the triggers through the engine).
        var pauses: Bool { scenario != .deviceSubmit && scenario != .backendSubmit }

        /// The idle loop: the cycle's sleeps without its work, subtracted from the all-threads count.
        func pauseOnly() throws {
            if pauses { pause(settle) }
        }

        private static func section(_ marker: Int, _ body: () throws -> Void) rethrows -> Int {
            try InstructionCounts.callerSection(marker, body)
        }

        private func expect(_ state: PowerState) throws {
            guard device.powerState == state else {
                throw BenchError("\(scenario.rawValue): the device is \(device.powerState), expected \(state) (raise --settle under a slow valgrind)")
            }
        }

        private func pause(_ seconds: Double) {
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        }
    }
}
