#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// A D-Bus error: its name (`org.swifthaptics.Haptics1.Error.UnknownEffect`,
/// `org.freedesktop.DBus.Error.ServiceUnknown`, `System.Error.ENOENT`) and a message a person can act on.
///
/// The one error type of this module: a failed sd-bus call becomes the `System.Error.E…` name sd-bus
/// itself uses for errno values, so callers match errors by name whatever their origin.
public struct BusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name.
    public var name: String
    /// What went wrong and, where there is one, the fix.
    public var message: String

    /// An error named `name`.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// The failure of `operation` with the negative errno `code` an sd-bus call returned.
    public static func system(_ operation: String, code: Int32) -> BusError {
        let errno = code < 0 ? -code : code
        return BusError(name: "System.Error.\(errnoName(errno))", message: "\(operation): \(String(cString: strerror(errno)))")
    }

    /// The errno value behind a `System.Error.E…` name, else nil.
    public var errno: Int32? {
        guard name.hasPrefix("System.Error.") else { return nil }
        let symbol = name.dropFirst("System.Error.".count)
        return Self.knownErrnos.first { $0.value == symbol }?.key
    }

    public var description: String { "\(name): \(message)" }

    /// Copies and frees an `sd_bus_error` that an sd-bus call filled; `code` is the call's return value.
    static func take(_ error: inout sd_bus_error, code: Int32, operation: String) -> BusError {
        defer { sd_bus_error_free(&error) }
        if let name = error.name {
            return BusError(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? "")
        }
        return system(operation, code: code)
    }

    private static let knownErrnos: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EIO: "EIO", EBADF: "EBADF", ENOMEM: "ENOMEM", EACCES: "EACCES", EBUSY: "EBUSY",
        EEXIST: "EEXIST", ENODEV: "ENODEV", EINVAL: "EINVAL", ENOSPC: "ENOSPC", EPIPE: "EPIPE", ETIMEDOUT: "ETIMEDOUT",
        ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET", ENOTCONN: "ENOTCONN", ENXIO: "ENXIO", ESRCH: "ESRCH",
        EHOSTDOWN: "EHOSTDOWN", ENOMEDIUM: "ENOMEDIUM", EBADMSG: "EBADMSG", ENOTSUP: "ENOTSUP", ESHUTDOWN: "ESHUTDOWN",
        ELOOP: "ELOOP", ENAMETOOLONG: "ENAMETOOLONG", ENOBUFS: "ENOBUFS", ECHILD: "ECHILD", EAGAIN: "EAGAIN",
    ]

    private static func errnoName(_ errno: Int32) -> String {
        knownErrnos[errno] ?? "E\(errno)"
    }
}

/// Standard D-Bus error names this project uses.
public enum StandardBusError {
    /// Arguments of the wrong type or shape (sd-bus also sends it when a signature does not match).
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    /// The name has no owner and cannot be activated.
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// The name has no owner.
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    /// The peer did not answer in time.
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    /// The peer left the bus.
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
}
