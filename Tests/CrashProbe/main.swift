// haptics-crash-probe: a client for the stop-guard tests. It opens devices through the plugins (as
// any host does), drives them, and then dies the way it was asked, printing the CLOCK_MONOTONIC
// time right before it does, so a test can tell how long the actuators kept running afterwards.
//
//     haptics-crash-probe DEATH [--plugins DIR] [--set KEY=VALUE]... [--continuous ID]... [--kick ID]...
//                               [--kick-duty PATH=VALUE]... [--settle SECONDS] [--close-after-kick SECONDS]
//                               [--fork-child exit|term] [--trigger ID]...
//
// 1. Opens every device; sets the adaptive triggers of the `--trigger` devices (one of the
//    `--continuous` ones: R2 `probeRightTrigger`, L2 `probeLeftTrigger`) and prints `triggers ID`;
//    starts one long continuous event (30 s, intensity 0.5) on the `--continuous` devices and lets
//    it run for `--settle` seconds (default 0.5);
// 2. starts a continuous event at intensity 1 on the `--kick` devices (their kick: the first
//    `overdrive_max_ms` above the rated level) and waits until every `--kick-duty` file reads its
//    value (the kick reached the hardware);
// 3. with `--close-after-kick`, stops the engines, closes every device, prints `closed` and waits
//    that many seconds (a test plays the next owner meanwhile); with `--fork-child`, forks a child
//    that ends at once (exit(0), or SIGTERM), waits for it and prints `child ended: <how>, duty
//    still <each --kick-duty file>` (a forked child owns none of its parent's actuators);
// 4. prints `dying <ns>` and dies of DEATH:
//    kill, hup, term, int   kill(getpid(), SIGKILL / SIGHUP / SIGTERM / SIGINT);
//    segv                   a write through a null pointer;
//    abort                  abort();
//    trap                   a Swift runtime trap (fatalError: SIGILL on x86_64, SIGTRAP on arm64);
//    pipe                   a write to a pipe whose reader is gone (as `haptic-cal … | head`);
//    overflow               unbounded recursion on the main thread (SIGSEGV on the alternate stack;
//                           the stack limited to 1 MiB and its first 7/8 touched at the start);
//    exit                   exit(0) with every device still open and playing.
// Problems are printed as `error: …` with exit status 3 (a death never exits with 3).
import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to standard output at once (nothing buffered is lost when the process dies).
func say(_ text: String) {
    let line = Array((text + "\n").utf8)
    line.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

func fail(_ text: String) -> Never {
    say("error: \(text)")
    exit(3)
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func pattern(intensity: Double) -> HapticPattern {
    do {
        return try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: 0.5)],
                relativeTime: 0, duration: HapticEvent.maximumContinuousDuration)
        ])
    } catch {
        fail("cannot make the pattern: \(error)")
    }
}

/// Recursion the optimizer cannot turn into a loop: each frame keeps 8 KiB on the stack across the
/// call, so the main stack overflows within a hundred calls, unless `limit` frames come first.
@inline(never)
func descend(_ depth: Int, limit: Int = .max) -> Int {
    var frame = InlineArray<1024, Int>(repeating: depth)
    if depth < limit { frame[1] = descend(depth + 1, limit: limit) }
    return frame[0] &+ frame[1] &+ frame[depth & 1023]
}

/// Lowers the main thread's stack limit to 1 MiB (the kernel checks it whenever the stack grows;
/// this process's other threads got their stacks at their start) and touches its first 7/8, so the
/// overflow after `dying` comes within a few frames: filling 8 MiB of fresh stack takes longer
/// under emulation than the stop the test measures.
func prepareStackForOverflow() {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_STACK.rawValue), &limit)
    limit.rlim_cur = min(limit.rlim_cur, 1 << 20)
    setrlimit(__rlimit_resource_t(RLIMIT_STACK.rawValue), &limit)
    _ = descend(0, limit: Int(limit.rlim_cur) / 8 * 7 / (9 * 1024))
}

/// The address a null-pointer write goes to, computed at run time so nothing folds it away.
@inline(never)
func nullAddress() -> Int {
    Int(getpid() & 0) + 8
}

func die(_ death: String) -> Never {
    say("dying \(monotonicNanoseconds())")
    switch death {
    case "kill": kill(getpid(), SIGKILL)
    case "hup": kill(getpid(), SIGHUP)
    case "term": kill(getpid(), SIGTERM)
    case "int": kill(getpid(), SIGINT)
    case "segv": UnsafeMutablePointer<Int>(bitPattern: nullAddress())!.pointee = 1
    case "abort": abort()
    case "trap": fatalError("haptics-crash-probe: a Swift runtime trap, as asked")
    case "pipe":
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { fail("pipe: \(String(cString: strerror(errno)))") }
        close(ends[0])
        _ = write(ends[1], "x", 1)
    case "overflow": say("depth \(descend(0))")
    case "exit": exit(0)
    default: break
    }
    // A process-directed signal may arrive on another thread a moment later.
    for _ in 0..<500 { usleep(10_000) }
    fail("still alive 5 s after \(death)")
}

var arguments = Array(CommandLine.arguments.dropFirst())
let deaths: Set<String> = ["kill", "hup", "term", "int", "segv", "abort", "trap", "pipe", "overflow", "exit"]
guard let death = arguments.first, deaths.contains(death) else {
    fail(
        "usage: haptics-crash-probe \(deaths.sorted().joined(separator: "|")) [--plugins DIR] [--set KEY=VALUE]... [--continuous ID]... [--kick ID]... [--kick-duty PATH=VALUE]... [--settle SECONDS] [--close-after-kick SECONDS] [--fork-child exit|term] [--trigger ID]..."
    )
}
arguments.removeFirst()
// Long before the kick (which lasts 200 ms), so the overflow comes at once when asked.
if death == "overflow" { prepareStackForOverflow() }
var pluginDirectory = PluginSearchPath.executableDirectory() ?? "."
var settings: [String: String] = [:]
var continuousIDs: [String] = []
var kickIDs: [String] = []
var kickDuties: [(path: String, value: String)] = []
var settle = 0.5
var closeAfterKick: Double?
var forkChild: String?
var triggerIDs: [String] = []
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    guard let value = arguments.first else { fail("\(option) needs a value") }
    arguments.removeFirst()
    switch option {
    case "--plugins": pluginDirectory = value
    case "--set", "--kick-duty":
        guard let equals = value.firstIndex(of: "=") else { fail("\(option) \(value): expected KEY=VALUE") }
        let key = String(value[..<equals]), text = String(value[value.index(after: equals)...])
        if option == "--set" { settings[key] = text } else { kickDuties.append((key, text)) }
    case "--continuous": continuousIDs.append(value)
    case "--kick": kickIDs.append(value)
    case "--settle": settle = Double(value) ?? settle
    case "--close-after-kick": closeAfterKick = Double(value)
    case "--fork-child": forkChild = value
    case "--trigger": triggerIDs.append(value)
    default: fail("unknown option \(option)")
    }
}

let system = HapticSystem(configuration: .init(searchPath: PluginSearchPath(directories: [pluginDirectory]), settings: settings))
func open(_ ids: [String]) -> [HapticDevice] {
    ids.map { id in
        do {
            let device = try system.openDevice(id)
            say("opened \(id)")
            return device
        } catch {
            fail("cannot open \(id): \(error)")
        }
    }
}
let continuousDevices = open(continuousIDs)
let kickDevices = open(kickIDs)

func play(_ devices: [HapticDevice], intensity: Double) -> HapticEngine? {
    guard !devices.isEmpty else { return nil }
    do {
        let engine = try HapticEngine(devices: devices, profileStore: nil, policy: HapticPolicy())
        try engine.makePlayer(with: pattern(intensity: intensity)).start(atTime: 0)
        return engine
    } catch {
        fail("cannot play on \(devices.map(\.description.id)): \(error)")
    }
}

/// The effects `--trigger` sets (the stop-guard test expects exactly these).
let probeRightTrigger = AdaptiveTriggerEffect.weapon(startPosition: 0.3, endPosition: 0.7, strength: 1)
let probeLeftTrigger = AdaptiveTriggerEffect.feedback(position: 0.2, strength: 0.5)
let triggers = triggerIDs.map { id in
    guard let device = continuousDevices.first(where: { $0.description.id == id }) else { fail("--trigger \(id) is not one of the --continuous devices") }
    do {
        let triggers = try AdaptiveTriggers(device: device)
        try triggers.set(right: probeRightTrigger, left: probeLeftTrigger)
        say("triggers \(id)")
        return triggers
    } catch {
        fail("cannot set the triggers of \(id): \(error)")
    }
}
let continuousEngine = play(continuousDevices, intensity: 0.5)
say("driving")
usleep(UInt32(settle * 1e6))
let kickEngine = play(kickDevices, intensity: 1)
let deadline = monotonicNanoseconds() + 2_000_000_000
for (path, value) in kickDuties {
    while (try? String(contentsOf: path)) != value {
        guard monotonicNanoseconds() < deadline else { fail("\(path) never read \(value) (reads \(String(describing: try? String(contentsOf: path))))") }
        usleep(200)
    }
}
if let ending = forkChild {
    let child = fork()
    if child == 0 {
        if ending == "term" { kill(getpid(), SIGTERM) }
        exit(0)
    }
    guard child > 0 else { fail("fork: \(String(cString: strerror(errno)))") }
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    let how = status & 0x7f == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
    say("child ended: \(how), duty still \(kickDuties.map { (try? String(contentsOf: $0.path)) ?? "?" }.joined(separator: " "))")
}
if let pause = closeAfterKick {
    continuousEngine?.stop()
    kickEngine?.stop()
    for device in continuousDevices + kickDevices { device.close() }
    say("closed")
    usleep(UInt32(pause * 1e6))
}
withExtendedLifetime((continuousEngine, kickEngine, continuousDevices, kickDevices, triggers)) {
    die(death)
}

extension String {
    /// The file's text without surrounding white space.
    init(contentsOf path: String) throws {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ProbeError(errno: errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw ProbeError(errno: errno) }
        var text = Substring(String(decoding: buffer[0..<count], as: UTF8.self))
        while let last = text.last, last.isWhitespace { text.removeLast() }
        self = String(text)
    }
}

struct ProbeError: Error {
    var errno: Int32
}
