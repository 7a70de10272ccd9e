/// A configuration file that cannot be used (a GPIO board file, an ALSA device file): the file, the
/// JSON path of the key (`$.actuators[0].pwm.channel`), what is wrong (with the value and the allowed
/// range) and what is expected there.
///
/// ```text
/// /etc/haptics/boards.d/pi.json: $.actuators[0].limits.rated_level: 1.5 is outside the allowed range 0.01...1.
///   Expected: the actuator's rated voltage divided by the full-scale drive voltage (0.6 for a 3 V motor on 5 V)
/// ```
public struct ConfigFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or the setting, `gpio.boards`, when no file is involved).
    public var file: String
    /// The JSON path of the offending key, nil for a problem with the file as a whole.
    public var key: String?
    /// What is wrong, with the value found.
    public var problem: String
    /// What is expected there, or how to fix it.
    public var expected: String?

    /// An error in `file` at `key`.
    public init(file: String, key: String?, problem: String, expected: String? = nil) {
        self.file = file
        self.key = key
        self.problem = problem
        self.expected = expected
    }

    public var description: String {
        var text = file
        if let key { text += ": " + key }
        text += ": " + problem
        if let expected { text += ". Expected: " + expected }
        return text
    }
}

/// What each key of a kind of configuration file expects, for error messages (and mirrored in the
/// guide that lists every key).
public struct ConfigFileKeys: Sendable {
    /// Expectations by `parent.key` (more specific) or `key`.
    public let expectations: [String: String]
    /// The document that lists every key (`Hardware/gpio/README.md`).
    public let guide: String

    /// Keys with their expectations, documented in `guide`.
    public init(expectations: [String: String], guide: String) {
        self.expectations = expectations
        self.guide = guide
    }

    /// What is expected at a JSON path (`$.actuators[0].pwm.chip` → the PWM chip's expectation).
    public func expectation(forPath path: String) -> String? {
        let components = path.split(separator: ".").map { component in
            String(component.prefix(while: { $0 != "[" }))
        }
        guard let last = components.last else { return nil }
        if components.count >= 2, let specific = expectations["\(components[components.count - 2]).\(last)"] { return specific }
        return expectations[last]
    }

    /// The error for a JSON path error in `file`, with the expectation for its key.
    public func error(file: String, _ error: JSONPathError) -> ConfigFileError {
        let unknown = error.problem.hasPrefix("unknown key") ? "no such key: remove it or correct its spelling (\(guide) lists every key)" : nil
        return ConfigFileError(file: file, key: error.path, problem: error.problem, expected: unknown ?? expectation(forPath: error.path))
    }
}

/// Reading one configuration file: its JSON root, and errors that name the file and the key.
public struct ConfigFileReader: Sendable {
    /// The file, named in errors.
    public let file: String
    /// The expectations of its keys.
    public let keys: ConfigFileKeys

    /// A reader for `file`.
    public init(file: String, keys: ConfigFileKeys) {
        self.file = file
        self.keys = keys
    }

    /// The JSON root of the file at `path` (at most `limit` bytes).
    public static func root(path: String, limit: Int = 1 << 20) throws(ConfigFileError) -> JSONCursor {
        let bytes: [UInt8]
        do {
            bytes = try readFile(atPath: path, limit: limit)
        } catch {
            throw ConfigFileError(file: path, key: nil, problem: "\(error)")
        }
        return try root(bytes, path: path)
    }

    /// The JSON root of a file's bytes; `path` names it in errors.
    public static func root(_ bytes: [UInt8], path: String) throws(ConfigFileError) -> JSONCursor {
        do {
            return JSONCursor(root: try JSONParser().parse(bytes))
        } catch {
            throw ConfigFileError(file: path, key: nil, problem: "not valid JSON: \(error)")
        }
    }

    /// An error at `key`, expecting what the keys say unless `expected` is given.
    public func fail(_ key: String, _ problem: String, expected: String? = nil) -> ConfigFileError {
        ConfigFileError(file: file, key: key, problem: problem, expected: expected ?? keys.expectation(forPath: key))
    }

    /// Runs a cursor lookup, turning its path error into a file error.
    public func read<T>(_ body: () throws(JSONPathError) -> T) throws(ConfigFileError) -> T {
        do {
            return try body()
        } catch {
            throw keys.error(file: file, error)
        }
    }

    /// Whether `name` is a valid short name: lowercase letters, digits, `.`, `_`, `-`; starting with
    /// a letter or digit; 1…`longest` characters.
    public static func isValidName(_ name: String, longest: Int) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...longest).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        return alphanumeric(bytes[0]) && bytes.allSatisfy { alphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
    }
}
