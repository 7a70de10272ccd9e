import Foundation
import Glibc
import Synchronization

/// What one VM boot produced.
public struct VMRunResult: Sendable {
    /// The guest script's exit status (124: the time limit was hit; 125: the VM itself failed).
    public var exitStatus: Int32
    /// The guest console: the script's stdout and stderr, kernel warnings, and the run
    /// script's own closing line.
    public var output: String
    /// Wall-clock time of the whole boot, run and power-off.
    public var duration: Duration
    /// The host directory the guest saw as `HAPTICS_VM_RESULTS` (`/run/results`).
    public var resultsDirectory: String
    /// Whether the time limit was hit.
    public var timedOut: Bool { exitStatus == 124 }
}

extension VMRig {
    /// Whether the host can boot the VM.
    public enum Availability: Sendable, Equatable {
        /// qemu is installed and the set-up (`Scripts/vm/setup`) is done.
        case ready
        /// qemu is installed but the set-up has not run yet: ``prepare()`` runs it.
        case needsSetup
        /// The VM cannot start here; the text says exactly why.
        case unavailable(String)
    }

    /// Whether the VM can start on this machine, and if not, why.
    ///
    /// `HAPTICS_VM_RIG_SKIP=1` in the environment makes it ``Availability/unavailable(_:)`` on purpose.
    public static var availability: Availability {
        if isInsideVM { return .unavailable("this process already runs inside the VM rig") }
        if environment("HAPTICS_VM_RIG_SKIP") == "1" { return .unavailable("HAPTICS_VM_RIG_SKIP=1 is set") }
        #if !arch(x86_64)
        return .unavailable("the rig boots an amd64 kernel with qemu-system-x86_64 (TCG); this host is not x86_64")
        #else
        guard findExecutable("qemu-system-x86_64") != nil else {
            return .unavailable(
                "qemu-system-x86_64 is not installed (run Scripts/vm/setup as root: it installs qemu-system-x86 and builds the rig)")
        }
        guard access(runScript, X_OK) == 0, access(setupScript, X_OK) == 0 else {
            return .unavailable("\(runScript) or \(setupScript) is missing or not executable")
        }
        let ready = ["stamp", "rig.env", "vmlinux", "initramfs.cpio"].allSatisfy {
            SysFS.exists(cacheDirectory + "/" + $0)
        }
        return ready ? .ready : .needsSetup
        #endif
    }

    /// Why the VM cannot start, or `nil` when it can (possibly after ``prepare()``).
    public static var unavailableReason: String? {
        if case .unavailable(let reason) = availability { return reason }
        return nil
    }

    private static let setupLock = Mutex<Duration?>(nil)

    /// Runs `Scripts/vm/setup` (idempotent and cached: well under a second when up to date) once
    /// per process and returns how long it took.
    ///
    /// - Throws: ``RigError/unavailable(reason:)`` if the VM cannot start here,
    ///   ``RigError/process(command:status:output:)`` if the set-up fails.
    @discardableResult
    public static func prepare() async throws -> Duration {
        if case .unavailable(let reason) = availability { throw RigError.unavailable(reason: reason) }
        return try await offThread {
            // Held for the whole set-up so that concurrent callers wait for one run.
            try setupLock.withLock { done in
                if let done { return done }
                let start = ContinuousClock.now
                let result = try runProcess(setupScript, [])
                guard result.status == 0 else {
                    throw RigError.process(command: setupScript, status: result.status, output: result.output)
                }
                let took = ContinuousClock.now - start
                done = took
                return took
            }
        }
    }

    /// Boots the VM and runs `script` (a shell script's text, run by `/bin/sh`) inside it as root.
    ///
    /// The script is written under `.vm-rig/runs/` (the guest mounts its own `/tmp`, so host
    /// files for the guest must live elsewhere) and sees the environment described in
    /// `Scripts/vm/README.md`: `HAPTICS_VM_RIG=1`, `HAPTICS_VM_RIG_ROOT`, `HAPTICS_VM_RESULTS`,
    /// HOME and XDG_* under `/tmp`, cwd = the package root. Runs ``prepare()`` first.
    ///
    /// - Parameters:
    ///   - script: shell commands.
    ///   - kernelArguments: extra kernel command-line words, e.g. `hid.ignore_special_drivers=1`.
    ///   - timeout: the VM is killed after this long (exit status 124).
    /// - Returns: the exit status, console output and duration; the results directory stays
    ///   on the host for the caller to read and remove.
    public static func run(
        script: String, kernelArguments: [String] = [], timeout: Duration = .seconds(300)
    ) async throws -> VMRunResult {
        try await prepare()
        let runDir = cacheDirectory + "/runs/" + uniqueName("run")
        let results = runDir + "/results"
        try FileManager.default.createDirectory(atPath: results, withIntermediateDirectories: true)
        let scriptPath = runDir + "/script.sh"
        let text = script.hasPrefix("#!") ? script : "#!/bin/sh\n" + script
        guard FileManager.default.createFile(
            atPath: scriptPath, contents: Data(text.utf8), attributes: [.posixPermissions: 0o755])
        else { throw RigError.errno("create", scriptPath) }

        var arguments = ["--timeout", String(Int(timeout.seconds.rounded(.up))), "--results", results,
                         "--cwd", packageRoot]
        for word in kernelArguments { arguments += ["--kernel-arg", word] }
        arguments += ["--", scriptPath]
        let start = ContinuousClock.now
        let runArguments = arguments
        let result = try await offThread { try runProcess(runScript, runArguments) }
        let took = ContinuousClock.now - start
        try? FileManager.default.removeItem(atPath: scriptPath)
        return VMRunResult(exitStatus: result.status, output: result.output, duration: took, resultsDirectory: results)
    }

    /// The Swift Testing `--filter` that selects the guest-side suites: everything nested in
    /// the parent suite `GuestKernelTests` of the `HapticsTests` target.
    public static let guestSuiteFilter = #"^HapticsTests\.GuestKernelTests(/|$)"#

    /// The `--filter` of the guest-side suites that need the guest to themselves: everything nested
    /// in `GuestExclusiveKernelTests` (CPU-heavy child processes that would upset the timing of the
    /// other suites, whose own figures need a quiet machine). They run after the others, alone.
    public static let exclusiveGuestSuiteFilter = #"^HapticsTests\.GuestExclusiveKernelTests(/|$)"#

    /// The `--filter` of the guest-side suites that measure in real time for a minute or more:
    /// everything nested in the parent suite `GuestRealtimeKernelTests`. They run last, alone.
    public static let realtimeGuestSuiteFilter = #"^HapticsTests\.GuestRealtimeKernelTests(/|$)"#

    /// Boots the VM and runs this test binary (`/proc/self/exe`) inside it with Swift Testing,
    /// once per filter, one pass after the other, writing their event streams into the results
    /// share; returns what the guest tests reported (every pass together).
    ///
    /// - Parameters:
    ///   - filters: Swift Testing `--filter` regular expressions, one pass each (default
    ///     ``guestSuiteFilter``, then ``exclusiveGuestSuiteFilter``, then ``realtimeGuestSuiteFilter``).
    ///   - kernelArguments: extra kernel command-line words.
    ///   - preparation: shell lines run in the guest before the tests (e.g. `modprobe`s; they
    ///     can use `$HAPTICS_VM_RIG_ROOT`).
    ///   - timeout: the VM is killed after this long.
    public static func runGuestTests(
        filters: [String] = [guestSuiteFilter, exclusiveGuestSuiteFilter, realtimeGuestSuiteFilter], kernelArguments: [String] = [], preparation: [String] = [],
        timeout: Duration = .seconds(300)
    ) async throws -> GuestTestReport {
        let binary = try SysFS.readLink("/proc/self/exe")
        // The guest mounts its own /tmp, /run, /dev, /proc and /sys; its /init binds the package back
        // when it lies under /tmp or /run, so only a binary outside the package there is invisible.
        for hidden in ["/tmp/", "/run/", "/dev/", "/proc/", "/sys/"] where binary.hasPrefix(hidden) && !binary.hasPrefix(packageRoot + "/") {
            throw RigError.unavailable(
                reason: "the test binary \(binary) is under \(hidden), which the guest mounts its own of; build inside the package")
        }
        // Every pass runs, whatever the one before did; the script exits with the first failure's status.
        let passes = filters.enumerated().map { index, filter in
            """
            \(shellQuote(binary)) --testing-library swift-testing --filter \(shellQuote(filter)) \
            --event-stream-output-path "$HAPTICS_VM_RESULTS/events-\(index + 1).jsonl" --event-stream-version 0 \
            --xunit-output "$HAPTICS_VM_RESULTS/xunit-\(index + 1).xml" || { code=$?; [ "$status" -ne 0 ] || status=$code; }
            """
        }
        let script = """
            #!/bin/sh
            # Written by VMRig.runGuestTests: runs the guest-side Swift Testing suites, one pass per filter.
            export NO_COLOR=1
            \(preparation.joined(separator: "\n"))
            status=0
            \(passes.joined(separator: "\n"))
            exit $status

            """
        let run = try await run(script: script, kernelArguments: kernelArguments, timeout: timeout)
        var eventData = Data()
        for index in filters.indices {
            eventData += (try? Data(contentsOf: URL(fileURLWithPath: run.resultsDirectory + "/events-\(index + 1).jsonl"))) ?? Data()
        }
        return GuestTestReport(run: run, eventStream: eventData, passes: filters.count)
    }

    /// Quotes `text` for `/bin/sh`.
    public static func shellQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Runs blocking work on its own thread so that a VM boot does not hold one of Swift
    /// concurrency's few cooperative threads for half a minute.
    static func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try body() })
            }
            thread.name = "vm-rig"
            thread.start()
        }
    }
}

/// What the guest-side Swift Testing run reported, parsed from its event stream
/// (`--event-stream-output-path`, version 0) in the results share.
public struct GuestTestReport: Sendable {
    /// One issue (failed expectation, thrown error, …) recorded by a guest test.
    public struct Issue: Sendable {
        /// The Swift Testing id of the test, e.g. `HapticsTests.GuestKernelTests/Smoke/uhid()/Smoke.swift:10:6`.
        public var testID: String
        /// The issue's messages as Swift Testing printed them (first: what failed; then details).
        public var messages: [String]
        /// Where the issue was recorded (the same source tree as the host's).
        public var fileID: String?
        /// Absolute path of the source file.
        public var filePath: String?
        /// Line of the issue.
        public var line: Int?
        /// Column of the issue.
        public var column: Int?
        /// Whether it was a known issue (`withKnownIssue`), which does not fail the run.
        public var isKnown: Bool
    }

    /// The VM run that produced this report.
    public var run: VMRunResult
    /// Every issue recorded in the guest.
    public var issues: [Issue] = []
    /// Test functions that ran to the end, by outcome.
    public var passed: [String] = []
    /// Test functions that failed.
    public var failed: [String] = []
    /// Test functions (or suites) skipped, e.g. by their `.enabled(if:)` condition, with the reason.
    public var skipped: [String] = []
    /// Whether the event streams hold the end of every pass's run (false: the guest crashed or timed out).
    public var runEnded = false

    /// Issues that fail the run (known issues excluded).
    public var failures: [Issue] { issues.filter { !$0.isKnown } }

    /// Whether everything passed: exit status 0, the run ended, no unknown issue, at least one test.
    public var succeeded: Bool {
        run.exitStatus == 0 && runEnded && failures.isEmpty && !(passed.isEmpty && failed.isEmpty)
    }

    /// A one-line summary, e.g. `4 passed, 0 failed, 1 skipped in the guest (exit 0, VM run 23.1 s)`.
    public var summary: String {
        "\(passed.count) passed, \(failed.count) failed, \(skipped.count) skipped in the guest "
            + "(exit \(run.exitStatus), VM run \(String(format: "%.1f", run.duration.seconds)) s)"
    }

    init(run: VMRunResult, eventStream: Data, passes: Int = 1) {
        self.run = run
        var functions = Set<String>()
        var ended = 0
        for line in eventStream.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard let record = try? JSONDecoder().decode(Record.self, from: Data(line)) else { continue }
            let payload = record.payload
            if record.kind == "test" {
                if payload.kind == "function", let id = payload.id { functions.insert(id) }
                continue
            }
            guard record.kind == "event" else { continue }
            let texts = (payload.messages ?? []).map(\.text)
            switch payload.kind {
            case "issueRecorded":
                let location = payload.issue?.sourceLocation
                issues.append(
                    Issue(
                        testID: payload.testID ?? "(no test)", messages: texts, fileID: location?.fileID,
                        filePath: location?._filePath, line: location?.line, column: location?.column,
                        isKnown: payload.issue?.isKnown ?? false))
            case "testEnded":
                guard let id = payload.testID, functions.contains(id) else { break }
                if payload.messages?.first?.symbol == "fail" { failed.append(id) } else { passed.append(id) }
            case "testSkipped":
                skipped.append((payload.testID ?? "?") + (texts.isEmpty ? "" : ": " + texts.joined(separator: " ")))
            case "runEnded":
                ended += 1
            default:
                break
            }
        }
        runEnded = ended >= passes
    }

    private struct Record: Decodable {
        var kind: String
        var payload: Payload
    }
    private struct Payload: Decodable {
        var kind: String?
        var id: String?
        var testID: String?
        var messages: [Message]?
        var issue: IssuePayload?
    }
    private struct Message: Decodable {
        var symbol: String?
        var text: String
    }
    private struct IssuePayload: Decodable {
        var isKnown: Bool?
        var sourceLocation: Location?
    }
    private struct Location: Decodable {
        var fileID: String?
        var _filePath: String?
        var line: Int?
        var column: Int?
    }
}
