/// A decoding error that names where in the document it is (`Pattern[3].Event.Time`) and what is wrong.
public struct JSONPathError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The JSON path of the offending value: `$` for the root, then `.Key` and `[index]` steps.
    public var path: String
    /// What is wrong and what was expected.
    public var problem: String

    /// An error at `path`.
    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path): \(problem)" }
}

/// A value and its path in the document, with typed accessors whose errors name the path.
public struct JSONCursor: Sendable {
    /// The value here.
    public let value: JSONValue
    /// The path of ``value``.
    public let path: String

    /// A cursor at the root of `value` (path `$`).
    public init(root value: JSONValue) {
        self.value = value
        self.path = "$"
    }

    init(value: JSONValue, path: String) {
        self.value = value
        self.path = path
    }

    /// An error at this cursor's path.
    public func error(_ problem: String) -> JSONPathError { JSONPathError(path: path, problem: problem) }

    private func mismatch(_ expected: String) -> JSONPathError {
        error("expected \(expected), found \(value.typeName)\(preview)")
    }

    private var preview: String {
        switch value {
        case .string(let text): " \"\(text.prefix(40))\""
        case .number(let number): " \(JSONValue.format(number))"
        case .bool(let flag): " \(flag)"
        default: ""
        }
    }

    /// The value as an object.
    public func object() throws(JSONPathError) -> JSONObjectCursor {
        guard case .object(let object) = value else { throw mismatch("an object") }
        return JSONObjectCursor(object: object, path: path)
    }

    /// The elements of an array, each with its path.
    public func array() throws(JSONPathError) -> [JSONCursor] {
        guard case .array(let elements) = value else { throw mismatch("an array") }
        return elements.enumerated().map { JSONCursor(value: $1, path: "\(path)[\($0)]") }
    }

    /// The value as a number.
    public func number() throws(JSONPathError) -> Double {
        guard case .number(let number) = value else { throw mismatch("a number") }
        return number
    }

    /// The value as a number within `range` (inclusive).
    public func number(in range: ClosedRange<Double>) throws(JSONPathError) -> Double {
        let number = try number()
        guard range.contains(number) else {
            throw error("\(JSONValue.format(number)) is outside the allowed range \(JSONValue.format(range.lowerBound))...\(JSONValue.format(range.upperBound))")
        }
        return number
    }

    /// The value as a whole number within `range`.
    public func integer(in range: ClosedRange<Int>) throws(JSONPathError) -> Int {
        let number = try number()
        // `Int(exactly:)` rather than `Int(_:)`: near `Int.max` the bounds themselves round when
        // converted to Double, and a value one past them must be an error, never a trap.
        guard let whole = Int(exactly: number), range.contains(whole) else {
            throw error("expected a whole number in \(range.lowerBound)...\(range.upperBound), found \(JSONValue.format(number))")
        }
        return whole
    }

    /// The value as a string.
    public func string() throws(JSONPathError) -> String {
        guard case .string(let text) = value else { throw mismatch("a string") }
        return text
    }

    /// The value as one of `choices` (a string).
    public func string(oneOf choices: [String]) throws(JSONPathError) -> String {
        let text = try string()
        guard choices.contains(text) else {
            throw error("\"\(text)\" is not one of: \(choices.joined(separator: ", "))")
        }
        return text
    }

    /// The value as a boolean; `0` and `1` are accepted as well (AHAP's `Sustained` uses them).
    public func bool() throws(JSONPathError) -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .number(let number) where number == 0 || number == 1: return number == 1
        default: throw mismatch("true or false")
        }
    }
}

/// An object and its path, with lookups whose errors name the key.
public struct JSONObjectCursor: Sendable {
    /// The object.
    public let object: JSONObject
    /// Its path.
    public let path: String

    /// The keys in document order.
    public var keys: [String] { object.keys }

    /// Every member with its path, in document order (a repeated key appears each time); walking
    /// these is linear, where looking each key up again would be quadratic in the object's size.
    public var members: [(key: String, value: JSONCursor)] {
        object.members.map { (key: $0.key, value: JSONCursor(value: $0.value, path: "\(path).\($0.key)")) }
    }

    /// The member `key`, if present.
    public func optional(_ key: String) -> JSONCursor? {
        object[key].map { JSONCursor(value: $0, path: "\(path).\(key)") }
    }

    /// The member `key`; its absence is an error naming the key.
    public func required(_ key: String) throws(JSONPathError) -> JSONCursor {
        guard let cursor = optional(key) else {
            throw JSONPathError(path: "\(path).\(key)", problem: "required key is missing")
        }
        return cursor
    }

    /// An error at this object's path.
    public func error(_ problem: String) -> JSONPathError { JSONPathError(path: path, problem: problem) }

    /// Fails on the first key not in `allowed`, naming it and the allowed keys (for formats that
    /// reject typos rather than ignore them).
    public func rejectUnknownKeys(allowed: [String]) throws(JSONPathError) {
        if let unknown = keys.first(where: { !allowed.contains($0) }) {
            throw JSONPathError(path: "\(path).\(unknown)", problem: "unknown key; allowed keys: \(allowed.joined(separator: ", "))")
        }
    }
}
