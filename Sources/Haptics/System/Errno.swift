#if canImport(Glibc)
import Glibc
#endif

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
