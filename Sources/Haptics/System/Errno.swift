#if canImport(Glibc)
import Glibc
#endif
import CHapticsSystem

/// `strerror` text with the symbolic errno, e.g. `ENODEV (No such device)`.
func describeErrno(_ code: Int32) -> String {
    let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EIO: "EIO", EBADF: "EBADF", EAGAIN: "EAGAIN", ENOMEM: "ENOMEM",
        EACCES: "EACCES", EBUSY: "EBUSY", EEXIST: "EEXIST", ENODEV: "ENODEV", EINVAL: "EINVAL",
        ENOSPC: "ENOSPC", EPIPE: "EPIPE", ERANGE: "ERANGE", ENOSYS: "ENOSYS", ETIMEDOUT: "ETIMEDOUT",
        ENOTSUP: "ENOTSUP", ESHUTDOWN: "ESHUTDOWN",
    ]
    let text = String(cString: strerror(code))
    return names[code].map { "\($0) (\(text))" } ?? "errno \(code) (\(text))"
}

/// Reads the process environment (no Foundation needed) with `secure_getenv`: in a set-user-ID or
/// set-group-ID program (or one with file capabilities) every variable reads as unset, so the
/// invoking user cannot point the plugin search path, the backends' settings or the policy at
/// files of their choosing.
enum Environment {
    static func value(_ name: String) -> String? {
        haptics_secure_getenv(name).map { String(cString: $0) }
    }
}
