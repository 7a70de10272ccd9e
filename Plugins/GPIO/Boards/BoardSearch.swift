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
    /// - Throws: the first ``BoardFileError``: a missing `gpio.boards` entry or an unreadable directory.
    public func files() throws(BoardFileError) -> [String] {
        let found = collectFiles()
        if let first = found.failures.first { throw first }
        return found.files
    }

    /// What ``load()`` found: the boards that are good, and one error per file or place that is not.
    public struct Loaded: Sendable {
        /// The valid board files, in search order.
        public var boards: [BoardFile]
        /// Each file that could not be used (with the JSON path and the fix), each missing
        /// `gpio.boards` entry and each unreadable directory.
        public var failures: [BoardFileError]
    }

    /// Reads and validates every board file found. One bad file (or a second file reusing a board
    /// name) is reported in ``Loaded/failures`` and the others still load.
    public func load() -> Loaded {
        var (files, failures) = collectFiles()
        var boards: [BoardFile] = []
        for file in files {
            do throws(BoardFileError) {
                let board = try BoardFile.load(path: file)
                if let twin = boards.first(where: { $0.name == board.name }) {
                    throw BoardFileError(
                        file: file, key: "$.name", problem: "board name \"\(board.name)\" is also used by \(twin.path)",
                        expected: "a name no other board file uses (device ids are gpio:BOARD:ACTUATOR)")
                }
                boards.append(board)
            } catch {
                failures.append(error)
            }
        }
        return Loaded(boards: boards, failures: failures)
    }

    private func collectFiles() -> (files: [String], failures: [BoardFileError]) {
        var result: [String] = []
        var failures: [BoardFileError] = []
        for location in locations {
            var info = stat()
            guard stat(location.path, &info) == 0 else {
                let code = errno
                if !location.required && code == ENOENT { continue }
                failures.append(
                    BoardFileError(
                        file: location.required ? "\(Self.settingKey) entry \(location.path)" : location.path, key: nil,
                        problem: "cannot read: \(String(cString: strerror(code)))",
                        expected: location.required ? "an existing board file or directory" : nil))
                continue
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                do throws(BoardFileError) {
                    for name in try Self.jsonFiles(in: location.path) where !result.contains(location.path + "/" + name) {
                        result.append(location.path + "/" + name)
                    }
                } catch {
                    failures.append(error)
                }
            } else if !result.contains(location.path) {
                result.append(location.path)
            }
        }
        return (result, failures)
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
