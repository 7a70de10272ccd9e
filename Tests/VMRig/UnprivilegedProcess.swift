import Foundation
import Glibc

/// Runs a program as an unprivileged user, for tests of what happens without root's privileges
/// (root ignores file permissions, so a permission check needs another user).
///
/// It uses util-linux's `setpriv`, which sets the real and effective user and group ids and drops
/// the supplementary groups before it executes the program; the environment is inherited.
///
/// ```swift
/// let result = try UnprivilegedProcess.run("/path/to/haptic-cal", ["list"])
/// #expect(result.status == 0)
/// ```
public enum UnprivilegedProcess {
    /// What the program did.
    public struct Result: Sendable {
        /// The exit status, or 128 + the signal number.
        public var status: Int32
        /// Standard output and standard error, interleaved.
        public var output: String
    }

    /// Runs `executable` with `arguments` as `user`:`group` (names or numbers) and waits for it.
    ///
    /// - Parameters:
    ///   - executable: an absolute path the user may execute.
    ///   - arguments: the arguments.
    ///   - user: the user (default `nobody`, uid 65534 on Debian).
    ///   - group: the group (default `nogroup`, gid 65534 on Debian).
    /// - Throws: ``RigError/notFound(what:)`` without `setpriv`, ``RigError/system(operation:path:errno:)``
    ///   if it cannot be started.
    public static func run(
        _ executable: String, _ arguments: [String], user: String = "nobody", group: String = "nogroup"
    ) throws -> Result {
        guard let setpriv = VMRig.findExecutable("setpriv") else {
            throw RigError.notFound(what: "setpriv (util-linux) on PATH")
        }
        let result = try VMRig.runProcess(
            setpriv, ["--reuid=\(user)", "--regid=\(group)", "--clear-groups", "--", executable] + arguments)
        return Result(status: result.status, output: result.output)
    }
}
