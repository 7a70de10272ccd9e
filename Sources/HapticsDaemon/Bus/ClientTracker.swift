import CSystemd
import HapticsBus

/// Follows the clients that started something (a player, a feedbackd event) with `sd_bus_track`:
/// when a client leaves the bus (it exits, crashes, is killed), the bus says so and
/// ``onLeft`` runs at once, so what the client started is stopped. Nothing is guessed from
/// timeouts. Main thread only.
final class ClientTracker {
    /// One tracked client: the handler's way back to its name.
    final class Client {
        let name: String
        weak var tracker: ClientTracker?
        var track: OpaquePointer?
        init(name: String, tracker: ClientTracker) {
            self.name = name
            self.tracker = tracker
        }
    }

    private let bus: BusConnection
    private var clients: [String: Client] = [:]
    /// Called on the main thread with the unique name of a client that left the bus.
    var onLeft: ((String) -> Void)?

    init(bus: BusConnection) {
        self.bus = bus
    }

    deinit {
        for client in clients.values { client.track.map { _ = sd_bus_track_unref($0) } }
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
        let client = Client(name: sender, tracker: self)
        var track: OpaquePointer?
        let created = sd_bus_track_new(bus.pointer, &track, { _, userdata in
            let client = Unmanaged<ClientTracker.Client>.fromOpaque(userdata!).takeUnretainedValue()
            client.tracker?.left(client.name)
            return 0
        }, Unmanaged.passUnretained(client).toOpaque())
        guard created >= 0, let track else { return true }
        client.track = track
        clients[sender] = client
        guard sd_bus_track_add_sender(track, message.pointer) >= 0 else {
            left(sender)
            return false
        }
        do {
            let query = try bus.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner"
            ) { writer throws(BusError) in try writer.string(sender) }
            try bus.callAsync(query, callback: { reply, userdata, _ in
                let client = Unmanaged<ClientTracker.Client>.fromOpaque(userdata!).takeRetainedValue()
                if let reply, sd_bus_message_is_method_error(reply, nil) > 0 { client.tracker?.left(client.name) }
                return 0
            }, userdata: Unmanaged.passRetained(client).toOpaque())
        } catch {
            // Without the check the track still reports a departure that happens from now on.
        }
        return true
    }

    private func left(_ name: String) {
        guard let client = clients.removeValue(forKey: name), client.track != nil else { return }
        onLeft?(name)
        // sd-bus holds its own reference to the track while it runs this handler.
        let track = client.track
        client.track = nil
        if let track { _ = sd_bus_track_unref(track) }
    }
}
