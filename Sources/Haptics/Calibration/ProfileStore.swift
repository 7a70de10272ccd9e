import HapticsSupport
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Where calibration profiles live, and which one a device gets.
///
/// **Directories.** User profiles (written by `haptic-cal calibrate` and `profile import`) are in
/// `$XDG_CONFIG_HOME/haptics/profiles/` when `XDG_CONFIG_HOME` is set to an absolute path, else
/// `$HOME/.config/haptics/profiles/`. Shipped defaults are searched, in order, in:
/// 1. every directory of `$HAPTICS_PROFILE_PATH` (a colon-separated list);
/// 2. the install prefix's `share/haptics/profiles` (the running executable's `../share/haptics/profiles`);
/// 3. the source tree's `Hardware/profiles`, only when the executable runs from a SwiftPM build
///    directory: the executable's path contains a `.build` component, and the directory holding
///    that `.build` has a `Package.swift`. An installed program never reads a source tree.
///
/// **Files.** A profile for the id `ID` is the file `<directory>/<name>.json`, where `<name>` is
/// the id with each `:` written as `_`, letters, digits, `.` and `-` kept, and every other byte
/// (including `_` itself and a leading `.`) written as `%XX`: `recording:lra` → `recording_lra.json`,
/// `gpio:drv2603-lra:lra` → `gpio_drv2603-lra_lra.json`. The mapping is one-to-one.
///
/// **Lookup.** For a device `a:b:c:d` the candidates are its id, then its shorter `:`-prefixes
/// with at least two components (`a:b:c`, `a:b`), so one shipped file can cover every unit of a
/// model (`hid:054c:0ce6` for every DualSense). More specific ids win; at equal specificity the
/// user's directory wins over the shipped ones, and earlier shipped directories over later ones.
/// A file is used only if it parses, names the candidate id (or no id), has as many channels as
/// the device, and its usable bands lie in the channels' frequency ranges; otherwise it is
/// skipped, the reason is logged and reported by ``lookup(for:)``, and the search goes on.
public struct ProfileStore: Sendable, Hashable {
    /// Where a profile was found.
    public enum Origin: String, Sendable, Hashable {
        /// The user's profile directory.
        case user
        /// A directory of shipped defaults.
        case shipped
    }

    /// A profile found for a device.
    public struct Entry: Sendable, Hashable {
        /// The profile.
        public var profile: CalibrationProfile
        /// The file it was read from.
        public var path: String
        /// Which kind of directory holds it.
        public var origin: Origin
    }

    /// The user's profile directory (written to by ``save(_:)``), if there is a home to put it in.
    public var userDirectory: String?
    /// Directories of shipped defaults, searched in order after the user's.
    public var shippedDirectories: [String]

    /// A store over exactly these directories.
    public init(userDirectory: String?, shippedDirectories: [String]) {
        self.userDirectory = userDirectory
        self.shippedDirectories = shippedDirectories
    }

    /// The store this process uses, from the environment at the time of the call (so a test or a
    /// program that sets `XDG_CONFIG_HOME` or `HAPTICS_PROFILE_PATH` first is honoured).
    public static var standard: ProfileStore {
        ProfileStore(
            userDirectory: userDirectory(xdgConfigHome: Environment.value("XDG_CONFIG_HOME"), home: Environment.value("HOME") ?? passwdHome()),
            shippedDirectories: shippedDirectories(
                profilePath: Environment.value("HAPTICS_PROFILE_PATH"), executablePath: ProcessPaths.executablePath()))
    }

    /// The user profile directory for these environment values (see the type's documentation).
    public static func userDirectory(xdgConfigHome: String?, home: String?) -> String? {
        if let config = xdgConfigHome, config.hasPrefix("/") { return config + "/haptics/profiles" }
        if let home, !home.isEmpty { return home + "/.config/haptics/profiles" }
        return nil
    }

    /// The shipped-profile directories for a `$HAPTICS_PROFILE_PATH` value and the running
    /// executable's absolute path (see the type's documentation); directories that do not exist are
    /// left out, except those named explicitly in `profilePath`.
    public static func shippedDirectories(profilePath: String?, executablePath: String?) -> [String] {
        var directories = (profilePath ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        if let executablePath, let slash = executablePath.lastIndex(of: "/") {
            let executableDirectory = String(executablePath[..<slash])
            let installed = ProcessPaths.normalize(executableDirectory + "/../share/haptics/profiles")
            if isDirectory(installed) { directories.append(installed) }
            let components = executablePath.split(separator: "/")
            if let build = components.lastIndex(of: ".build") {
                let root = "/" + components[..<build].joined(separator: "/")
                let tree = ProcessPaths.normalize(root + "/Hardware/profiles")
                if isRegularFile(root + "/Package.swift"), isDirectory(tree) { directories.append(tree) }
            }
        }
        var seen = Set<String>()
        return directories.filter { seen.insert($0).inserted }
    }

    /// The file name (without directory) of the profile for `deviceID`: `recording:lra` → `recording_lra.json`.
    public static func fileName(for deviceID: String) -> String {
        var name = ""
        for (offset, byte) in deviceID.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: ":"): name += "_"
            case UInt8(ascii: "."):
                name += offset == 0 ? "%2E" : "."
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                name += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return name + ".json"
    }

    /// The ids a device's profile may be filed under, most specific first: the id, then its
    /// `:`-prefixes of at least two components.
    public static func candidateIDs(for deviceID: String) -> [String] {
        let parts = deviceID.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count > 2 else { return [deviceID] }
        return [deviceID] + (2..<parts.count).reversed().map { parts[..<$0].joined(separator: ":") }
    }

    /// Where ``save(_:)`` writes the profile for `deviceID`, if there is a user directory.
    public func userProfilePath(for deviceID: String) -> String? {
        userDirectory.map { $0 + "/" + Self.fileName(for: deviceID) }
    }

    /// The profile `device` gets, and every file that was skipped on the way with why.
    public func lookup(for device: DeviceDescription) -> (entry: Entry?, problems: [ProfileError]) {
        var problems: [ProfileError] = []
        var directories: [(String, Origin)] = []
        if let userDirectory { directories.append((userDirectory, .user)) }
        directories += shippedDirectories.map { ($0, .shipped) }
        for candidate in Self.candidateIDs(for: device.id) {
            for (directory, origin) in directories {
                let path = directory + "/" + Self.fileName(for: candidate)
                guard Self.isRegularFile(path) else { continue }
                do {
                    let profile = try ProfileFormat.read(path: path)
                    try Self.check(profile, file: path, fileID: candidate, device: device)
                    return (Entry(profile: profile, path: path, origin: origin), problems)
                } catch {
                    problems.append(error)
                }
            }
        }
        return (nil, problems)
    }

    /// The profile for `device`, if a usable one exists; skipped files are logged as warnings.
    public func profile(for device: DeviceDescription) -> CalibrationProfile? {
        let (entry, problems) = lookup(for: device)
        if !problems.isEmpty {
            let logger = Logger(label: "haptics.profiles")
            for problem in problems { logger.warning("ignoring profile: \(problem)") }
        }
        return entry?.profile
    }

    /// Whether `profile` can drive `device` (channel count, id, frequency bands); the error names the file.
    public static func check(_ profile: CalibrationProfile, file: String, fileID: String? = nil, device: DeviceDescription) throws(ProfileError) {
        if let id = profile.deviceID, let fileID, id != fileID {
            throw ProfileError(file: file, location: "$.device_id", problem: "the profile is for '\(id)', but its file name is for '\(fileID)'")
        }
        if let id = profile.deviceID, !candidateIDs(for: device.id).contains(id) {
            throw ProfileError(file: file, location: "$.device_id", problem: "the profile is for '\(id)', not for device '\(device.id)'")
        }
        guard profile.channels.count == device.channels.count else {
            throw ProfileError(
                file: file, location: "$.channels",
                problem: "the profile has \(profile.channels.count) channel(s); device '\(device.id)' has \(device.channels.count)")
        }
        for (index, (calibration, channel)) in zip(profile.channels, device.channels).enumerated() {
            guard let band = calibration.usableBand else { continue }
            guard let range = channel.frequencyRange else {
                throw ProfileError(
                    file: file, location: "$.channels[\(index)].usable_band_hz",
                    problem: "channel '\(channel.name)' of '\(device.id)' cannot choose its frequency; remove the band")
            }
            guard range.lowerBound <= band.lowerBound + 1e-9, band.upperBound <= range.upperBound + 1e-9 else {
                throw ProfileError(
                    file: file, location: "$.channels[\(index)].usable_band_hz",
                    problem: "[\(JSONValue.format(band.lowerBound)), \(JSONValue.format(band.upperBound))] Hz lies outside the channel's range "
                        + "\(JSONValue.format(range.lowerBound))...\(JSONValue.format(range.upperBound)) Hz")
            }
        }
    }

    /// Writes `profile` to the user directory, atomically, under its device id; returns the path.
    /// - Throws: ``ProfileError`` when the profile has no device id, there is no user directory, or writing fails.
    @discardableResult
    public func save(_ profile: CalibrationProfile) throws(ProfileError) -> String {
        guard let id = profile.deviceID else {
            throw ProfileError(file: "<profile>", location: "$.device_id", problem: "a profile needs a device id to be saved")
        }
        guard let userDirectory, let path = userProfilePath(for: id) else {
            throw ProfileError(file: "<profile>", location: nil, problem: "no user profile directory: set HOME or XDG_CONFIG_HOME")
        }
        try Self.makeDirectories(userDirectory)
        try Self.write(profile, toPath: path)
        return path
    }

    /// Writes `profile` to `path` atomically: a crash at any moment leaves the previous file or the
    /// new one, complete (see `writeFileAtomically`).
    public static func write(_ profile: CalibrationProfile, toPath path: String) throws(ProfileError) {
        do {
            try writeFileAtomically(Array(ProfileFormat.encode(profile).utf8), toPath: path)
        } catch {
            throw ProfileError(file: path, location: nil, problem: "cannot write: \(error)")
        }
    }

    /// Every profile file in the store's directories (user first), with the problems of those that do not parse.
    public func allProfiles() -> (entries: [Entry], problems: [ProfileError]) {
        var entries: [Entry] = [], problems: [ProfileError] = []
        var directories: [(String, Origin)] = []
        if let userDirectory { directories.append((userDirectory, .user)) }
        directories += shippedDirectories.map { ($0, .shipped) }
        for (directory, origin) in directories {
            for name in Self.fileNames(in: directory) where name.hasSuffix(".json") && !name.hasPrefix(".") {
                let path = directory + "/" + name
                do {
                    entries.append(Entry(profile: try ProfileFormat.read(path: path), path: path, origin: origin))
                } catch {
                    problems.append(error)
                }
            }
        }
        return (entries, problems)
    }

    // MARK: - File system

    static func makeDirectories(_ path: String) throws(ProfileError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                let code = errno
                throw ProfileError(file: current, location: nil, problem: "cannot create the directory: \(String(cString: strerror(code)))")
            }
        }
        guard isDirectory(path) else {
            throw ProfileError(file: path, location: nil, problem: "exists but is not a directory")
        }
    }

    static func fileNames(in directory: String) -> [String] {
        directoryEntries(atPath: directory)
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    static func passwdHome() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
