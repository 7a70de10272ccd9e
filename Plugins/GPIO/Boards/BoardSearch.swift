import HapticsSupport

/// Where board files are found, and loading all of them at once: a ``ConfigSearch`` for
/// `boards.d` and the setting `gpio.boards`.
///
/// In order: the system directory `/etc/haptics/boards.d`, the user's
/// `$XDG_CONFIG_HOME/haptics/boards.d` (else `~/.config/haptics/boards.d`), then every entry of
/// the backend setting `gpio.boards` (a colon-separated list of files and directories; tests use
/// it). In a directory, every `*.json` file not starting with `.` is read, in name order. A
/// standard directory that does not exist is skipped; a `gpio.boards` entry that does not exist is
/// an error.
public struct BoardSearch: Sendable, Hashable {
    /// One place to look.
    public typealias Location = ConfigSearch.Location

    /// The system-wide directory.
    public static let systemDirectory = "/etc/haptics/boards.d"
    /// The backend setting listing extra files and directories.
    public static let settingKey = "gpio.boards"

    /// The backend setting I²C boards are also found through (the `i2c` backend's).
    public static let i2cSettingKey = "i2c.boards"

    /// The places searched, in order.
    public var locations: [Location]
    /// The setting whose entries end the search (named in errors): ``settingKey`` or ``i2cSettingKey``.
    public var setting: String

    /// A search over `locations`.
    public init(locations: [Location], setting: String = BoardSearch.settingKey) {
        self.locations = locations
        self.setting = setting
    }

    /// The standard search plus the setting `key` (`gpio.boards`, or `i2c.boards` for the `i2c`
    /// backend) whose value is `setting`; `environment` supplies `XDG_CONFIG_HOME` and `HOME`.
    public static func standard(setting: String?, key: String = BoardSearch.settingKey, environment: [String: String]) -> BoardSearch {
        BoardSearch(
            locations: ConfigSearch.standard(directory: "boards.d", settingKey: key, setting: setting, environment: environment).locations, setting: key)
    }

    /// The board files found, in search order (a file listed twice is read once).
    /// - Throws: the first ``BoardFileError``: a missing `gpio.boards` entry or an unreadable directory.
    public func files() throws(BoardFileError) -> [String] {
        let found = search.collect()
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
        let loaded = search.load(
            naming: "device ids are gpio:BOARD:ACTUATOR and i2c:BOARD:ACTUATOR", parse: { (path) throws(BoardFileError) in try BoardFile.load(path: path) }, name: \.name)
        return Loaded(boards: loaded.values.map(\.value), failures: loaded.failures)
    }

    /// The search over ``locations``.
    private var search: ConfigSearch { ConfigSearch(locations: locations, settingKey: setting, noun: "board file") }
}
