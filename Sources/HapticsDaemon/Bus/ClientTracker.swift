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
    func follow(_ message: BusMessage) {
        guard let sender = message.sender, clients[sender] == nil else { return }
        let client = Client(name: sender, tracker: self)
        var track: OpaquePointer?
        let created = sd_bus_track_new(bus.pointer, &track, { _, userdata in
            let client = Unmanaged<ClientTracker.Client>.fromOpaque(userdata!).takeUnretainedValue()
            client.tracker?.left(client.name)
            return 0
        }, Unmanaged.passUnretained(client).toOpaque())
        guard created >= 0, let track else { return }
        client.track = track
        clients[sender] = client
        if sd_bus_track_add_sender(track, message.pointer) < 0 {
            // The client is already gone: what it just started ends now.
            left(sender)
        }
    }

    private func left(_ name: String) {
        guard let client = clients.removeValue(forKey: name) else { return }
        onLeft?(name)
        // sd-bus holds its own reference to the track while it runs this handler.
        let track = client.track
        client.track = nil
        if let track { _ = sd_bus_track_unref(track) }
    }
}
