import HapticsBus

/// Checks on what clients send, each failing with a ``DaemonError`` that names the field.
public enum Validation {
    /// An application id: 1…255 ASCII letters, digits, `_`, `-` and `.`, not starting with `.`, `-` or
    /// a digit. Reverse-DNS ids (`org.example.App`, `sm.puri.Chatty`) and desktop-file-style names
    /// (`haptic-cal`) pass; what feedbackd clients send passes.
    public static func appID(_ value: String) throws(BusError) -> String {
        let bytes = Array(value.utf8)
        guard (1...255).contains(bytes.count), let first = bytes.first,
            first != UInt8(ascii: "."), first != UInt8(ascii: "-"), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
            bytes.allSatisfy(isNameByte)
        else { throw DaemonError.invalidAppID(value) }
        return value
    }

    /// A feedbackd event name (the event naming spec): 1…255 of `a-z 0-9 _ - .`.
    public static func eventName(_ value: String) throws(BusError) -> String {
        let bytes = Array(value.utf8)
        guard (1...255).contains(bytes.count),
            bytes.allSatisfy(isEventByte)
        else { throw DaemonError.invalidEvent(value) }
        return value
    }

    /// A finite number in `range`.
    public static func number(_ value: Double, _ field: String, in range: ClosedRange<Double>) throws(BusError) -> Double {
        guard value.isFinite, range.contains(value) else {
            throw DaemonError.invalidValue(field, value, expected: "\(format(range.lowerBound))…\(format(range.upperBound))")
        }
        return value
    }

    /// A time in `CLOCK_MONOTONIC` microseconds (0: now), at most a day from now.
    public static func time(_ microseconds: UInt64, _ field: String, now: UInt64) throws(BusError) -> Double {
        guard microseconds == 0 || microseconds <= now / 1000 + 86_400_000_000 else {
            throw DaemonError.invalidValue(
                field, Double(microseconds), expected: "0 (now) or a CLOCK_MONOTONIC time in µs within a day (now is \(now / 1000))")
        }
        return microseconds == 0 ? 0 : Double(microseconds) / 1e6
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// A byte of an event name or feedback kind: `a-z 0-9 _ - .`.
    static func isEventByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// A byte of an app id or feedback kind: `A-Z a-z 0-9 _ - .`.
    static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || isDigit(byte)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
}
