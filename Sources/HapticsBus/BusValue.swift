/// A D-Bus value with its type: what a variant (`v`) carries, and the building block of
/// `a{sv}` dictionaries (hints, options, device details).
public indirect enum BusValue: Sendable, Hashable, CustomStringConvertible {
    case bool(Bool)
    case byte(UInt8)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    /// An array whose elements have the signature `element` (kept so an empty array has a type).
    case array(element: String, [BusValue])
    /// A dictionary `a{sv}`: string keys, variant values, in order.
    case dictionary([(key: String, value: BusValue)])
    /// A structure `(…)`.
    case structure([BusValue])
    /// A variant holding a value.
    case variant(BusValue)

    /// The value's D-Bus type signature.
    public var signature: String {
        switch self {
        case .bool: "b"
        case .byte: "y"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .array(let element, _): "a" + element
        case .dictionary: "a{sv}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// An `as` array.
    public static func strings(_ values: [String]) -> BusValue { .array(element: "s", values.map { .string($0) }) }

    /// An `aa{sv}` array.
    public static func dictionaries(_ values: [[(key: String, value: BusValue)]]) -> BusValue {
        .array(element: "a{sv}", values.map { .dictionary($0) })
    }

    /// The string held (`s` or `o`), else nil.
    public var stringValue: String? {
        switch self {
        case .string(let value), .objectPath(let value): value
        case .variant(let inner): inner.stringValue
        default: nil
        }
    }

    /// The number held (any integer type or `d`), else nil.
    public var doubleValue: Double? {
        switch self {
        case .byte(let value): Double(value)
        case .int32(let value): Double(value)
        case .uint32(let value): Double(value)
        case .int64(let value): Double(value)
        case .uint64(let value): Double(value)
        case .double(let value): value
        case .variant(let inner): inner.doubleValue
        default: nil
        }
    }

    /// The boolean held, else nil.
    public var boolValue: Bool? {
        switch self {
        case .bool(let value): value
        case .variant(let inner): inner.boolValue
        default: nil
        }
    }

    /// The value inside any number of variants.
    public var unwrapped: BusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var description: String {
        switch self {
        case .bool(let value): "\(value)"
        case .byte(let value): "\(value)"
        case .int32(let value): "\(value)"
        case .uint32(let value): "\(value)"
        case .int64(let value): "\(value)"
        case .uint64(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .objectPath(let value): value
        case .array(_, let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let entries): "{" + entries.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner)>"
        }
    }

    public static func == (lhs: BusValue, rhs: BusValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): a == b
        case (.byte(let a), .byte(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)): a == b
        case (.array(let e1, let a), .array(let e2, let b)): e1 == e2 && a == b
        case (.dictionary(let a), .dictionary(let b)): a.map(\.key) == b.map(\.key) && a.map(\.value) == b.map(\.value)
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }
}

extension Array where Element == (key: String, value: BusValue) {
    /// The value for `key` (the first one), else nil.
    public subscript(key: String) -> BusValue? {
        first { $0.key == key }?.value
    }
}
