#if canImport(Glibc)
import Glibc
#endif

/// Where a backend's configuration files (GPIO board files, ALSA device files) are found.
///
/// In order: the system directory `/etc/haptics/NAME.d`, the user's
/// `$XDG_CONFIG_HOME/haptics/NAME.d` (else `~/.config/haptics/NAME.d`), then every entry of the
/// backend's setting (a colon-separated list of files and directories; tests use it). In a
/// directory, every `*.json` file not starting with `.` is read, in name order. A standard
/// directory that does not exist is skipped; an entry of the setting that does not exist is an error.
public struct ConfigSearch: Sendable, Hashable {
    /// One place to look.
    public struct Location: Sendable, Hashable {
        /// A file or a directory.
        public var path: String
        /// Whether it must exist (entries of the setting).
        public var required: Bool

        /// A location.
        public init(path: String, required: Bool) {
            self.path = path
            self.required = required
        }
    }

    /// The places searched, in order.
    public var locations: [Location]
    /// The setting that adds files and directories (`gpio.boards`), named in errors.
    public var settingKey: String
    /// What the files are called in errors (`board file`).
    public var noun: String

    /// A search over `locations`.
    public init(locations: [Location], settingKey: String, noun: String = "file") {
        self.locations = locations
        self.settingKey = settingKey
        self.noun = noun
    }

    /// The standard search for `directory` (`boards.d`) plus the entries of `setting` (the value of
    /// `settingKey`); `environment` supplies `XDG_CONFIG_HOME` and `HOME`.
    public static func standard(directory: String, settingKey: String, noun: String = "file", setting: String?, environment: [String: String]) -> ConfigSearch {
        var locations = [Location(path: "/etc/haptics/" + directory, required: false)]
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            locations.append(Location(path: config + "/haptics/" + directory, required: false))
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            locations.append(Location(path: home + "/.config/haptics/" + directory, required: false))
        }
        for entry in (setting ?? "").split(separator: ":") where !entry.isEmpty {
            locations.append(Location(path: String(entry), required: true))
        }
        return ConfigSearch(locations: locations, settingKey: settingKey, noun: noun)
    }

    /// The files found, in search order (a file listed twice once), and one failure per place that
    /// could not be read (its `file` the path, or `SETTING entry PATH` for a missing entry of the setting).
    public func collect() -> (files: [String], failures: [ConfigFileError]) {
        var result: [String] = []
        var failures: [ConfigFileError] = []
        for location in locations {
            var info = stat()
            guard stat(location.path, &info) == 0 else {
                let code = errno
                if !location.required && code == ENOENT { continue }
                failures.append(
                    ConfigFileError(
                        file: location.required ? "\(settingKey) entry \(location.path)" : location.path, key: nil,
                        problem: "cannot read: \(String(cString: strerror(code)))",
                        expected: location.required ? "an existing \(noun) or directory" : nil))
                continue
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                switch Self.jsonFiles(in: location.path) {
                case .success(let names):
                    for name in names where !result.contains(location.path + "/" + name) { result.append(location.path + "/" + name) }
                case .failure(let failure):
                    failures.append(failure)
                }
            } else if !result.contains(location.path) {
                result.append(location.path)
            }
        }
        return (result, failures)
    }

    /// Reads every file found with `parse`, keeping the good ones in search order; one failure per
    /// place that could not be read, per file that could not be used, and per file that reuses a
    /// name (`name`) of an earlier one, so one bad file neither hides the others nor goes unseen.
    /// `naming` says what a name becomes, for that error (`device ids are alsa:NAME`).
    public func load<Value>(
        naming: String, parse: (String) throws(ConfigFileError) -> Value, name: (Value) -> String
    ) -> (values: [(path: String, value: Value)], failures: [ConfigFileError]) {
        let found = collect()
        var values: [(path: String, value: Value)] = []
        var failures = found.failures
        for file in found.files {
            do throws(ConfigFileError) {
                let value = try parse(file)
                if let twin = values.first(where: { name($0.value) == name(value) }) {
                    throw ConfigFileError(
                        file: file, key: "$.name", problem: "name \"\(name(value))\" is also used by \(twin.path)",
                        expected: "a name no other \(noun) uses (\(naming))")
                }
                values.append((file, value))
            } catch {
                failures.append(error)
            }
        }
        return (values, failures)
    }

    static func jsonFiles(in directory: String) -> Result<[String], ConfigFileError> {
        guard let handle = opendir(directory) else {
            return .failure(ConfigFileError(file: directory, key: nil, problem: "cannot list: \(String(cString: strerror(errno)))"))
        }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(".json"), !name.hasPrefix(".") { names.append(name) }
        }
        return .success(names.sorted())
    }
}
