#if canImport(Glibc)
import Glibc
#endif
import HapticsBus

/// Who may change the settings that belong to everyone (`hapticsd --authorization`).
public enum AuthorizationMode: String, Sendable, CaseIterable {
    /// polkit on the system bus, nobody to ask elsewhere: the session bus admits only the user's own
    /// connections, and the settings on it are that user's.
    case auto
    /// Every caller whose user is not root or hapticsd's own asks polkit
    /// (`org.freedesktop.PolicyKit1`, on the bus hapticsd serves).
    case polkit
    /// Every caller may change every setting.
    case none
}

/// The polkit actions hapticsd checks (`dist/polkit-1/actions/org.swifthaptics.Haptics1.policy`).
public enum AuthorizationAction: String, Sendable {
    /// The global settings: `Enabled`, `IntensityScale`, `MinimumIntervals`, `DefaultDevice`, the
    /// feedbackd `Profile`.
    case setSettings = "org.swifthaptics.Haptics1.set-settings"
    /// Another user's app's settings (`SetAppPolicy` for an app id another user's connections use
    /// or set last).
    case setAppPolicy = "org.swifthaptics.Haptics1.set-app-policy"
    /// Live audio captured by the service to drive a device (`Listen`): the service opens a capture
    /// (a microphone, a sound server's monitor) its caller may not be allowed to open.
    case listen = "org.swifthaptics.Haptics1.listen"
}

/// Decides whether a caller may change a setting: its user is asked of dbus-daemon, root and
/// hapticsd's own user always may, others as polkit says (`CheckAuthorization` for the caller's bus
/// name, without interaction: the shipped defaults let the active local session through at once and
/// send everyone else to an administrator). Main thread only; polkit answers in milliseconds, and an
/// unreachable polkit is a refusal, never a pass.
struct Authorizer {
    let enabled: Bool
    let ownUser = getuid()

    init(mode: AuthorizationMode, bus: BusConnection.Address) {
        switch mode {
        case .polkit: enabled = true
        case .none: enabled = false
        case .auto:
            if case .system = bus { enabled = true } else { enabled = false }
        }
    }

    /// Whether `uid` is trusted without asking (root, or the user hapticsd runs as).
    func trusts(_ uid: UInt32) -> Bool { !enabled || uid == 0 || uid == ownUser }

    /// Throws `AccessDenied` unless `sender` (user `uid`) may do `action`.
    func check(_ action: AuthorizationAction, sender: String, uid: UInt32, on bus: BusConnection) throws(BusError) {
        guard !trusts(uid) else { return }
        let reply: BusMessage
        do {
            reply = try bus.call(
                destination: "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority", interface: "org.freedesktop.PolicyKit1.Authority",
                member: "CheckAuthorization", timeout: 5
            ) { writer throws(BusError) in
                try writer.append(.structure([.string("system-bus-name"), .dictionary([("name", .string(sender))])]))
                try writer.string(action.rawValue)
                try writer.append(.array(element: "{ss}", []))
                try writer.uint32(0)
                try writer.string("")
            }
        } catch {
            throw Self.denied(action, uid: uid, because: "polkit could not be asked (\(error.message))")
        }
        let answer = (try? reply.reader.value())?.unwrapped
        guard case .structure(let fields) = answer, let authorized = fields.first?.boolValue else {
            throw Self.denied(action, uid: uid, because: "polkit's answer was not understood")
        }
        guard authorized else { throw Self.denied(action, uid: uid, because: "polkit refused it") }
    }

    static func denied(_ action: AuthorizationAction, uid: UInt32, because reason: String) -> BusError {
        BusError(
            name: "org.freedesktop.DBus.Error.AccessDenied",
            message: "user \(uid) may not do \(action.rawValue): \(reason) (an administrator can allow it with a polkit rule; Docs/Daemon.md, Authorization)")
    }
}
