#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// A C function sd-bus calls with a message and the `userdata` it was registered with (a match, an
/// asynchronous call's reply): return 0 to let other handlers see the message, a negative errno to
/// fail it. Named here so modules above the bus need not import sd-bus's C headers.
public typealias BusMessageHandler = sd_bus_message_handler_t

/// One connection to a message bus: the one owner of an `sd_bus`, flushed and closed exactly once.
///
/// sd-bus is not thread-safe: a connection is used by one thread at a time. hapticsd uses its
/// connection only on its main thread (the event loop); the client plugin serialises every use of
/// its connection under one lock. (`@unchecked Sendable` so that lock can hold it: the callers'
/// discipline, not this type, keeps it on one thread at a time.)
public final class BusConnection: @unchecked Sendable {
    /// Which bus to connect to.
    public enum Address: Sendable, Hashable, CustomStringConvertible {
        /// The user's session bus: `$DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
        case session
        /// The system bus: `$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`.
        case system
        /// An explicit address (`unix:path=/tmp/x/bus`).
        case address(String)

        /// `session`, `system`, or anything else as an explicit address.
        public init(_ text: String) {
            switch text {
            case "", "session", "user": self = .session
            case "system": self = .system
            default: self = .address(text)
            }
        }

        public var description: String {
            switch self {
            case .session: "the session bus"
            case .system: "the system bus"
            case .address(let address): "the bus at \(address)"
            }
        }
    }

    /// The `sd_bus`.
    public let pointer: OpaquePointer
    /// The bus this connection is on.
    public let address: Address
    private var slots: [OpaquePointer] = []

    /// Connects to `address`. `description` names the connection in sd-bus's debug output.
    public init(_ address: Address, description: String? = nil) throws(BusError) {
        var bus: OpaquePointer?
        var rc: Int32
        switch address {
        case .session: rc = sd_bus_open_user(&bus)
        case .system: rc = sd_bus_open_system(&bus)
        case .address(let text):
            rc = sd_bus_new(&bus)
            if rc >= 0, let created = bus {
                rc = sd_bus_set_address(created, text)
                if rc >= 0 { rc = sd_bus_set_bus_client(created, 1) }
                if rc >= 0 { rc = sd_bus_start(created) }
                if rc < 0 {
                    sd_bus_unref(created)
                    bus = nil
                }
            }
        }
        guard rc >= 0, let bus else {
            var error = BusError.system("connecting to \(address)", code: rc)
            if rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOMEDIUM {
                error.message = "cannot connect to \(address): \(String(cString: strerror(-rc))) (is a D-Bus daemon running there?)"
            }
            throw error
        }
        pointer = bus
        self.address = address
        if let description { _ = sd_bus_set_description(bus, description) }
    }

    deinit {
        for slot in slots { sd_bus_slot_unref(slot) }
        sd_bus_flush_close_unref(pointer)
    }

    /// This connection's unique name (`:1.42`).
    public var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(pointer, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// The socket to wait on, and the `poll` events sd-bus needs now.
    public var fileDescriptor: Int32 { sd_bus_get_fd(pointer) }
    /// The `poll` events to wait for now (`POLLIN`, plus `POLLOUT` while messages wait to be written).
    public var events: Int16 { Int16(truncatingIfNeeded: max(sd_bus_get_events(pointer), 0)) }
    /// When sd-bus needs to run again even without I/O (a call's timeout), in `CLOCK_MONOTONIC` µs; nil: never.
    public var timeoutMicroseconds: UInt64? {
        var usec: UInt64 = 0
        guard sd_bus_get_timeout(pointer, &usec) >= 0, usec != UInt64.max else { return nil }
        return usec
    }

    /// Asks for the well-known `name`. Throws `EEXIST` (in ``BusError/errno``) when another
    /// connection owns it.
    public func requestName(_ name: String) throws(BusError) {
        let rc = sd_bus_request_name(pointer, name, 0)
        guard rc >= 0 else {
            var error = BusError.system("requesting the name \(name)", code: rc)
            if rc == -EEXIST { error.message = "\(name) is already owned by another process on \(address)" }
            if rc == -EACCES || rc == -EPERM {
                error.message = "the bus policy does not allow this process to own \(name) on \(address) (install dist/dbus-1/system.d/org.swifthaptics.Haptics1.conf for the system bus)"
            }
            throw error
        }
    }

    /// A new method call, arguments appended by `build`.
    public func methodCall(
        destination: String, path: String, interface: String, member: String, _ build: (BusWriter) throws(BusError) -> Void = { _ in }
    ) throws(BusError) -> BusMessage {
        var message: OpaquePointer?
        let rc = sd_bus_message_new_method_call(pointer, &message, destination, path, interface, member)
        guard rc >= 0, let message else { throw .system("sd_bus_message_new_method_call(\(member))", code: rc) }
        let call = BusMessage(adopting: message)
        try build(call.writer)
        return call
    }

    /// Sends `call` and waits for its reply at most `timeout` seconds (0: sd-bus's default, 25 s).
    /// - Throws: the error the peer replied with, or a system error.
    public func call(_ call: BusMessage, timeout: Double = 0) throws(BusError) -> BusMessage {
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        var reply: OpaquePointer?
        let rc = sd_bus_call(pointer, call.pointer, timeout > 0 ? UInt64(timeout * 1e6) : 0, &error, &reply)
        guard rc >= 0, let reply else { throw BusError.take(&error, code: rc, operation: "calling \(call.member ?? "?")") }
        sd_bus_error_free(&error)
        return BusMessage(adopting: reply)
    }

    /// Calls `member` and returns the reply (see ``call(_:timeout:)``).
    public func call(
        destination: String, path: String, interface: String, member: String, timeout: Double = 0,
        _ build: (BusWriter) throws(BusError) -> Void = { _ in }
    ) throws(BusError) -> BusMessage {
        try call(methodCall(destination: destination, path: path, interface: interface, member: member, build), timeout: timeout)
    }

    /// A new signal from `path`, arguments appended by `build`; send it with ``BusMessage/send()``.
    public func signal(path: String, interface: String, member: String, _ build: (BusWriter) throws(BusError) -> Void = { _ in }) throws(BusError) -> BusMessage {
        var message: OpaquePointer?
        let rc = sd_bus_message_new_signal(pointer, &message, path, interface, member)
        guard rc >= 0, let message else { throw .system("sd_bus_message_new_signal(\(member))", code: rc) }
        let signal = BusMessage(adopting: message)
        try build(signal.writer)
        return signal
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for `names` of `interface` at `path`
    /// (their new values read through the interface table's getters).
    public func emitPropertiesChanged(path: String, interface: String, names: [String]) throws(BusError) {
        var strings = names.map { strdup($0) } + [nil]
        defer { for string in strings { free(string) } }
        let rc = strings.withUnsafeMutableBufferPointer { sd_bus_emit_properties_changed_strv(pointer, path, interface, $0.baseAddress) }
        guard rc >= 0 else { throw .system("sd_bus_emit_properties_changed(\(interface))", code: rc) }
    }

    /// Serves `vtable` (a static interface table) for `interface` at `path`; `userdata` reaches its handlers.
    public func addObject(path: String, interface: String, vtable: UnsafePointer<sd_bus_vtable>, userdata: UnsafeMutableRawPointer?) throws(BusError) {
        var slot: OpaquePointer?
        let rc = sd_bus_add_object_vtable(pointer, &slot, path, interface, vtable, userdata)
        guard rc >= 0, let slot else { throw .system("sd_bus_add_object_vtable(\(interface))", code: rc) }
        slots.append(slot)
    }

    /// Serves `vtable` for `interface` on every object below `prefix` that `find` accepts.
    public func addFallback(
        prefix: String, interface: String, vtable: UnsafePointer<sd_bus_vtable>, find: sd_bus_object_find_t, userdata: UnsafeMutableRawPointer?
    ) throws(BusError) {
        var slot: OpaquePointer?
        let rc = sd_bus_add_fallback_vtable(pointer, &slot, prefix, interface, vtable, find, userdata)
        guard rc >= 0, let slot else { throw .system("sd_bus_add_fallback_vtable(\(interface))", code: rc) }
        slots.append(slot)
    }

    /// Lists the child objects below `path` for introspection through `enumerate`.
    public func addNodeEnumerator(path: String, enumerate: sd_bus_node_enumerator_t, userdata: UnsafeMutableRawPointer?) throws(BusError) {
        var slot: OpaquePointer?
        let rc = sd_bus_add_node_enumerator(pointer, &slot, path, enumerate, userdata)
        guard rc >= 0, let slot else { throw .system("sd_bus_add_node_enumerator(\(path))", code: rc) }
        slots.append(slot)
    }

    /// Calls `callback` for every message matching `rule` (a D-Bus match rule), with `userdata`.
    public func addMatch(_ rule: String, callback: BusMessageHandler, userdata: UnsafeMutableRawPointer?) throws(BusError) {
        var slot: OpaquePointer?
        let rc = sd_bus_add_match(pointer, &slot, rule, callback, userdata)
        guard rc >= 0, let slot else { throw .system("sd_bus_add_match(\(rule))", code: rc) }
        slots.append(slot)
    }

    /// Processes one pending message (dispatching it to handlers). Returns whether there may be more.
    @discardableResult
    public func process() throws(BusError) -> Bool {
        let rc = sd_bus_process(pointer, nil)
        guard rc >= 0 else { throw .system("sd_bus_process", code: rc) }
        return rc > 0
    }

    /// Writes out every queued message.
    public func flush() {
        _ = sd_bus_flush(pointer)
    }

    /// Sets how long a method call waits for its reply by default, in seconds.
    public func setMethodCallTimeout(_ seconds: Double) {
        _ = sd_bus_set_method_call_timeout(pointer, UInt64(seconds * 1e6))
    }

    /// Whether the connection is still open.
    public var isOpen: Bool { sd_bus_is_open(pointer) > 0 }

    /// Calls `member` of the bus itself (`org.freedesktop.DBus`), with `name` as its argument if given.
    private func busDriver(_ member: String, _ name: String? = nil) throws(BusError) -> BusMessage {
        try call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member) {
            writer throws(BusError) in if let name { try writer.string(name) }
        }
    }

    /// The owner of `name` (its unique name), or nil when it has none.
    public func owner(of name: String) throws(BusError) -> String? {
        do {
            return try busDriver("GetNameOwner", name).reader.string()
        } catch let error where error.name == StandardBusError.nameHasNoOwner {
            return nil
        }
    }

    /// Whether the bus can start a service for `name` (it has an activation file for it).
    public func isActivatable(_ name: String) throws(BusError) -> Bool {
        let reader = try busDriver("ListActivatableNames").reader
        return try reader.array("s") { () throws(BusError) in try reader.string() }.contains(name)
    }

    /// The user id of the process behind the connection `name` (as dbus-daemon saw it connect).
    public func unixUser(of name: String) throws(BusError) -> UInt32 {
        try busDriver("GetConnectionUnixUser", name).reader.uint32()
    }

    /// The process id of the connection `name` (a unique or well-known name).
    public func processID(of name: String) throws(BusError) -> UInt32 {
        try busDriver("GetConnectionUnixProcessID", name).reader.uint32()
    }
}
