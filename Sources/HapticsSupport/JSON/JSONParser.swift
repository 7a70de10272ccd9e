/// A JSON syntax error with its position.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based line of the offending character.
    public var line: Int
    /// 1-based column (in bytes) of the offending character.
    public var column: Int
    /// What is wrong and what was expected.
    public var problem: String

    public var description: String { "line \(line), column \(column): \(problem)" }
}

/// Parses JSON text.
///
/// Strict RFC 8259, with one leniency that real files need: a trailing comma before `]` or `}`
/// (Apple's own sample AHAP files have them) when `allowTrailingCommas` is true. A UTF-8 byte order
/// mark is skipped. Nesting deeper than 512 levels is an error rather than a stack overflow.
public struct JSONParser {
    /// Accept `[1, 2,]` and `{"a": 1,}`.
    public var allowTrailingCommas: Bool

    /// A parser; trailing commas are accepted by default.
    public init(allowTrailingCommas: Bool = true) {
        self.allowTrailingCommas = allowTrailingCommas
    }

    /// Parses a whole document.
    public func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses a whole document from UTF-8 bytes.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try parse(buffer) }
    }

    /// Parses a whole document from a UTF-8 buffer.
    public func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var cursor = Cursor(bytes: bytes, allowTrailingCommas: allowTrailingCommas)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { cursor.index = 3 }
        cursor.skipWhitespace()
        let value = try cursor.value(depth: 0)
        cursor.skipWhitespace()
        guard cursor.index == bytes.count else { throw cursor.error("unexpected text after the end of the document") }
        return value
    }
}

private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let allowTrailingCommas: Bool
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, allowTrailingCommas: Bool) {
        self.bytes = bytes
        self.allowTrailingCommas = allowTrailingCommas
    }

    func error(_ problem: String, at position: Int? = nil) -> JSONSyntaxError {
        let end = min(position ?? index, bytes.count)
        var line = 1, lineStart = 0
        for offset in 0..<end where bytes[offset] == UInt8(ascii: "\n") {
            line += 1
            lineStart = offset + 1
        }
        return JSONSyntaxError(line: line, column: end - lineStart + 1, problem: problem)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < 512 else { throw error("nesting deeper than 512 levels") }
        guard let byte = current else { throw error("unexpected end of the document; expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character '\(printable(byte))'; expected a value")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let start = index
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard current == expected else { throw error("invalid literal; expected '\(word)'", at: start) }
            index += 1
        }
    }

    mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject(members))
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                if current == UInt8(ascii: "}"), allowTrailingCommas, !members.isEmpty {
                    index += 1
                    return .object(JSONObject(members))
                }
                throw error(current == nil ? "unexpected end of the document inside an object" : "expected a quoted key")
            }
            let key = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after key \"\(key)\"") }
            index += 1
            skipWhitespace()
            members.append((key: key, value: try value(depth: depth + 1)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(JSONObject(members))
            case nil: throw error("unexpected end of the document inside an object; expected ',' or '}'")
            default: throw error("expected ',' or '}' after the value of \"\(key)\"")
            }
        }
    }

    mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if current == UInt8(ascii: "]"), allowTrailingCommas, !elements.isEmpty {
                index += 1
                return .array(elements)
            }
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            case nil: throw error("unexpected end of the document inside an array; expected ',' or ']'")
            default: throw error("expected ',' or ']' after an array element")
            }
        }
    }

    mutating func string() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        // Fast path: no escapes.
        var scan = index
        while scan < bytes.count, bytes[scan] != UInt8(ascii: "\""), bytes[scan] != UInt8(ascii: "\\"), bytes[scan] >= 0x20 {
            scan += 1
        }
        if scan < bytes.count, bytes[scan] == UInt8(ascii: "\"") {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<scan]), as: UTF8.self)
            index = scan + 1
            return text
        }
        var utf8: [UInt8] = Array(bytes[index..<scan])
        index = scan
        while true {
            guard let byte = current else { throw error("unterminated string", at: start) }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { throw error("unterminated string", at: start) }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("lone high surrogate in \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                default: throw error("invalid escape '\\\(printable(escaped))'", at: index - 2)
                }
            case 0x0A, 0x0D:
                // JSON strings cannot span lines: the closing quote is missing.
                throw error("unterminated string", at: start)
            case 0..<0x20:
                throw error("control character in string (write it as an escape)")
            default:
                utf8.append(byte)
                index += 1
            }
        }
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("unterminated \\u escape") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw error("invalid number: expected a digit", at: index)
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var exactInteger = true
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if digits < 18 { mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0")) } else { exactInteger = false }
                digits += 1
                index += 1
            }
        }
        if current == UInt8(ascii: ".") {
            exactInteger = false
            index += 1
            guard let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw error("invalid number: expected a digit after '.'")
            }
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            exactInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw error("invalid number: expected a digit in the exponent")
            }
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        }
        if exactInteger {
            return bytes[start] == UInt8(ascii: "-") ? -Double(mantissa) : Double(mantissa)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw error("number out of range: \(text)", at: start) }
        return value
    }

    func printable(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? String(UnicodeScalar(byte)) : "\\u{\(String(byte, radix: 16))}"
    }
}
