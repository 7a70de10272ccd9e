#if canImport(Glibc)
import Glibc
#endif
import CHapticsABI
import HapticsBus
import HapticsSupport
import Synchronization

/// Something the service said that the host hears after the lock is released.
enum ServiceEvent: Sendable {
    case ended(player: UInt64, reason: String)
    case device(event: UInt32, id: String)
}

/// One client's connection to hapticsd: the one owner of its `sd_bus`, used by every caller thread
/// and by a listener thread, one at a time, under one lock (sd-bus is not thread-safe).
///
/// A call takes the lock, sends the method call and waits for its reply (sd-bus reads and queues
/// any signal that arrives meanwhile), dispatches what was queued, and releases the lock; the
/// listener waits in `poll` without the lock and dispatches under it. Signals (a player ended, a
/// device came or went, the service left) are parsed under the lock into ``ServiceEvent``s and
/// handed to the host only after the lock is released, so a host callback may call back in.
final class ServiceConnection: @unchecked Sendable {
    // `link` holds the bus; everything else is immutable after `connect` or behind its own lock.
    private struct Link {
        var bus: BusConnection?
        var daemon = ""
    }

    private let link = Mutex<Link>(Link())
    private let pending = Mutex<[ServiceEvent]>([])
    private let wakeup: WakeupQueue
    private let stopping = Atomic<Bool>(false)
    private let listener = Mutex<PosixThread?>(nil)
    /// The service's unique name (signals from anyone else are ignored).
    private let daemonName = Mutex<String>("")
    let address: BusConnection.Address
    let appID: String
    private let deliver: @Sendable ([ServiceEvent]) -> Void
    /// How long a call waits for the service, in seconds: a stuck service must not hang the app.
    static let callTimeout = 5.0

    init(address: BusConnection.Address, appID: String, deliver: @escaping @Sendable ([ServiceEvent]) -> Void) throws(BusError) {
        self.address = address
        self.appID = appID
        self.deliver = deliver
        wakeup = try WakeupQueue()
    }

    /// Connects, finds (or activates) the service and starts listening for its signals.
    func connect() throws(BusError) -> (uniqueName: String, pid: UInt32, version: String) {
        let bus = try BusConnection(address, description: "haptics-client")
        bus.setMethodCallTimeout(Self.callTimeout)
        var owner = try bus.owner(of: HapticsServiceName.bus)
        if owner == nil, try Self.isActivatable(bus) {
            _ = try bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "StartServiceByName",
                timeout: 10
            ) { writer throws(BusError) in
                try writer.string(HapticsServiceName.bus)
                try writer.uint32(0)
            }
            owner = try bus.owner(of: HapticsServiceName.bus)
        }
        guard let owner else {
            throw BusError(name: StandardBusError.serviceUnknown, message: "no process owns \(HapticsServiceName.bus) on \(address), and it cannot be activated")
        }
        let pid = try bus.processID(of: owner)
        let version = try bus.call(
            destination: owner, path: HapticsServiceName.objectPath, interface: "org.freedesktop.DBus.Properties", member: "Get"
        ) { writer throws(BusError) in
            try writer.string(HapticsServiceName.interface)
            try writer.string("Version")
        }.reader.value().stringValue ?? ""
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let handler: BusMessageHandler = { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<ServiceConnection>.fromOpaque(userdata).takeUnretainedValue().received(BusMessage(retaining: message))
            return 0
        }
        // Ended is sent to this connection only; matched by path and interface (not by the
        // well-known sender, which a unicast does not carry), the sender checked on arrival.
        try bus.addMatch("type='signal',path='\(HapticsServiceName.objectPath)',interface='\(HapticsServiceName.interface)'", callback: handler, userdata: userdata)
        try bus.addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(HapticsServiceName.bus)'",
            callback: handler, userdata: userdata)
        daemonName.withLock { $0 = owner }
        link.withLock { link in
            link.bus = bus
            link.daemon = owner
        }
        let thread: PosixThread
        do {
            thread = try PosixThread.start(name: "haptics-client") { [self] in listen() }
        } catch {
            link.withLock { $0.bus = nil }
            throw BusError(name: "System.Error.EAGAIN", message: "\(error)")
        }
        listener.withLock { $0 = thread }
        return (owner, pid, version)
    }

    private static func isActivatable(_ bus: BusConnection) throws(BusError) -> Bool {
        let reply = try bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListActivatableNames")
        let reader = reply.reader
        return try reader.array("s") { () throws(BusError) in try reader.string() }.contains(HapticsServiceName.bus)
    }

    /// Stops listening and closes the connection (the service then stops what this client started).
    func close() {
        stopping.store(true, ordering: .releasing)
        wakeup.wake()
        listener.withLock { $0 }?.join()
        link.withLock { $0.bus = nil }
    }

    /// Calls `member` on `path` of the service and reads the reply with `read`, all under the lock.
    func call<T: Sendable>(
        path: String = HapticsServiceName.objectPath, interface: String = HapticsServiceName.interface, member: String,
        _ build: (BusWriter) throws(BusError) -> Void = { _ in }, read: (BusReader) throws(BusError) -> T
    ) throws(BusError) -> T {
        let result: Result<T, BusError> = link.withLock { link in
            guard let bus = link.bus, bus.isOpen else {
                return .failure(BusError(name: StandardBusError.disconnected, message: "the connection to hapticsd is closed"))
            }
            do throws(BusError) {
                let reply = try bus.call(destination: link.daemon, path: path, interface: interface, member: member, timeout: Self.callTimeout, build)
                let value = try read(reply.reader)
                while try bus.process() {}
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        flush()
        return try result.get()
    }

    /// Runs on the listener thread until ``close()``.
    private func listen() {
        while !stopping.load(ordering: .acquiring) {
            // sd-bus asks for no POLLIN while messages wait in its queue (its timeout is then "now"):
            // poll only as long as it says, or the queued messages would wait for the next call.
            let wait: (fd: Int32, events: Int16, timeout: UInt64?)? = link.withLock { link in
                guard let bus = link.bus, bus.isOpen else { return nil }
                return (bus.fileDescriptor, bus.events, bus.timeoutMicroseconds)
            }
            guard let wait else { return }
            var milliseconds: Int32 = -1
            if let deadline = wait.timeout {
                let now = Monotonic.now() / 1000
                milliseconds = deadline <= now ? 0 : Int32(clamping: (deadline - now + 999) / 1000)
            }
            var fds = [pollfd(fd: wait.fd, events: wait.events, revents: 0), pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, milliseconds)
            if fds[1].revents != 0 { wakeup.drain() }
            let open = link.withLock { link -> Bool in
                guard let bus = link.bus else { return false }
                do {
                    while try bus.process() {}
                } catch {
                    return false
                }
                return bus.isOpen
            }
            flush()
            if !open, !stopping.load(ordering: .acquiring) {
                pending.withLock { $0.append(.device(event: HAPTICS_CLIENT_DISCONNECTED.rawValue, id: "")) }
                flush()
                return
            }
        }
    }

    /// A signal arrived (under the lock): parsed into an event for the host.
    private func received(_ message: BusMessage) {
        let reader = message.reader
        let event: ServiceEvent?
        let member = message.member ?? ""
        guard member == "NameOwnerChanged" || message.sender == daemonName.withLock({ $0 }) else { return }
        switch member {
        case "Ended":
            guard let path = try? reader.objectPath(), let reason = try? reader.string() else { return }
            event = .ended(player: HapticsServiceName.playerID(fromPath: path) ?? 0, reason: reason)
        case "DeviceAdded":
            event = (try? reader.string()).map { .device(event: HAPTICS_CLIENT_DEVICE_ADDED.rawValue, id: $0) }
        case "DeviceRemoved":
            event = (try? reader.string()).map { .device(event: HAPTICS_CLIENT_DEVICE_REMOVED.rawValue, id: $0) }
        case "NameOwnerChanged":
            _ = try? reader.string()
            _ = try? reader.string()
            let newOwner = (try? reader.string()) ?? ""
            event = newOwner.isEmpty ? .device(event: HAPTICS_CLIENT_DISCONNECTED.rawValue, id: "") : nil
        default:
            event = nil
        }
        if let event { pending.withLock { $0.append(event) } }
    }

    /// Hands queued events to the host, outside the connection's lock.
    private func flush() {
        let events = pending.withLock { events in
            defer { events.removeAll() }
            return events
        }
        if !events.isEmpty { deliver(events) }
    }
}

