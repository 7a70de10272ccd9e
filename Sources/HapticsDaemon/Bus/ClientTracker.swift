import HapticsBus

/// Follows the clients that started something (a player, a feedbackd event) with `sd_bus_track`:
/// when a client leaves the bus (it exits, crashes, is killed), the bus says so and
/// ``onLeft`` runs at once, so what the client started is stopped. Nothing is guessed from
/// timeouts. Main thread only.
final class ClientTracker {
    private let bus: BusConnection
    private var clients: [String: BusPeerTrack] = [:]
    /// Called on the main thread with the unique name of a client that left the bus.
    var onLeft: ((String) -> Void)?

    init(bus: BusConnection) {
        self.bus = bus
    }

    /// How many clients are followed.
    var count: Int { clients.count }

    /// Follows the sender of `message` (once per client).
    ///
    /// A client may leave between sending a call and this first contact, before the track's match
    /// for its name reaches dbus-daemon, and then no NameOwnerChanged would ever come. So the first
    /// contact also asks dbus-daemon, after that match, whether the name still has an owner
    /// (asynchronously: the service never waits on the bus); if not, the client is treated as gone.
    /// - Returns: false when the client is known to be gone already.
    @discardableResult
    func follow(_ message: BusMessage) -> Bool {
        guard let sender = message.sender else { return true }
        guard clients[sender] == nil else { return true }
        let track: BusPeerTrack
        do {
            track = try BusPeerTrack(bus: bus) { [weak self] in self?.left(sender) }
        } catch {
            return true
        }
        clients[sender] = track
        do {
            try track.add(senderOf: message)
        } catch {
            left(sender)
            return false
        }
        do {
            let query = try bus.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner"
            ) { writer throws(BusError) in try writer.string(sender) }
            try bus.callAsync(query) { [weak self] reply in
                if case .failure = reply { self?.left(sender) }
            }
        } catch {
            // Without the check the track still reports a departure that happens from now on.
        }
        return true
    }

    /// Forgets `name` and says it left (once: a later call finds nothing to forget).
    private func left(_ name: String) {
        guard let track = clients.removeValue(forKey: name) else { return }
        track.stop()
        onLeft?(name)
    }
}
