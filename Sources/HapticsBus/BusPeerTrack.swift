import CSystemd

/// Follows peers of a connection with `sd_bus_track`: ``onLeft`` runs once, on the thread that
/// processes the connection, when the last peer added leaves the bus (it exits, crashes, is
/// killed). The bus says so; nothing is guessed from timeouts. Owns the track: ``stop()`` or
/// releasing it stops following, and ``onLeft`` then never runs.
public final class BusPeerTrack {
    private var track: OpaquePointer?
    private var onLeft: (() -> Void)?

    /// A track on `bus` that calls `onLeft` once its peers have left.
    ///
    /// - Throws: the system error of `sd_bus_track_new` (out of memory).
    public init(bus: BusConnection, onLeft: @escaping () -> Void) throws(BusError) {
        self.onLeft = onLeft
        var track: OpaquePointer?
        let created = sd_bus_track_new(bus.pointer, &track, { _, userdata in
            guard let userdata else { return 0 }
            // Kept alive through its handler, which may drop the last other reference to it.
            let track = Unmanaged<BusPeerTrack>.fromOpaque(userdata).takeUnretainedValue()
            withExtendedLifetime(track) { track.left() }
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        guard created >= 0, let track else { throw .system("sd_bus_track_new", code: created) }
        self.track = track
    }

    deinit { stop() }

    /// Follows the sender of `message`.
    ///
    /// - Throws: the system error of `sd_bus_track_add_sender` (the sender has already left, or
    ///   the match for it could not be added).
    public func add(senderOf message: BusMessage) throws(BusError) {
        guard let track else { return }
        let added = sd_bus_track_add_sender(track, message.pointer)
        guard added >= 0 else { throw .system("sd_bus_track_add_sender", code: added) }
    }

    /// Stops following; ``onLeft`` will not run.
    public func stop() {
        onLeft = nil
        guard let track else { return }
        self.track = nil
        // Inside the track's own handler sd-bus holds a reference of its own while it runs.
        sd_bus_track_unref(track)
    }

    private func left() {
        let handler = onLeft
        stop()
        handler?()
    }
}

extension BusConnection {
    /// Sends `call` without waiting: `reply` runs with the reply (or the error the peer or sd-bus
    /// gave, such as a timeout after `timeout` seconds; 0: sd-bus's default, 25 s) on the thread
    /// that processes the connection.
    public func callAsync(_ call: BusMessage, timeout: Double = 0, reply: @escaping (Result<BusMessage, BusError>) -> Void) throws(BusError) {
        final class Pending {
            let reply: (Result<BusMessage, BusError>) -> Void
            init(_ reply: @escaping (Result<BusMessage, BusError>) -> Void) { self.reply = reply }
        }
        let pending = Unmanaged.passRetained(Pending(reply))
        let rc = sd_bus_call_async(pointer, nil, call.pointer, { message, userdata, _ in
            guard let userdata else { return 0 }
            let pending = Unmanaged<Pending>.fromOpaque(userdata).takeRetainedValue()
            guard let message else {
                pending.reply(.failure(BusError(name: "System.Error.EIO", message: "no reply")))
                return 0
            }
            if let error = sd_bus_message_get_error(message), sd_bus_error_is_set(error) > 0 {
                let name = error.pointee.name.map { String(cString: $0) } ?? "System.Error.EIO"
                pending.reply(.failure(BusError(name: name, message: error.pointee.message.map { String(cString: $0) } ?? "")))
            } else {
                pending.reply(.success(BusMessage(retaining: message)))
            }
            return 0
        }, pending.toOpaque(), timeout > 0 ? UInt64(timeout * 1e6) : 0)
        guard rc >= 0 else {
            pending.release()
            throw .system("calling \(call.member ?? "?")", code: rc)
        }
    }
}
