import CGpiod
import Foundation
import Haptics
import Testing
import VMRig

/// Guest side: one actuator on real kernel interfaces: a gpio-sim chip, pwm-sim channel(s), a
/// board file naming them, and a ``HapticSystem`` on a ``ManualClock`` that loads the gpio backend
/// from the build directory (through dlopen, as any host).
final class GPIOKernelRig {
    let sim: GPIOSim
    let pwm: PWMSim
    /// The claimed PWM channels: the amplitude channel first.
    let channels: [Int]
    let directory: String
    let boardPath: String
    let boardName: String
    let clock = ManualClock()
    let start: HapticInstant

    /// The amplitude channel.
    var channel: Int { channels[0] }
    /// The chip's sysfs name, `pwmchipN`.
    var pwmChip: String { String(pwm.chipPath.split(separator: "/").last!) }
    /// The device id of actuator `name`.
    func id(_ name: String = "a") -> String { "gpio:\(boardName):\(name)" }

    /// Makes the chip (lines named `lineNames`), claims `pwmChannels` channels and writes the board
    /// file `board(rig)` returns (its JSON text).
    init(lines: Int = 8, lineNames: [String?] = [], pwmChannels: Int = 1, board: (GPIOKernelRig.Names) -> String) throws {
        sim = try GPIOSim(lines: lines, lineNames: lineNames)
        pwm = try PWMSim.load()
        var claimed: [Int] = []
        do {
            for _ in 0..<pwmChannels { claimed.append(try pwm.claimChannel()) }
        } catch {
            for channel in claimed { pwm.releaseChannel(channel) }
            throw error
        }
        channels = claimed
        for channel in claimed {
            try? pwm.unexport(channel: channel)
            try? pwm.clearHistory(channel: channel)
        }
        directory = TestSupport.makeTemporaryDirectory("gpio-kernel")
        chmod(directory, 0o755)
        boardName = "t\(getpid())-\(claimed[0])-\(sim.chipName)"
        boardPath = directory + "/board.json"
        let names = Names(
            board: boardName, gpioChip: sim.devicePath, gpioChipName: sim.chipName, pwmChip: String(pwm.chipPath.split(separator: "/").last!),
            channels: claimed)
        try board(names).write(toFile: boardPath, atomically: false, encoding: .utf8)
        chmod(boardPath, 0o644)
        start = clock.now()
    }

    deinit {
        for channel in channels {
            try? pwm.unexport(channel: channel)
            pwm.releaseChannel(channel)
        }
        try? sim.remove()
    }

    /// What a board file template needs.
    struct Names {
        var board: String
        /// The chip's path, `/dev/gpiochipN`.
        var gpioChip: String
        /// The chip's name, `gpiochipN` (looked up in `/dev` by the backend).
        var gpioChipName: String
        var pwmChip: String
        var channels: [Int]
    }

    /// A system loading the build directory's plugins, with this rig's board file.
    func system() -> HapticSystem {
        HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                settings: ["gpio.boards": boardPath, "recording.devices": "none"], clock: clock, daemon: .never))
    }

    /// Advances the manual clock to `seconds` after the rig started.
    func advance(to seconds: Double) {
        clock.advance(to: start.advanced(bySeconds: seconds))
    }

    /// The lines' values (physical) and the channels' states now.
    struct Snapshot: Equatable, CustomStringConvertible {
        var lines: [Int: Int]
        var pwm: [PWMSim.State]
        var description: String {
            "lines \(lines.sorted(by: { $0.key < $1.key }).map { "\($0.key)=\($0.value)" }.joined(separator: " ")); pwm \(pwm.map(\.description).joined(separator: " | "))"
        }
    }

    /// Reads the given lines and every claimed channel (exported, so sysfs shows it).
    func snapshot(lines: [Int]) throws -> Snapshot {
        Snapshot(
            lines: Dictionary(uniqueKeysWithValues: try lines.map { ($0, try sim.value(line: $0)) }),
            pwm: try channels.map { try pwm.state(channel: $0) })
    }

    /// Whether line `offset` is requested by anyone (libgpiod v1 line info).
    func lineIsUsed(_ offset: Int) throws -> Bool {
        let chip = try #require(gpiod_chip_open(sim.devicePath))
        defer { gpiod_chip_close(chip) }
        let line = try #require(gpiod_chip_get_line(chip, UInt32(offset)))
        return gpiod_line_is_used(line)
    }

    /// The last state channel `index` (of ``channels``) was given, from the pwm-sim history.
    func lastState(_ index: Int = 0) throws -> PWMSim.State? {
        try pwm.history(channel: channels[index]).last?.state
    }
}

/// A child process started with `posix_spawn` (Foundation's `Process` hangs in the guest), its
/// stdout and stderr going to one file.
final class ChildProcess {
    let pid: pid_t
    let outputPath: String
    private var status: Int32?

    /// How the child ended.
    enum Ending: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signaled(let signal): "killed by signal \(signal)"
            }
        }
    }

    init(_ arguments: [String], environment: [String: String] = [:], outputPath: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // The test runs on a thread that blocks signals (Swift concurrency's pool), and a spawned
        // child inherits the mask: unblock everything and reset the signals a child may be told to die
        // of to their defaults (a runner that ignores one, SIGPIPE say, would pass that on).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw RigError.system(operation: "posix_spawn", path: arguments[0], errno: result) }
        self.pid = pid
        self.outputPath = outputPath
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }

    /// Sends `signal`.
    func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Waits for the child to end (killing it after `timeout` seconds).
    func wait(timeout: Double) throws -> Ending {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while status == nil {
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                status = raw
                break
            }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &raw, 0)
                status = raw
                throw RigError.timeout(what: "child \(pid) to end; its output: \(output)", seconds: timeout)
            }
            usleep(10_000)
        }
        let raw = status!
        return raw & 0x7f == 0 ? .exited((raw >> 8) & 0xff) : .signaled(raw & 0x7f)
    }

    /// What the child printed so far.
    var output: String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// Polls `condition` every 20 ms until it holds (true) or `timeout` seconds pass (false).
    static func waitUntil(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }
}

extension HapticPattern {
    /// A continuous event (0…0.1 s, intensity 0.5) and a transient at 0.2 s (intensity 0.6), with
    /// the given sharpnesses: the sequence every topology test plays.
    static func gpioSequence(continuousSharpness: Double = 0.5, transientSharpness: Double = 0.5) throws -> HapticPattern {
        try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: 0.5), .init(parameterID: .hapticSharpness, value: continuousSharpness)],
                relativeTime: 0, duration: 0.1),
            HapticEvent(
                eventType: .hapticTransient,
                parameters: [.init(parameterID: .hapticIntensity, value: 0.6), .init(parameterID: .hapticSharpness, value: transientSharpness)],
                relativeTime: 0.2),
        ])
    }
}
