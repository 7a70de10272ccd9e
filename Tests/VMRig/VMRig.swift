import CVMRig
import Foundation
import Glibc
import Synchronization

/// The kernel VM rig: real `uhid`, `gpio-sim` and PWM devices for tests, inside a small VM that
/// runs Debian's own kernel with this machine's root file system shared read-only.
///
/// Two sides use this type:
/// - **Host side** (a normal `swift test`): ``availability``, ``prepare()``, ``run(script:kernelArguments:timeout:)``
///   and ``runGuestTests(filters:kernelArguments:preparation:timeout:)`` boot the VM through
///   `Scripts/vm/run` and run commands or the test binary itself inside it.
/// - **Guest side** (code running inside the VM): ``isInsideVM``, ``loadKernelModule(_:)`` and the
///   device helpers ``UHIDDevice``, ``GPIOSim`` and ``PWMSim``.
///
/// See `Scripts/vm/README.md` for the whole picture.
public enum VMRig {
    // MARK: Paths

    /// The package root (the folder holding `Package.swift`), derived from this file's path.
    public static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // VMRig.swift, VMRig/, Tests/
        return url.path
    }()

    /// The rig's cache folder, `<package>/.vm-rig` (ignored by git; made by `Scripts/vm/setup`).
    public static var cacheDirectory: String { packageRoot + "/.vm-rig" }

    /// `Scripts/vm/setup` in this package.
    public static var setupScript: String { packageRoot + "/Scripts/vm/setup" }

    /// `Scripts/vm/run` in this package.
    public static var runScript: String { packageRoot + "/Scripts/vm/run" }

    /// The folder holding the HID descriptor fixtures, `Tests/Fixtures/hid-descriptors`.
    public static var descriptorFixtures: String { packageRoot + "/Tests/Fixtures/hid-descriptors" }

    // MARK: Guest side

    /// Puts the calling thread at `SCHED_FIFO` priority 30, above every real-time thread of the code
    /// under test (its highest is 21): for the threads that stand in for a device and its hardware
    /// (a uinput driver, a sensor), which must act when the hardware would, however busy the code
    /// under test keeps the guest's one CPU. Returns whether it took effect (root or `CAP_SYS_NICE`).
    @discardableResult
    public static func requestRealtimeForCurrentThread() -> Bool {
        var parameters = sched_param(sched_priority: 30)
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
    }

    /// Whether this process runs inside the VM rig (`HAPTICS_VM_RIG=1`, set by the rig's `/init`).
    public static var isInsideVM: Bool { environment("HAPTICS_VM_RIG") == "1" }

    /// Inside the VM: the extracted Debian kernel tree that `modprobe -d` uses
    /// (`HAPTICS_VM_RIG_ROOT`), or `nil` outside.
    public static var kernelTreeRoot: String? { environment("HAPTICS_VM_RIG_ROOT") }

    /// Inside the VM: the writable results share (`HAPTICS_VM_RESULTS`, `/run/results`), whose
    /// files appear in the host directory given to `Scripts/vm/run --results`; `nil` outside.
    public static var resultsDirectory: String? { environment("HAPTICS_VM_RESULTS") }

    /// The running kernel's command line (`/proc/cmdline`), split into words.
    public static var kernelCommandLine: [String] {
        ((try? SysFS.read("/proc/cmdline")) ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
    }

    /// Whether the HID core ignores the special drivers (`hid.ignore_special_drivers=1`), so that
    /// `hid-generic` takes every device. Read from the loaded `hid` module, else the command line.
    public static var ignoresSpecialHIDDrivers: Bool {
        if let value = try? SysFS.value("/sys/module/hid/parameters/ignore_special_drivers") {
            return value == "Y" || value == "1"
        }
        return kernelCommandLine.contains { $0 == "hid.ignore_special_drivers=1" || $0 == "hid.ignore_special_drivers=Y" }
    }

    private static let loadedModules = Mutex<Set<String>>([])

    /// Loads kernel module `name` (and what it depends on) from the rig's kernel tree with
    /// `modprobe -d`. Idempotent: returns at once if the module is already loaded or built in.
    ///
    /// - Parameters:
    ///   - name: the module name (`uhid`, `hid_playstation`, `gpio-sim`, `pwm-sim`, …).
    ///   - parameters: module parameters such as `"channels=8"` (used only when it loads now).
    /// - Throws: ``RigError/notInsideVM(what:)`` outside the VM, ``RigError/process(command:status:output:)``
    ///   when modprobe fails.
    public static func loadKernelModule(_ name: String, parameters: [String] = []) throws {
        let canonical = name.replacingOccurrences(of: "-", with: "_")
        if loadedModules.withLock({ $0.contains(canonical) }) { return }
        guard isInsideVM, let root = kernelTreeRoot else {
            throw RigError.notInsideVM(what: "loadKernelModule(\(name))")
        }
        if !SysFS.exists("/sys/module/\(canonical)") {
            let arguments = ["-d", root, name] + parameters
            let result = try runProcess(findExecutable("modprobe") ?? "/sbin/modprobe", arguments)
            // A concurrent load of the same module may have won the race: that is fine.
            if result.status != 0 && !SysFS.exists("/sys/module/\(canonical)") {
                throw RigError.process(
                    command: "modprobe " + arguments.joined(separator: " "), status: result.status,
                    output: result.output)
            }
        }
        loadedModules.withLock { _ = $0.insert(canonical) }
    }

    /// Whether kernel module `name` is loaded (or built in with parameters): `/sys/module/<name>`.
    public static func isKernelModuleLoaded(_ name: String) -> Bool {
        SysFS.exists("/sys/module/" + name.replacingOccurrences(of: "-", with: "_"))
    }

    /// The kernel log (`dmesg`), for diagnostics; empty if it cannot be read.
    public static func kernelLog() -> String {
        (try? runProcess(findExecutable("dmesg") ?? "/bin/dmesg", []).output) ?? ""
    }

    // MARK: Helpers

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// A process-wide counter for unique names (device names, configfs objects, scripts).
    static let serial = Atomic<Int>(0)

    /// A name unique in this machine: `<prefix>-<pid>-<n>`.
    static func uniqueName(_ prefix: String) -> String {
        let n = serial.add(1, ordering: .relaxed).newValue
        return "\(prefix)-\(getpid())-\(n)"
    }

    /// Runs `executable` with `arguments` (posix_spawn; stdin /dev/null), stdout and stderr
    /// captured together, and waits for it. The status is the exit code, or 128 + the signal.
    static func runProcess(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> (status: Int32, output: String) {
        var fds: [Int32] = [-1, -1]
        let piped = cvmrig_pipe_cloexec(&fds)
        guard piped == 0 else { throw RigError.system(operation: "pipe2 for", path: executable, errno: -piped) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)

        var env = ProcessInfo.processInfo.environment
        if let environment { env.merge(environment) { $1 } }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(fds[1])
        guard spawned == 0 else {
            close(fds[0])
            throw RigError.system(operation: "posix_spawn", path: executable, errno: spawned)
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n > 0 { output.append(contentsOf: chunk[0..<n]); continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        close(fds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw RigError.errno("waitpid for", executable) }
        }
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (code, String(decoding: output, as: UTF8.self))
    }

    /// Whether an executable named `name` is on `PATH` (or in /usr/sbin, /sbin).
    static func findExecutable(_ name: String) -> String? {
        let path = (environment("PATH") ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
