import Foundation
import Haptics
import HapticsTools
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private message bus (its own `dbus-daemon`) and a hapticsd on it, over the recording backend,
/// for one test. Nothing here touches the developer's session bus: every process started gets
/// `DBUS_SESSION_BUS_ADDRESS` pointing at the private bus, whose configuration lists no service
/// directories, so nothing is ever activated on it (Debian's feedbackd's activation file included).
final class DaemonRig {
    static var hapticsd: String { TestSupport.buildDirectory + "/hapticsd" }
    static var themes: String { TestSupport.packageRoot + "/dist/themes" }

    let directory: String
    /// The hapticsd this rig runs.
    let executable: String
    /// What hapticsd gets beyond the client environment (`HOME` for an ALSA configuration of its own).
    let daemonEnvironment: [String: String]
    /// The private bus's address.
    let address: String
    /// Where hapticsd's recording backend writes.
    let recordingPath: String
    private let bus: ChildProcess
    private(set) var daemon: ChildProcess?
    private var notify: Int32 = -1

    /// Starts the bus and, unless `startDaemon` is false, hapticsd simulating `devices` with `arguments`.
    /// `serviceDirectories` are D-Bus activation directories the bus reads (none by default);
    /// `allUsers` lets every user of the machine connect (as on the system bus), not only this one;
    /// `executable` is the hapticsd to run (the debug build's by default).
    init(
        devices: String = "lra,gamepad", arguments: [String] = [], startDaemon: Bool = true, serviceDirectories: [String] = [], allUsers: Bool = false,
        executable: String = DaemonRig.hapticsd, environment: [String: String] = [:]
    ) throws {
        self.executable = executable
        daemonEnvironment = environment
        directory = TestSupport.makeTemporaryDirectory("hapticsd")
        if allUsers { chmod(directory, 0o755) }
        address = "unix:path=\(directory)/bus"
        recordingPath = directory + "/recording.jsonl"
        try FileManager.default.createDirectory(atPath: directory + "/config", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        // No <servicedir> and no <standard_session_servicedirs/>: no service can be activated.
        bus = try Self.startBus(in: directory, serviceDirectories: serviceDirectories, allUsers: allUsers)
        if startDaemon { try start(devices: devices, arguments: arguments) }
    }

    /// Whether a client can connect to the UNIX stream socket at `path` now.
    static func acceptsConnections(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0
    }

    /// Starts a private `dbus-daemon` listening at `DIRECTORY/bus` and waits until it listens:
    /// activation from `serviceDirectories` only, or from the standard session directories too
    /// (`standardServiceDirectories`, to see installed services); `allUsers` lets every user connect.
    static func startBus(
        in directory: String, serviceDirectories: [String] = [], standardServiceDirectories: Bool = false, allUsers: Bool = false
    ) throws -> ChildProcess {
        var services = serviceDirectories.map { "\n  <servicedir>\($0)</servicedir>" }.joined()
        if standardServiceDirectories { services += "\n  <standard_session_servicedirs/>" }
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>\(services)
              <policy context="default">\(allUsers ? "\n    <allow user=\"*\"/>" : "")
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: directory + "/bus.conf", atomically: false, encoding: .utf8)
        let bus = try ChildProcess(
            ["/usr/bin/dbus-daemon", "--nofork", "--nopidfile", "--config-file=\(directory)/bus.conf"], outputPath: directory + "/dbus-daemon.log")
        // Connectable, not only there: the socket file appears at bind(), a moment before listen(),
        // and a client in between is refused (ECONNREFUSED, once in a CI run under load).
        let listening = ChildProcess.waitUntil(timeout: 20) { Self.acceptsConnections(directory + "/bus") }
        guard listening else {
            bus.send(SIGKILL)
            throw RigFailure("dbus-daemon did not start listening: \(bus.output)")
        }
        return bus
    }

    deinit {
        if let daemon { daemon.send(SIGKILL) }
        if notify >= 0 { close(notify) }
        bus.send(SIGTERM)
        _ = try? bus.wait(timeout: 5)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What every client process gets: the private bus, hapticsd allowed, no user settings.
    var clientEnvironment: [String: String] {
        [
            "DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(directory)/no-system-bus", "HAPTICS_DAEMON": "auto",
            "XDG_CONFIG_HOME": directory + "/config", "XDG_DATA_DIRS": directory + "/data", "HAPTICS_PLUGIN_PATH": "",
        ]
    }

    /// Starts hapticsd and waits for its readiness notification (`sd_notify` READY=1).
    func start(devices: String = "lra,gamepad", arguments: [String] = []) throws {
        if notify < 0 { notify = try Self.notifySocket(path: directory + "/notify") }
        var environment = clientEnvironment.merging(daemonEnvironment) { $1 }
        environment["NOTIFY_SOCKET"] = directory + "/notify"
        let child = try ChildProcess(
            [
                executable, "--set", "recording.devices=\(devices)", "--set", "recording.output=\(recordingPath)",
                "--set", "recording.simulate-wake=0", "--theme-dir", Self.themes, "--log-level", "debug",
            ] + arguments, environment: environment, outputPath: directory + "/hapticsd.log")
        daemon = child
        let message = Self.receive(notify, timeout: 60)
        guard let message, message.contains("READY=1") else {
            throw RigFailure("hapticsd did not report readiness (got \(message ?? "nothing")); its log:\n\(child.output)")
        }
    }

    /// Sends `signal` to hapticsd and waits for it to end.
    @discardableResult
    func stopDaemon(_ signal: Int32 = SIGTERM) throws -> ChildProcess.Ending {
        guard let daemon else { throw RigFailure("hapticsd is not running") }
        daemon.send(signal)
        let ending = try daemon.wait(timeout: 30)
        self.daemon = nil
        return ending
    }

    /// Kills the private bus's dbus-daemon (SIGKILL: the bus goes away under every client).
    func killBus() throws {
        bus.send(SIGKILL)
        _ = try bus.wait(timeout: 10)
    }

    /// Waits for hapticsd to end by itself (at most `timeout` seconds).
    func waitForDaemonExit(timeout: Double = 30) throws -> ChildProcess.Ending {
        guard let daemon else { throw RigFailure("hapticsd is not running") }
        let ending = try daemon.wait(timeout: timeout)
        self.daemon = nil
        return ending
    }

    /// hapticsd's process id, while it runs.
    var daemonPID: pid_t? { daemon?.pid }

    /// hapticsd's log so far.
    var daemonLog: String { (try? String(contentsOfFile: directory + "/hapticsd.log", encoding: .utf8)) ?? "" }

    // MARK: - Clients

    /// Runs `arguments` with the client environment (plus `environment`), feeding `input` on standard
    /// input, and waits at most `timeout` seconds; standard output and error come back together.
    func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil, timeout: Double = 30) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(clientEnvironment.merging(environment) { $1 }) { $1 }
        let output = directory + "/run-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let finished = ChildProcess.waitUntil(timeout: timeout) { !process.isRunning }
        if !finished {
            process.terminate()
            process.waitUntilExit()
        }
        try handle.close()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard finished else { throw RigFailure("\(arguments.joined(separator: " ")) did not finish in \(timeout) s: \(text)") }
        return (process.terminationStatus, text)
    }

    /// Starts `arguments` with the client environment and a standard input the test writes to (and
    /// holds open: fbcli ends its feedback when its input becomes readable).
    func launch(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningTool {
        try RunningTool(arguments, environment: ProcessInfo.processInfo.environment.merging(clientEnvironment.merging(environment) { $1 }) { $1 },
                        output: directory + "/tool-\(UUID().uuidString).log")
    }

    /// `busctl --user ARGUMENTS` on the private bus.
    func busctl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try run(["/usr/bin/busctl", "--user"] + arguments)
    }

    /// `busctl --user --json=short call` on hapticsd's manager object; the reply's `data`, or the failure.
    func call(_ member: String, _ signature: String = "", _ arguments: [String] = [], path: String = "/org/swifthaptics/Haptics1",
              interface: String = "org.swifthaptics.Haptics1", destination: String = "org.swifthaptics.Haptics1") throws -> [Any] {
        let (status, output) = try busctl(
            ["--json=short", "call", destination, path, interface, member] + (signature.isEmpty ? [] : [signature] + arguments))
        guard status == 0 else { throw CallFailure(message: output) }
        // A method without results prints nothing.
        guard !output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
            let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], let data = object["data"] as? [Any]
        else {
            return []
        }
        return data
    }

    /// `gdbus call` of `member` on hapticsd's manager object (gdbus prints the error name of a failure).
    func gdbus(_ member: String, _ arguments: [String], path: String = "/org/swifthaptics/Haptics1", interface: String = "org.swifthaptics.Haptics1",
               destination: String = "org.swifthaptics.Haptics1") throws -> (status: Int32, output: String) {
        try run(["/usr/bin/gdbus", "call", "--session", "--dest", destination, "--object-path", path, "--method", interface + "." + member] + arguments)
    }

    /// A property of hapticsd read with busctl (its JSON `data`).
    func property(_ name: String, interface: String = "org.swifthaptics.Haptics1", path: String = "/org/swifthaptics/Haptics1",
                  destination: String = "org.swifthaptics.Haptics1") throws -> Any? {
        let (status, output) = try busctl(["--json=short", "get-property", destination, path, interface, name])
        guard status == 0 else { throw CallFailure(message: output) }
        return (try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])?["data"]
    }

    // MARK: - The recording

    /// hapticsd's recording as written so far (the backend writes at every sleep and close).
    func recording() throws -> Recording {
        try Recording(contentsOf: recordingPath)
    }

    /// Waits until the recording satisfies `condition` (at most `timeout` seconds) and returns it.
    func waitForRecording(timeout: Double = 20, _ condition: (Recording) -> Bool) throws -> Recording {
        var last: Recording?
        let met = ChildProcess.waitUntil(timeout: timeout) {
            guard let recording = try? recording() else { return false }
            last = recording
            return condition(recording)
        }
        guard met, let last else { throw RigFailure("the recording never showed what was expected; it has:\n\((try? String(contentsOfFile: recordingPath, encoding: .utf8)) ?? "nothing")") }
        return last
    }

    // MARK: - Readiness (sd_notify)

    private static func notifySocket(path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RigFailure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard bound == 0 else {
            close(fd)
            throw RigFailure("bind \(path): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    private static func receive(_ fd: Int32, timeout: Double) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }
}

/// A client process started by a test, its standard input held open.
final class RunningTool {
    let process = Process()
    private let input = Pipe()
    private let outputPath: String
    private let handle: FileHandle

    init(_ arguments: [String], environment: [String: String], output: String) throws {
        outputPath = output
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = input
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? handle.close()
    }

    var pid: pid_t { process.processIdentifier }

    /// Writes `text` to the tool's standard input.
    func write(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// What it printed so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits at most `timeout` seconds for it to end; its status (-signal when killed by one) and output.
    func wait(timeout: Double) throws -> (status: Int32, output: String) {
        let ended = ChildProcess.waitUntil(timeout: timeout) { !process.isRunning }
        guard ended else { throw RigFailure("\(process.executableURL?.path ?? "?") did not end within \(timeout) s: \(output)") }
        let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        return (status, output)
    }

    /// Polls until `condition` holds on its output (at most `timeout` seconds).
    func waitForOutput(timeout: Double = 20, _ condition: (String) -> Bool) -> Bool {
        ChildProcess.waitUntil(timeout: timeout) { condition(output) }
    }
}

/// The rig could not do what a test needs.
struct RigFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A busctl call that failed, with busctl's output.
struct CallFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension Recording {
    /// The frames `device` received, in order.
    func driveFrames(_ device: String) -> [DriveFrame] {
        frames(for: device).map(\.frame)
    }
}

extension DriveFrame {
    /// Whether any channel is driven.
    var isDriven: Bool { channels.contains { $0.amplitude > 0 } }
}

/// What playing something in-process gives on a recording device: the reference the service's
/// frames must match (the same renderer, the same uncalibrated profile).
enum InProcessReference {
    /// The drive values (per frame, per channel) of effect `name` at `intensity` on recording device
    /// `device`, rendered through `profile` (nil: the uncalibrated default).
    static func effect(
        _ name: String, device: String = "lra", intensity: Double = 1, policy: HapticPolicy = HapticPolicy(), profile: CalibrationProfile? = nil
    ) throws -> [[ChannelDrive]] {
        let effect = try #require(FeedbackEffect.named(name))
        return try frames(device: device, profile: profile) { engine in
            EffectFeedbackGenerator(engine: engine).play(effect, intensity: intensity)
        } policy: { policy }
    }

    /// The drive values of `pattern` played once at full intensity.
    static func pattern(_ pattern: HapticPattern, device: String = "lra") throws -> [[ChannelDrive]] {
        try frames(device: device) { engine in
            try engine.makePlayer(with: pattern).start(atTime: 0)
        } policy: { HapticPolicy() }
    }

    private static func frames(device: String, profile: CalibrationProfile? = nil, _ play: (HapticEngine) throws -> Void, policy: () -> HapticPolicy) throws -> [[ChannelDrive]] {
        let output = TestSupport.makeTemporaryDirectory("reference") + "/recording.jsonl"
        defer { try? FileManager.default.removeItem(atPath: (output as NSString).deletingLastPathComponent) }
        do {
            let system = TestSupport.recordingSystem(devices: device, output: output)
            let opened = try system.openDevice("recording:\(device)")
            let engine = try HapticEngine(
                devices: [opened], profiles: profile.map { ["recording:\(device)": $0] } ?? [:], profileStore: nil, policy: policy(), logger: TestSupport.quietLogger)
            try play(engine)
            let done = ChildProcess.waitUntil(timeout: 10) { opened.powerState == .idle && engine.isRunning }
            #expect(done)
            usleep(50_000)
            engine.stop()
            opened.close()
        }
        return try Recording(contentsOf: output).driveFrames("recording:\(device)").map(\.channels)
    }
}
