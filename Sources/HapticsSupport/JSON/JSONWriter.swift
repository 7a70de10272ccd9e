extension JSONValue {
    /// The value as JSON text: compact on one line, or indented by two spaces per level.
    ///
    /// Numbers print in the shortest form that reads back to the same `Double` (`0.1`, not
    /// `0.10000000000000001`), integers without a fraction. Non-finite numbers, which JSON cannot
    /// hold, print as `null`.
    public func serialized(pretty: Bool = false) -> String {
        var output = ""
        write(into: &output, pretty: pretty, indent: 0)
        return output
    }

    /// Appends the value as JSON text to `output`.
    public func write(into output: inout String, pretty: Bool = false, indent: Int = 0) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let value): output += JSONValue.format(value)
        case .string(let value): JSONValue.quote(value, into: &output)
        case .array(let elements):
            if elements.isEmpty {
                output += "[]"
                return
            }
            output += "["
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output += "," }
                if pretty { newline(&output, indent + 1) }
                element.write(into: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(&output, indent) }
            output += "]"
        case .object(let object):
            if object.members.isEmpty {
                output += "{}"
                return
            }
            output += "{"
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { output += "," }
                if pretty { newline(&output, indent + 1) }
                JSONValue.quote(member.key, into: &output)
                output += pretty ? ": " : ":"
                member.value.write(into: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(&output, indent) }
            output += "}"
        }
    }

    private func newline(_ output: inout String, _ indent: Int) {
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    /// A number in JSON: integers without a fraction, others in their shortest round-trip form.
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 9.0e15 { return String(Int64(value)) }
        return String(value)
    }

    /// Appends `text` as a quoted JSON string with the required escapes.
    public static func quote(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
