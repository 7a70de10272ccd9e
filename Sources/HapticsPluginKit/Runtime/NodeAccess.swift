#if canImport(Glibc)
import Glibc
#endif

/// The udev rule that grants the logged-in user a backend's device nodes, for the message that
/// names it when a node cannot be opened.
public struct UdevRule: Sendable {
    /// The rule file in the source tree: `Hardware/udev/70-haptics-gamepads.rules`.
    public var file: String
    /// Where it is installed: `/etc/udev/rules.d/70-haptics-gamepads.rules`.
    public var installedFile: String
    /// What it gives access to: `game controllers`.
    public var grants: String
    /// The `udevadm trigger` arguments that apply it to present devices: `--subsystem-match=hidraw`.
    public var trigger: String
    /// What else to say after the command: `then reconnect the controller (see Hardware/udev/README.md)`.
    public var afterword: String

    /// A rule.
    public init(file: String, installedFile: String, grants: String, trigger: String, afterword: String) {
        self.file = file
        self.installedFile = installedFile
        self.grants = grants
        self.trigger = trigger
        self.afterword = afterword
    }

    /// The message for a node the user may not open: the device, the node, the rule and the fix.
    public func permissionMessage(id: String, node: String, name: String) -> String {
        "\(id): permission denied opening \(node) (\(name)). "
            + "Install the udev rule that gives the logged-in user access to \(grants): "
            + "sudo install -m 0644 \(file) \(installedFile) && sudo udevadm control --reload-rules "
            + "&& sudo udevadm trigger \(trigger)\(afterword)"
    }

    /// The failure for an open of `node` (device `id`, a `noun` called `name`) that failed with
    /// `errno`: permission (with this rule), gone (the device was unplugged: `ENODEV`, which the
    /// host reports as lost), busy, or any other as an I/O error. `detail` is the library's own
    /// words for it (hidapi's), else `strerror`.
    public func openFailure(id: String, node: String, name: String, noun: String, errno code: Int32, detail: String? = nil) -> BackendFailure {
        let detail = detail ?? String(cString: strerror(code))
        switch code {
        case EACCES, EPERM:
            return BackendFailure(code: EACCES, permissionMessage(id: id, node: node, name: name))
        case ENOENT, ENODEV, ENXIO:
            return BackendFailure(code: ENODEV, "\(id): \(node) is gone (the \(noun) was unplugged): \(detail)")
        case EBUSY:
            return BackendFailure(code: EBUSY, "\(id): \(node) is busy: \(detail)")
        default:
            return BackendFailure(code: EIO, "\(id): cannot open \(node): \(detail)")
        }
    }

    /// The reason a listing gives for a node the user may not read and write (the
    /// ``permissionMessage(id:node:name:)``), checked with the effective ids without opening
    /// anything; nil when access is granted or fails for another reason (the open will say).
    public func deniedReason(id: String, node: String, name: String) -> String? {
        guard faccessat(AT_FDCWD, node, R_OK | W_OK, AT_EACCESS) != 0, errno == EACCES || errno == EPERM else { return nil }
        return permissionMessage(id: id, node: node, name: name)
    }

    /// Checks, with the effective ids and without opening anything, that the user may read and write
    /// `node`; the failure ``openFailure(id:node:name:noun:errno:detail:)`` gives if not.
    public func checkAccess(id: String, node: String, name: String, noun: String) throws(BackendFailure) {
        guard faccessat(AT_FDCWD, node, R_OK | W_OK, AT_EACCESS) != 0 else { return }
        let code = errno
        throw openFailure(id: id, node: node, name: name, noun: noun, errno: code)
    }
}
