#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// One D-Bus message this process holds a reference to (a reply it received, a message it builds):
/// the one owner of that reference, released exactly once.
public final class BusMessage {
    /// The `sd_bus_message`.
    public let pointer: OpaquePointer

    /// Takes over a reference the caller owns.
    public init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Takes a new reference to a message sd-bus lends (a handler's argument).
    public init(retaining pointer: OpaquePointer) {
        self.pointer = sd_bus_message_ref(pointer)
    }

    deinit { sd_bus_message_unref(pointer) }

    /// Reads the arguments in order (the reader keeps the message alive).
    public var reader: BusReader { BusReader(pointer, owner: self) }
    /// Appends arguments (the writer keeps the message alive).
    public var writer: BusWriter { BusWriter(pointer, owner: self) }

    /// The unique name of the sender (`:1.42`), if any.
    public var sender: String? { sd_bus_message_get_sender(pointer).map { String(cString: $0) } }
    /// The object path.
    public var path: String? { sd_bus_message_get_path(pointer).map { String(cString: $0) } }
    /// The interface.
    public var interface: String? { sd_bus_message_get_interface(pointer).map { String(cString: $0) } }
    /// The method or signal name.
    public var member: String? { sd_bus_message_get_member(pointer).map { String(cString: $0) } }

    /// Sends the message on the connection it was created for.
    public func send() throws(BusError) {
        let rc = sd_bus_send(nil, pointer, nil)
        guard rc >= 0 else { throw .system("sd_bus_send", code: rc) }
    }

    /// Makes the message a unicast: only `destination` receives it (for a signal meant for one client).
    public func setDestination(_ destination: String) throws(BusError) {
        let rc = sd_bus_message_set_destination(pointer, destination)
        guard rc >= 0 else { throw .system("sd_bus_message_set_destination", code: rc) }
    }

    /// Sends the error reply `error` to the call `call` (a reply sent after its handler returned).
    public static func replyError(to call: OpaquePointer, _ error: BusError) throws(BusError) {
        var reply = sd_bus_error(name: nil, message: nil, _need_free: 0)
        _ = sd_bus_error_set(&reply, error.name, error.message)
        defer { sd_bus_error_free(&reply) }
        let rc = sd_bus_reply_method_error(call, &reply)
        guard rc >= 0 else { throw .system("sd_bus_reply_method_error", code: rc) }
    }

    /// A method return for the call `call`, with `build` appending its results.
    public static func methodReturn(to call: OpaquePointer, _ build: (BusWriter) throws(BusError) -> Void) throws(BusError) -> BusMessage {
        var reply: OpaquePointer?
        let rc = sd_bus_message_new_method_return(call, &reply)
        guard rc >= 0, let reply else { throw .system("sd_bus_message_new_method_return", code: rc) }
        let message = BusMessage(adopting: reply)
        try build(message.writer)
        return message
    }
}

/// Reads a message's arguments in order: a view on the message, never its owner.
///
/// sd-bus has checked a method call's signature against the interface table before a handler
/// runs, so a read fails only on a message of another shape; the error then names what was expected.
public struct BusReader {
    let message: OpaquePointer
    /// The message's owner when the reader came from one: a reader never outlives its message.
    private let owner: BusMessage?

    /// A reader at the current position of a message sd-bus lends for the duration of a callback.
    public init(_ message: OpaquePointer) {
        self.message = message
        owner = nil
    }

    init(_ message: OpaquePointer, owner: BusMessage) {
        self.message = message
        self.owner = owner
    }

    private func basic<T>(_ type: UInt8, _ initial: T) throws(BusError) -> T {
        var value = initial
        let rc = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, CChar(bitPattern: type), $0) }
        guard rc > 0 else { throw Self.readError(expected: String(UnicodeScalar(type)), code: rc) }
        return value
    }

    private func text(_ type: UInt8) throws(BusError) -> String {
        var pointer: UnsafePointer<CChar>?
        let rc = sd_bus_message_read_basic(message, CChar(bitPattern: type), &pointer)
        guard rc > 0, let pointer else { throw Self.readError(expected: String(UnicodeScalar(type)), code: rc) }
        return String(cString: pointer)
    }

    static func readError(expected: String, code: Int32) -> BusError {
        BusError(
            name: StandardBusError.invalidArgs,
            message: code == 0 ? "expected a value of type '\(expected)' but the arguments ended" : "cannot read a value of type '\(expected)': \(String(cString: strerror(-code)))")
    }

    /// Reads an `s`.
    public func string() throws(BusError) -> String { try text(UInt8(ascii: "s")) }
    /// Reads an `o`.
    public func objectPath() throws(BusError) -> String { try text(UInt8(ascii: "o")) }
    /// Reads a `d`.
    public func double() throws(BusError) -> Double { try basic(UInt8(ascii: "d"), 0.0) }
    /// Reads a `b` (sd-bus reads booleans into an `int`).
    public func bool() throws(BusError) -> Bool { try basic(UInt8(ascii: "b"), Int32(0)) != 0 }
    /// Reads a `y`.
    public func byte() throws(BusError) -> UInt8 { try basic(UInt8(ascii: "y"), UInt8(0)) }
    /// Reads an `i`.
    public func int32() throws(BusError) -> Int32 { try basic(UInt8(ascii: "i"), Int32(0)) }
    /// Reads a `u`.
    public func uint32() throws(BusError) -> UInt32 { try basic(UInt8(ascii: "u"), UInt32(0)) }
    /// Reads an `x`.
    public func int64() throws(BusError) -> Int64 { try basic(UInt8(ascii: "x"), Int64(0)) }
    /// Reads a `t`.
    public func uint64() throws(BusError) -> UInt64 { try basic(UInt8(ascii: "t"), UInt64(0)) }

    /// Reads an `ay`, lending `body` the message's own bytes (no copy; valid only during the call).
    public func bytes<T>(_ body: (UnsafeRawBufferPointer) throws(BusError) -> T) throws(BusError) -> T {
        var pointer: UnsafeRawPointer?
        var size = 0
        let rc = sd_bus_message_read_array(message, CChar(bitPattern: UInt8(ascii: "y")), &pointer, &size)
        guard rc > 0 else { throw Self.readError(expected: "ay", code: rc) }
        return try body(UnsafeRawBufferPointer(start: size > 0 ? pointer : nil, count: size))
    }

    /// Reads an array of `element`s, each with `read`.
    public func array<T>(_ element: String, _ read: () throws(BusError) -> T) throws(BusError) -> [T] {
        try enter("a", element)
        var result: [T] = []
        while try hasMore() { result.append(try read()) }
        try exit()
        return result
    }

    /// Reads a structure of `contents` with `read`.
    public func structure<T>(_ contents: String, _ read: () throws(BusError) -> T) throws(BusError) -> T {
        try enter("r", contents)
        let value = try read()
        try exit()
        return value
    }

    /// Reads an `a{sv}` dictionary.
    public func dictionary() throws(BusError) -> [(key: String, value: BusValue)] {
        try enter("a", "{sv}")
        var result: [(key: String, value: BusValue)] = []
        while try hasMore() {
            try enter("e", "sv")
            let key = try string()
            let value = try self.value()
            try exit()
            result.append((key, value))
        }
        try exit()
        return result
    }

    /// Reads the next complete value, whatever its type.
    public func value() throws(BusError) -> BusValue {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        let rc = sd_bus_message_peek_type(message, &type, &contentsPointer)
        guard rc > 0 else { throw Self.readError(expected: "any", code: rc) }
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "b"): return .bool(try bool())
        case UInt8(ascii: "y"): return .byte(try byte())
        case UInt8(ascii: "i"): return .int32(try int32())
        case UInt8(ascii: "u"): return .uint32(try uint32())
        case UInt8(ascii: "x"): return .int64(try int64())
        case UInt8(ascii: "t"): return .uint64(try uint64())
        case UInt8(ascii: "n"): return .int32(Int32(try basic(UInt8(ascii: "n"), Int16(0))))
        case UInt8(ascii: "q"): return .uint32(UInt32(try basic(UInt8(ascii: "q"), UInt16(0))))
        case UInt8(ascii: "d"): return .double(try double())
        case UInt8(ascii: "s"): return .string(try string())
        case UInt8(ascii: "o"): return .objectPath(try objectPath())
        case UInt8(ascii: "g"): return .string(try text(UInt8(ascii: "g")))
        case UInt8(ascii: "v"):
            try enter("v", contents)
            let inner = try value()
            try exit()
            return .variant(inner)
        case UInt8(ascii: "r"):
            try enter("r", contents)
            var fields: [BusValue] = []
            while try hasMore() { fields.append(try value()) }
            try exit()
            return .structure(fields)
        case UInt8(ascii: "a"):
            if contents == "{sv}" { return .dictionary(try dictionary()) }
            try enter("a", contents)
            var elements: [BusValue] = []
            while try hasMore() {
                if contents.hasPrefix("{") {
                    try enter("e", String(contents.dropFirst().dropLast()))
                    let key = try value()
                    let entry = try value()
                    try exit()
                    elements.append(.structure([key, entry]))
                } else {
                    elements.append(try value())
                }
            }
            try exit()
            return .array(element: contents, elements)
        default:
            throw BusError(name: StandardBusError.invalidArgs, message: "values of type '\(String(UnicodeScalar(UInt8(bitPattern: type))))' are not supported")
        }
    }

    /// Whether another value follows in the current container.
    public func hasMore() throws(BusError) -> Bool {
        let rc = sd_bus_message_peek_type(message, nil, nil)
        guard rc >= 0 else { throw .system("sd_bus_message_peek_type", code: rc) }
        return rc > 0
    }

    /// Enters a container: `a`, `r` (a structure), `e` (a dictionary entry) or `v`.
    public func enter(_ type: Character, _ contents: String) throws(BusError) {
        let rc = sd_bus_message_enter_container(message, CChar(bitPattern: type.asciiValue!), contents)
        guard rc > 0 else { throw Self.readError(expected: type == "r" ? "(\(contents))" : "\(type)\(contents)", code: rc) }
    }

    /// Leaves the container entered last.
    public func exit() throws(BusError) {
        let rc = sd_bus_message_exit_container(message)
        guard rc >= 0 else { throw .system("sd_bus_message_exit_container", code: rc) }
    }
}

/// Appends arguments to a message under construction: a view on the message, never its owner.
public struct BusWriter {
    let message: OpaquePointer
    /// The message's owner when the writer came from one: a writer never outlives its message.
    private let owner: BusMessage?

    /// A writer appending to a message sd-bus lends for the duration of a callback (a property's reply).
    public init(_ message: OpaquePointer) {
        self.message = message
        owner = nil
    }

    init(_ message: OpaquePointer, owner: BusMessage) {
        self.message = message
        self.owner = owner
    }

    private func basic<T>(_ type: UInt8, _ value: T) throws(BusError) {
        var copy = value
        let rc = withUnsafePointer(to: &copy) { sd_bus_message_append_basic(message, CChar(bitPattern: type), $0) }
        guard rc >= 0 else { throw .system("sd_bus_message_append_basic", code: rc) }
    }

    private func text(_ type: UInt8, _ value: String) throws(BusError) {
        let rc = value.withCString { sd_bus_message_append_basic(message, CChar(bitPattern: type), $0) }
        guard rc >= 0 else { throw .system("sd_bus_message_append_basic(\(String(UnicodeScalar(type))))", code: rc) }
    }

    /// Appends an `s` (it must be valid UTF-8 without NUL: Swift strings from C text are).
    public func string(_ value: String) throws(BusError) { try text(UInt8(ascii: "s"), value) }
    /// Appends an `o`.
    public func objectPath(_ value: String) throws(BusError) { try text(UInt8(ascii: "o"), value) }
    /// Appends a `d`.
    public func double(_ value: Double) throws(BusError) { try basic(UInt8(ascii: "d"), value) }
    /// Appends a `b`.
    public func bool(_ value: Bool) throws(BusError) { try basic(UInt8(ascii: "b"), Int32(value ? 1 : 0)) }
    /// Appends an `i`.
    public func int32(_ value: Int32) throws(BusError) { try basic(UInt8(ascii: "i"), value) }
    /// Appends a `u`.
    public func uint32(_ value: UInt32) throws(BusError) { try basic(UInt8(ascii: "u"), value) }
    /// Appends an `x`.
    public func int64(_ value: Int64) throws(BusError) { try basic(UInt8(ascii: "x"), value) }
    /// Appends a `t`.
    public func uint64(_ value: UInt64) throws(BusError) { try basic(UInt8(ascii: "t"), value) }

    /// Appends an `ay` of `bytes` in one copy.
    public func bytes(_ bytes: UnsafeRawBufferPointer) throws(BusError) {
        let rc = sd_bus_message_append_array(message, CChar(bitPattern: UInt8(ascii: "y")), bytes.baseAddress, bytes.count)
        guard rc >= 0 else { throw .system("sd_bus_message_append_array(y)", code: rc) }
    }

    /// Opens a container (`a`, `r`, `e`, `v`) with `contents`, runs `body`, and closes it.
    public func container(_ type: Character, _ contents: String, _ body: () throws(BusError) -> Void) throws(BusError) {
        let rc = sd_bus_message_open_container(message, CChar(bitPattern: type.asciiValue!), contents)
        guard rc >= 0 else { throw .system("sd_bus_message_open_container(\(type)\(contents))", code: rc) }
        try body()
        let closed = sd_bus_message_close_container(message)
        guard closed >= 0 else { throw .system("sd_bus_message_close_container(\(type)\(contents))", code: closed) }
    }

    /// Appends any value.
    public func append(_ value: BusValue) throws(BusError) {
        switch value {
        case .bool(let value): try bool(value)
        case .byte(let value): try basic(UInt8(ascii: "y"), value)
        case .int32(let value): try int32(value)
        case .uint32(let value): try uint32(value)
        case .int64(let value): try int64(value)
        case .uint64(let value): try uint64(value)
        case .double(let value): try double(value)
        case .string(let value): try string(value)
        case .objectPath(let value): try objectPath(value)
        case .array(let element, let values):
            try container("a", element) { () throws(BusError) in
                for value in values {
                    if element.hasPrefix("{"), case .structure(let pair) = value, pair.count == 2 {
                        try container("e", String(element.dropFirst().dropLast())) { () throws(BusError) in
                            try append(pair[0])
                            try append(pair[1])
                        }
                    } else {
                        try append(value)
                    }
                }
            }
        case .dictionary(let entries):
            try dictionary(entries)
        case .structure(let fields):
            try container("r", fields.map(\.signature).joined()) { () throws(BusError) in
                for field in fields { try append(field) }
            }
        case .variant(let inner):
            try container("v", inner.signature) { () throws(BusError) in try append(inner) }
        }
    }

    /// Appends an `a{sv}` dictionary.
    public func dictionary(_ entries: [(key: String, value: BusValue)]) throws(BusError) {
        try container("a", "{sv}") { () throws(BusError) in
            for entry in entries {
                try container("e", "sv") { () throws(BusError) in
                    try string(entry.key)
                    let inner = entry.value.unwrapped
                    try container("v", inner.signature) { () throws(BusError) in try append(inner) }
                }
            }
        }
    }
}
