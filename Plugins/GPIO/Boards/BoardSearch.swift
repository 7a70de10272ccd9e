#if canImport(Glibc)
import Glibc
#endif

/// Where board files are found, and loading all of them at once.
///
/// In order: the system directory `/etc/haptics/boards.d`, the user's
/// `$XDG_CONFIG_HOME/haptics/boards.d` (else `~/.config/haptics/boards.d`), then every entry of
/// the backend setting `gpio.boards` (a colon-separated list of files and directories; tests use
/// it). In a directory, every `*.json` file not starting with `.` is read, in name order. A
/// standard directory that does not exist is skipped; a `gpio.boards` entry that does not exist is
/// an error.
public struct BoardSearch: Sendable, Hashable {
    /// One place to look.
    public struct Location: Sendable, Hashable {
        /// A file or a directory.
        public var path: String
        /// Whether it must exist (entries of `gpio.boards`).
        public var required: Bool

        /// A location.
        public init(path: String, required: Bool) {
            self.path = path
            self.required = required
        }
    }

    /// The system-wide directory.
    public static let systemDirectory = "/etc/haptics/boards.d"
    /// The backend setting listing extra files and directories.
    public static let settingKey = "gpio.boards"

    /// The places searched, in order.
    public var locations: [Location]

    /// A search over `locations`.
    public init(locations: [Location]) {
        self.locations = locations
    }

    /// The standard search plus the `gpio.boards` setting; `environment` supplies
    /// `XDG_CONFIG_HOME` and `HOME`.
    public static func standard(setting: String?, environment: [String: String]) -> BoardSearch {
        var locations = [Location(path: systemDirectory, required: false)]
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            locations.append(Location(path: config + "/haptics/boards.d", required: false))
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            locations.append(Location(path: home + "/.config/haptics/boards.d", required: false))
        }
        for entry in (setting ?? "").split(separator: ":") where !entry.isEmpty {
            locations.append(Location(path: String(entry), required: true))
        }
        return BoardSearch(locations: locations)
    }

    /// The board files found, in search order (a file listed twice is read once).
    /// - Throws: ``BoardFileError`` for a missing `gpio.boards` entry or an unreadable directory.
    public func files() throws(BoardFileError) -> [String] {
        var result: [String] = []
        for location in locations {
            var info = stat()
            guard stat(location.path, &info) == 0 else {
                let code = errno
                if !location.required && code == ENOENT { continue }
                throw BoardFileError(
                    file: location.required ? "\(Self.settingKey) entry \(location.path)" : location.path, key: nil,
                    problem: "cannot read: \(String(cString: strerror(code)))",
                    expected: location.required ? "an existing board file or directory" : nil)
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                for name in try Self.jsonFiles(in: location.path) where !result.contains(location.path + "/" + name) {
                    result.append(location.path + "/" + name)
                }
            } else if !result.contains(location.path) {
                result.append(location.path)
            }
        }
        return result
    }

    /// Reads and validates every board file found.
    /// - Throws: ``BoardFileError`` for the first bad file, or when two files use the same board name.
    public func load() throws(BoardFileError) -> [BoardFile] {
        var boards: [BoardFile] = []
        for file in try files() {
            let board = try BoardFile.load(path: file)
            if let twin = boards.first(where: { $0.name == board.name }) {
                throw BoardFileError(
                    file: file, key: "$.name", problem: "board name \"\(board.name)\" is also used by \(twin.path)",
                    expected: "a name no other board file uses (device ids are gpio:BOARD:ACTUATOR)")
            }
            boards.append(board)
        }
        return boards
    }

    static func jsonFiles(in directory: String) throws(BoardFileError) -> [String] {
        guard let handle = opendir(directory) else {
            throw BoardFileError(file: directory, key: nil, problem: "cannot list: \(String(cString: strerror(errno)))")
        }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(".json"), !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}
