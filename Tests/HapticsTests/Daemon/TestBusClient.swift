import CSystemd
import Haptics
import HapticsBus
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus client in the test process (sd-bus through HapticsBus): one connection that makes
/// several calls (players are the connection's own) and collects the signals it receives,
/// unicast ones (`Ended`) included.
final class TestBusClient {
    let bus: BusConnection
    /// Signals received, in order: member, path, arguments, and when this client processed it.
    private(set) var signals: [(member: String, path: String, arguments: [BusValue], received: HapticInstant)] = []

    init(address: String) throws {
        bus = try BusConnection(.address(address), description: "test-client")
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        try bus.addMatch("type='signal'", callback: { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let client = Unmanaged<TestBusClient>.fromOpaque(userdata).takeUnretainedValue()
            let received = BusMessage(retaining: message)
            var arguments: [BusValue] = []
            let reader = received.reader
            while (try? reader.hasMore()) == true, let value = try? reader.value() { arguments.append(value) }
            client.signals.append((received.member ?? "", received.path ?? "", arguments, .monotonicNow()))
            return 0
        }, userdata: userdata)
    }

    /// This connection's unique name.
    var uniqueName: String { bus.uniqueName }

    /// Calls `member` and returns the reply's values, waiting at most `timeout` seconds for the reply.
    @discardableResult
    func call(
        _ member: String, _ arguments: [BusValue] = [], path: String = "/org/swifthaptics/Haptics1", interface: String = "org.swifthaptics.Haptics1",
        destination: String = "org.swifthaptics.Haptics1", timeout: Double = 10
    ) throws(BusError) -> [BusValue] {
        let reply = try bus.call(destination: destination, path: path, interface: interface, member: member, timeout: timeout) { writer throws(BusError) in
            for argument in arguments { try writer.append(argument) }
        }
        var values: [BusValue] = []
        let reader = reply.reader
        while try reader.hasMore() { values.append(try reader.value()) }
        pump(for: 0)
        return values
    }

    /// Calls a player method.
    @discardableResult
    func player(_ path: String, _ member: String, _ arguments: [BusValue] = []) throws(BusError) -> [BusValue] {
        try call(member, arguments, path: path, interface: "org.swifthaptics.Haptics1.Player")
    }

    /// Sets a player property.
    func setPlayer(_ path: String, _ name: String, _ value: BusValue) throws(BusError) {
        try call(
            "Set", [.string("org.swifthaptics.Haptics1.Player"), .string(name), .variant(value)], path: path, interface: "org.freedesktop.DBus.Properties")
    }

    /// Reads a property.
    func get(_ name: String, path: String = "/org/swifthaptics/Haptics1", interface: String = "org.swifthaptics.Haptics1") throws(BusError) -> BusValue {
        try call("Get", [.string(interface), .string(name)], path: path, interface: "org.freedesktop.DBus.Properties")[0].unwrapped
    }

    /// Processes what arrived for `seconds`.
    func pump(for seconds: Double) {
        let deadline = Monotonic.now() + UInt64(max(seconds, 0) * 1e9)
        repeat {
            while (try? bus.process()) == true {}
            let now = Monotonic.now()
            guard now < deadline else { return }
            var fds = pollfd(fd: bus.fileDescriptor, events: bus.events, revents: 0)
            var timeout = Int32((deadline - now) / 1_000_000) + 1
            if let due = bus.timeoutMicroseconds { timeout = min(timeout, due <= now / 1000 ? 0 : Int32(clamping: (due - now / 1000) / 1000 + 1)) }
            _ = poll(&fds, 1, timeout)
        } while true
    }

    /// Waits (at most `timeout` seconds) for a signal `member` whose arguments satisfy `condition`.
    func waitForSignal(_ member: String, timeout: Double = 10, where condition: ([BusValue]) -> Bool = { _ in true }) -> [BusValue]? {
        receivedSignal(member, timeout: timeout, where: condition)?.arguments
    }

    /// Like ``waitForSignal(_:timeout:where:)``, with the time the signal was processed.
    func receivedSignal(_ member: String, timeout: Double = 10, where condition: ([BusValue]) -> Bool = { _ in true }) -> (arguments: [BusValue], received: HapticInstant)? {
        let deadline = Monotonic.now() + UInt64(timeout * 1e9)
        while true {
            if let found = signals.first(where: { $0.member == member && condition($0.arguments) }) { return (found.arguments, found.received) }
            guard Monotonic.now() < deadline else { return nil }
            pump(for: 0.002)
        }
    }

    /// Forgets the signals received so far.
    func clearSignals() {
        signals.removeAll()
    }
}

extension BusValue {
    /// Whether this is a PropertiesChanged's list of invalidated names (`as`) holding `name`.
    func invalidates(_ name: String) -> Bool {
        if case .array(_, let names) = unwrapped { return names.contains(.string(name)) }
        return false
    }

    /// The `a{sv}` entries held, else empty.
    var entries: [(key: String, value: BusValue)] {
        if case .dictionary(let entries) = unwrapped { return entries }
        return []
    }
}
