import Haptics

/// The overuse guard per application and device: feedback of one kind from one app on one device
/// is kept ``HapticPolicy/minimumInterval(for:)`` apart (coalesced, the newest winning), exactly
/// as ``OveruseGuard`` does in-process, so one app's sweep over fifty detents neither floods the
/// device nor delays another app's feedback, which has its own guard. Main thread only.
struct OveruseGuards {
    private var guards: [String: OveruseGuard] = [:]
    /// The handle of the play waiting in each guard, by guard key and kind.
    private var waiting: [String: UInt64] = [:]

    static func key(app: String, device: String) -> String { app + "\u{0}" + device }

    /// The guard of `app` on `device`.
    mutating func guardFor(app: String, device: String) -> OveruseGuard {
        let key = Self.key(app: app, device: device)
        if let existing = guards[key] { return existing }
        let created = OveruseGuard()
        guards[key] = created
        return created
    }

    /// Remembers that the play `id` waits in the guard of `app` on `device` for `kind`.
    mutating func setWaiting(_ id: UInt64?, app: String, device: String, kind: String) {
        waiting[Self.key(app: app, device: device) + "\u{0}" + kind] = id
    }

    /// The play waiting in the guard of `app` on `device` for `kind`.
    func waiting(app: String, device: String, kind: String) -> UInt64? {
        waiting[Self.key(app: app, device: device) + "\u{0}" + kind]
    }

    /// Drops every guard of `app` (its last client left).
    mutating func forget(app: String) {
        let prefix = app + "\u{0}"
        guards = guards.filter { !$0.key.hasPrefix(prefix) }
        waiting = waiting.filter { !$0.key.hasPrefix(prefix) }
    }

    /// How many guards exist (statistics: must not grow with the number of calls).
    var count: Int { guards.count }
}
