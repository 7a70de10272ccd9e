import Glibc

/// Everything that can go wrong in the VM rig helpers, with the errno and the path involved.
public enum RigError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A system call on `path` failed with `errno` (`operation` names the call, e.g. "open").
    case system(operation: String, path: String, errno: Int32)
    /// `what` did not happen within `seconds`.
    case timeout(what: String, seconds: Double)
    /// A helper process (`command`) exited with `status`; `output` is what it printed.
    case process(command: String, status: Int32, output: String)
    /// A guest-only helper was used outside the VM rig.
    case notInsideVM(what: String)
    /// The VM cannot start on this machine; `reason` says why.
    case unavailable(reason: String)
    /// A HID report descriptor fixture is malformed or fails its length/crc32 check.
    case invalidDescriptor(path: String, reason: String)
    /// Something expected in sysfs/configfs (or elsewhere) is missing.
    case notFound(what: String)
    /// An argument is out of range or malformed.
    case invalidArgument(String)

    /// The current `errno` as a `.system` error.
    static func errno(_ operation: String, _ path: String) -> RigError {
        .system(operation: operation, path: path, errno: Glibc.errno)
    }

    /// A message naming the operation, the path and the errno text.
    public var description: String {
        switch self {
        case let .system(operation, path, code):
            return "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))"
        case let .timeout(what, seconds):
            return "timed out after \(seconds) s waiting for \(what)"
        case let .process(command, status, output):
            let tail = output.count > 2000 ? "…" + output.suffix(2000) : Substring(output)
            return "\(command) exited with status \(status)" + (tail.isEmpty ? "" : ":\n\(tail)")
        case let .notInsideVM(what):
            return "\(what) only works inside the VM rig (HAPTICS_VM_RIG=1); run it through Scripts/vm/run"
        case let .unavailable(reason):
            return "the VM rig cannot run here: \(reason)"
        case let .invalidDescriptor(path, reason):
            return "bad HID descriptor \(path): \(reason)"
        case let .notFound(what):
            return "not found: \(what)"
        case let .invalidArgument(text):
            return "invalid argument: \(text)"
        }
    }
}
