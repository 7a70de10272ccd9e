#if canImport(Glibc)
import Glibc
#endif
import Haptics
import HapticsSupport

/// Finds and loads a feedback theme with its `parent-name` chain, the way feedbackd's theme
/// expander does (`src/fbd-theme-expander.c`), with hapticsd's own default theme in the place of
/// feedbackd's:
///
/// 1. a theme file given explicitly (`--theme`, or `$FEEDBACK_THEME` as feedbackd reads it);
/// 2. else the theme named `--theme-name` (default `default`), looked up as:
///    - the user's `$XDG_CONFIG_HOME/feedbackd/themes/NAME.json`;
///    - for `default` and `$device`, once: a device theme `$XDG_DATA_DIRS/feedbackd/themes/COMPATIBLE.json`
///      for the first device-tree `compatible` that has one (how phone themes are installed);
///    - `default` (and `$device` without a device theme): hapticsd's default haptic theme
///      (`default.json` in its theme directories, shipped as `dist/themes/default.json`);
///    - any other name: `$XDG_DATA_DIRS/feedbackd/themes/NAME.json`, then hapticsd's theme directories.
///
/// Each file's `parent-name` is resolved the same way (at most 10 levels; `default` may not have a
/// parent), and the chain is merged from the root down, each child overriding its parent's feedbacks.
public struct ThemeSearch: Sendable {
    /// `$XDG_CONFIG_HOME` (or `~/.config`).
    public var userConfigDirectory: String?
    /// `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`).
    public var dataDirectories: [String]
    /// hapticsd's own theme directories, searched in order.
    public var themeDirectories: [String]
    /// The device tree's `compatible` strings, most specific first.
    public var compatibles: [String]
    /// The deepest `parent-name` chain followed.
    public static let maximumDepth = 10

    /// A search over these directories.
    public init(userConfigDirectory: String?, dataDirectories: [String], themeDirectories: [String], compatibles: [String]) {
        self.userConfigDirectory = userConfigDirectory
        self.dataDirectories = dataDirectories
        self.themeDirectories = themeDirectories
        self.compatibles = compatibles
    }

    /// The search for this process: the XDG variables, `themeDirectories`, and `/proc/device-tree/compatible`.
    public static func standard(themeDirectories: [String]) -> ThemeSearch {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        var config = variable("XDG_CONFIG_HOME") ?? ""
        if config.isEmpty, let home = variable("HOME"), !home.isEmpty { config = home + "/.config" }
        let data = (variable("XDG_DATA_DIRS").flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init)
        return ThemeSearch(
            userConfigDirectory: config.isEmpty ? nil : config, dataDirectories: data, themeDirectories: themeDirectories,
            compatibles: deviceTreeCompatibles())
    }

    /// `/proc/device-tree/compatible`: NUL-separated strings (empty on machines without a device tree).
    public static func deviceTreeCompatibles(path: String = "/proc/device-tree/compatible") -> [String] {
        guard let bytes = try? readFile(atPath: path, limit: 4096) else { return [] }
        return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.filter { !$0.isEmpty && !$0.contains("/") }
    }

    /// What loading gave: the merged theme, the files read (the named one first), and what was ignored.
    public struct Loaded: Sendable {
        public var theme: FeedbackTheme
        public var files: [String]
        public var warnings: [String]
    }

    /// Loads `file` if given, else the theme called `name`, with its parent chain.
    public func load(file: String?, name: String) throws(ThemeError) -> Loaded {
        var deviceThemeTried = false
        var warnings: [String] = []
        var path: String
        if let file {
            path = file
        } else {
            guard let found = self.path(for: name, deviceThemeTried: &deviceThemeTried) else {
                throw ThemeError(file: "theme '\(name)'", problem: "not found in \(searched(name).joined(separator: ", "))")
            }
            path = found
        }
        var chain: [FeedbackTheme] = []
        var files: [String] = []
        while true {
            guard chain.count <= Self.maximumDepth else {
                throw ThemeError(file: files.first ?? path, problem: "the parent-name chain is deeper than \(Self.maximumDepth) (\(files.joined(separator: " → ")))")
            }
            let bytes: [UInt8]
            do { bytes = try readFile(atPath: path, limit: 4 << 20) } catch {
                throw ThemeError(file: path, problem: "cannot read the theme: \(error)")
            }
            let theme = try FeedbackTheme.parse(bytes, file: path, warnings: &warnings)
            if theme.name == "default", let parent = theme.parentName {
                throw ThemeError(file: path, problem: "the default theme cannot have a parent (parent-name '\(parent)')")
            }
            chain.append(theme)
            files.append(path)
            guard let parent = theme.parentName else { break }
            guard let parentPath = self.path(for: parent, deviceThemeTried: &deviceThemeTried) else {
                throw ThemeError(file: path, problem: "parent-name '\(parent)' not found in \(searched(parent).joined(separator: ", "))")
            }
            path = parentPath
        }
        var merged = FeedbackTheme(name: chain[0].name)
        for theme in chain.reversed() { merged.update(with: theme) }
        merged.parentName = nil
        return Loaded(theme: merged, files: files, warnings: warnings)
    }

    /// The file for the theme called `name`, per the order above.
    func path(for name: String, deviceThemeTried: inout Bool) -> String? {
        let fileName = name + ".json"
        if let config = userConfigDirectory, exists(config + "/feedbackd/themes/" + fileName) {
            return config + "/feedbackd/themes/" + fileName
        }
        if name == "default" || name == "$device", !deviceThemeTried {
            deviceThemeTried = true
            for compatible in compatibles {
                for directory in dataDirectories where exists(directory + "/feedbackd/themes/" + compatible + ".json") {
                    return directory + "/feedbackd/themes/" + compatible + ".json"
                }
            }
        }
        if name == "default" || name == "$device" {
            return themeDirectories.map { $0 + "/default.json" }.first(where: exists)
        }
        for directory in dataDirectories where exists(directory + "/feedbackd/themes/" + fileName) {
            return directory + "/feedbackd/themes/" + fileName
        }
        return themeDirectories.map { $0 + "/" + fileName }.first(where: exists)
    }

    /// `path` with `.` and `..` components resolved lexically.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == "..", !parts.isEmpty {
                parts.removeLast()
                continue
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    private func searched(_ name: String) -> [String] {
        var places: [String] = []
        if let config = userConfigDirectory { places.append(config + "/feedbackd/themes") }
        if name != "default", name != "$device" { places += dataDirectories.map { $0 + "/feedbackd/themes" } }
        places += themeDirectories
        return places
    }

    private func exists(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }
}
