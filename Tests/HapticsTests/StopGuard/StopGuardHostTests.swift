import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A coin ERM on a sysfs PWM tree (plain files, `gpio.sysfs-root`), so the guard and its supervisor
/// can be tested on any machine; the kernel's own interfaces are tested in the VM rig
/// (`StopGuardKernel`).
struct ERMTree {
    let tree: PWMTree
    let boardPath: String
    let id = "gpio:host-erm:e"
    var duty: String { tree.chip + "/pwm0/duty_cycle" }
    var enable: String { tree.chip + "/pwm0/enable" }

    init() throws {
        tree = try PWMTree(exported: [0: .unconfigured])
        boardPath = tree.root + "/board.json"
        try PWMTree.put(
            boardPath,
            #"""
            {"format": 1, "name": "host-erm", "actuators": [{"name": "e", "topology": "erm-transistor",
              "pwm": {"chip": "pwmchip0", "channel": 0, "frequency_hz": 20000},
              "limits": {"rated_level": 0.6, "overdrive_level": 1.0, "overdrive_max_ms": 200, "max_continuous_ms": 60000, "rest_ms": 50}}]}
            """#)
    }

    /// The probe's arguments to drive the ERM (inside its kick, 100 %) and die of `death`.
    func arguments(_ death: ProbeDeath, extra: [String] = []) -> [String] {
        [
            CrashProbe.path, death.rawValue, "--set", "gpio.boards=\(boardPath)", "--set", "gpio.sysfs-root=\(tree.root)", "--set", "recording.devices=none",
            "--kick", id, "--kick-duty", "\(duty)=50000", "--settle", "0",
        ] + extra
    }

    func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

@Suite("Stop guard: the supervisor on a sysfs tree (host)")
struct StopGuardHostTests {
    /// Runs the probe to its death and waits until its supervisor is gone too.
    static func run(_ arguments: [String], in directory: String, label: String) throws -> (ending: ChildProcess.Ending, output: String) {
        let child = try ChildProcess(arguments, environment: ["SWIFT_BACKTRACE": "enable=no"], outputPath: directory + "/\(label).log")
        let ending = try child.wait(timeout: 60)
        let gone = ChildProcess.waitUntil(timeout: 10) { CrashProbe.supervisors(of: child.pid).isEmpty }
        #expect(gone, "the supervisor of \(child.pid) is still running")
        return (ending, child.output)
    }

    @Test("SIGKILL in a kick: the supervisor writes duty 0 and disables, says which actuator it stopped, and exits")
    func sigkill() throws {
        let erm = try ERMTree()
        let (ending, output) = try Self.run(erm.arguments(.kill), in: erm.tree.root, label: "kill")
        #expect(ending == .signaled(SIGKILL), "\(output)")
        #expect(output.contains("dying "), "\(output)")
        #expect(try erm.read(erm.duty) == "0")
        #expect(try erm.read(erm.enable) == "0")
        #expect(output.contains("ended without stopping \(erm.id); stopped it"), "\(output)")
    }

    @Test("a signal the process catches: it stops the actuator itself; the supervisor stays quiet", arguments: [ProbeDeath.term, .segv])
    func caught(_ death: ProbeDeath) throws {
        let erm = try ERMTree()
        let (ending, output) = try Self.run(erm.arguments(death), in: erm.tree.root, label: death.rawValue)
        #expect(ending == death.ending, "\(output)")
        #expect(try erm.read(erm.duty) == "0")
        #expect(try erm.read(erm.enable) == "0")
        #expect(!output.contains("haptics-stop-guard:"), "\(output)")
    }

    @Test("an actuator closed before the death is no longer the supervisor's: the next owner's drive survives the old process's SIGKILL")
    func closedActuatorIsLeftAlone() throws {
        let erm = try ERMTree()
        let child = try ChildProcess(
            erm.arguments(.kill, extra: ["--close-after-kick", "1"]), environment: ["SWIFT_BACKTRACE": "enable=no"],
            outputPath: erm.tree.root + "/close.log")
        let closed = ChildProcess.waitUntil(timeout: 30) { child.output.contains("closed") }
        try #require(closed, "the probe never closed: \(child.output)")
        #expect(try erm.read(erm.duty) == "0")  // closing stopped it
        // The next owner drives the channel (the tree keeps the files after the unexport).
        try PWMTree.put(erm.duty, "12345")
        try PWMTree.put(erm.enable, "1")
        #expect(try child.wait(timeout: 30) == .signaled(SIGKILL), "\(child.output)")
        let gone = ChildProcess.waitUntil(timeout: 10) { CrashProbe.supervisors(of: child.pid).isEmpty }
        #expect(gone)
        #expect(try erm.read(erm.duty) == "12345")
        #expect(try erm.read(erm.enable) == "1")
        #expect(!child.output.contains("haptics-stop-guard:"), "\(child.output)")
    }

    @Test("without the supervisor executable: a warning names what is not guaranteed; SIGTERM still stops the actuator, SIGKILL cannot")
    func missingSupervisor() throws {
        let plugins = TestSupport.makeTemporaryDirectory("no-supervisor")
        defer { try? FileManager.default.removeItem(atPath: plugins) }
        try FileManager.default.copyItem(atPath: TestSupport.buildDirectory + "/libhaptics-gpio.so", toPath: plugins + "/libhaptics-gpio.so")
        let erm = try ERMTree()

        let (killed, killOutput) = try Self.run(erm.arguments(.kill, extra: ["--plugins", plugins]), in: erm.tree.root, label: "kill")
        #expect(killed == .signaled(SIGKILL), "\(killOutput)")
        #expect(
            killOutput.contains("stop guard: the supervisor \(plugins)/haptics-stop-guard is missing"), "\(killOutput)")
        #expect(killOutput.contains("not when the process is killed with SIGKILL, by the OOM killer"), "\(killOutput)")
        #expect(try erm.read(erm.duty) == "50000", "nothing stops a SIGKILLed process's actuator without the supervisor")

        let (terminated, termOutput) = try Self.run(erm.arguments(.term, extra: ["--plugins", plugins]), in: erm.tree.root, label: "term")
        #expect(terminated == .signaled(SIGTERM), "\(termOutput)")
        #expect(try erm.read(erm.duty) == "0")
        #expect(try erm.read(erm.enable) == "0")
    }

    @Test("a forked child owns none of its parent's actuators: its exit or its SIGTERM leaves them driving", arguments: ["exit", "term"])
    func forkedChild(_ ending: String) throws {
        let erm = try ERMTree()
        let (killed, output) = try Self.run(erm.arguments(.kill, extra: ["--fork-child", ending]), in: erm.tree.root, label: "fork-\(ending)")
        #expect(killed == .signaled(SIGKILL), "\(output)")
        let expected = ending == "exit" ? "exit 0" : "signal \(SIGTERM)"
        #expect(output.contains("child ended: \(expected), duty still 50000"), "\(output)")
        // The parent's own death still stops it, through its supervisor.
        #expect(try erm.read(erm.duty) == "0")
        #expect(output.contains("ended without stopping \(erm.id); stopped it"), "\(output)")
    }

    @Test("a supervisor that refuses (another build's): the warning carries its reason")
    func refusingSupervisor() throws {
        let plugins = TestSupport.makeTemporaryDirectory("refusing-supervisor")
        defer { try? FileManager.default.removeItem(atPath: plugins) }
        try FileManager.default.copyItem(atPath: TestSupport.buildDirectory + "/libhaptics-gpio.so", toPath: plugins + "/libhaptics-gpio.so")
        // Answers on its socket (descriptor 3) as a supervisor of another table layout would.
        try TestSupport.writeExecutable(plugins + "/haptics-stop-guard", "#!/bin/sh\nprintf 'E table version %s, this supervisor knows version 0' \"$2\" >&3\n")
        let erm = try ERMTree()
        let (ending, output) = try Self.run(erm.arguments(.term, extra: ["--plugins", plugins]), in: erm.tree.root, label: "refused")
        #expect(ending == .signaled(SIGTERM), "\(output)")
        #expect(output.contains("stop guard: \(plugins)/haptics-stop-guard refused to supervise (table version 2, this supervisor knows version 0)"), "\(output)")
        #expect(output.contains("not when the process is killed with SIGKILL"), "\(output)")
        #expect(try erm.read(erm.duty) == "0")
    }

    @Test("the supervisor run by hand explains itself and refuses")
    func byHand() throws {
        let (status, output) = try TestSupport.run(TestSupport.buildDirectory + "/haptics-stop-guard", [])
        #expect(status == 2)
        #expect(output.contains("the haptics plugins start it"), "\(output)")
    }
}
