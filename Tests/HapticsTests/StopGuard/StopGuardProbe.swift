import Foundation
import Testing
import VMRig

#if canImport(Glibc)
import Glibc
#endif

/// The ways `haptics-crash-probe` dies (its first argument), and what it must die of.
enum ProbeDeath: String, CaseIterable, Sendable, CustomStringConvertible {
    case kill, segv, abort, trap, hup, pipe, term, int, overflow, exit

    /// How the probe process must end.
    var ending: ChildProcess.Ending {
        switch self {
        case .kill: .signaled(SIGKILL)
        case .segv, .overflow: .signaled(SIGSEGV)
        case .abort: .signaled(SIGABRT)
        case .trap:
            // A Swift runtime trap: `ud2` on x86_64, `brk` on arm64.
            #if arch(x86_64)
            .signaled(SIGILL)
            #else
            .signaled(SIGTRAP)
            #endif
        case .hup: .signaled(SIGHUP)
        case .pipe: .signaled(SIGPIPE)
        case .term: .signaled(SIGTERM)
        case .int: .signaled(SIGINT)
        case .exit: .exited(0)
        }
    }

    /// Who stops the actuators: the process itself (its handler or atexit), or only the supervisor.
    var stoppedInProcess: Bool { self != .kill }

    var description: String {
        switch self {
        case .kill: "SIGKILL"
        case .segv: "SIGSEGV (null pointer)"
        case .abort: "SIGABRT (abort)"
        case .trap: "Swift trap (fatalError)"
        case .hup: "SIGHUP"
        case .pipe: "SIGPIPE (write to a closed pipe)"
        case .term: "SIGTERM"
        case .int: "SIGINT"
        case .overflow: "SIGSEGV (stack overflow)"
        case .exit: "exit(0) without closing"
        }
    }
}

/// Runs the probe and reads what it said.
enum CrashProbe {
    static var path: String { TestSupport.buildDirectory + "/haptics-crash-probe" }

    /// The `CLOCK_MONOTONIC` time the probe printed right before it died.
    static func deathTime(_ output: String) -> UInt64? {
        output.split(separator: "\n").first { $0.hasPrefix("dying ") }.flatMap { UInt64($0.dropFirst("dying ".count)) }
    }

    /// The stop-guard supervisors watching process `pid` (from /proc: `haptics-stop-guard --supervise VERSION PID`).
    static func supervisors(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let candidate = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard words.count == 4, words[0].hasSuffix("/haptics-stop-guard"), words[1] == "--supervise", words[3] == String(pid) else { return nil }
            return candidate
        }
    }
}

/// Milliseconds between two `CLOCK_MONOTONIC` nanosecond times (negative when `to` is earlier).
func milliseconds(from: UInt64, to: UInt64) -> Double {
    Double(Int64(bitPattern: to &- from)) / 1e6
}
