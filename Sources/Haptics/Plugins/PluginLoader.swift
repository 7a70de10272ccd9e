#if canImport(Glibc)
import Glibc
#endif
import CHapticsABI
import HapticsSupport
import Logging

/// What ``PluginLoader/loadAll()`` found: the backends that loaded and, for every plugin that did
/// not, why.
public struct PluginLoadReport: Sendable {
    /// Backends that loaded, in search order.
    public var backends: [Backend]
    /// One typed error per plugin (or directory) that was refused or failed.
    public var failures: [PluginLoadError]
    /// The directories searched, in order.
    public var searchedDirectories: [String]
}

/// Finds, opens and validates backend plugins (`libhaptics-NAME.so`) through the C ABI.
///
/// Each plugin is opened with `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)` and never closed:
/// unloading a Swift plugin and loading another is not safe. Only files that root or the user own,
/// that no one else can write, that are no symbolic link, and whose directories up to `/` are as
/// safe, are loaded (``PluginFileCheck``). Every check (ownership and modes, ABI version, table
/// size, each required function) has its own error.
public struct PluginLoader: Sendable {
    /// The file-name prefix and suffix of a plugin: `libhaptics-NAME.so`.
    public static let filePrefix = "libhaptics-"
    /// See ``filePrefix``.
    public static let fileSuffix = ".so"

    /// Where to look.
    public var searchPath: PluginSearchPath
    /// Configuration passed to every backend instance through `get_config` (environment variables
    /// `HAPTICS_KEY_NAME` fill in keys not set here).
    public var settings: [String: String]
    /// Receives plugin log lines and load diagnostics.
    public var logger: Logger

    /// A loader over `searchPath` with `settings` for the backends.
    public init(
        searchPath: PluginSearchPath = .standard(), settings: [String: String] = [:],
        logger: Logger = Logger(label: "haptics.plugins")
    ) {
        self.searchPath = searchPath
        self.settings = settings
        self.logger = logger
    }

    /// Loads every plugin on the search path. A plugin that fails is reported and skipped.
    public func loadAll() -> PluginLoadReport {
        var report = PluginLoadReport(backends: [], failures: [], searchedDirectories: searchPath.directories)
        var loadedFrom: [String: String] = [:]
        let (files, refusals) = candidateFiles()
        report.failures += refusals
        for file in files {
            do {
                let backend = try load(path: file)
                if let first = loadedFrom[backend.name] {
                    report.failures.append(.duplicateBackend(path: file, name: backend.name, loadedFrom: first))
                    continue
                }
                loadedFrom[backend.name] = file
                report.backends.append(backend)
            } catch {
                logger.warning("\(error)")
                report.failures.append(error)
            }
        }
        return report
    }

    /// The plugin files on the search path (the first of each file name), and the directories refused.
    public func candidateFiles() -> (files: [String], refused: [PluginLoadError]) {
        var files: [String] = []
        var refused: [PluginLoadError] = []
        var seenNames = Set<String>()
        for directory in searchPath.directories {
            var info = stat()
            guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
            let names = Self.pluginNames(in: directory)
            if names.isEmpty { continue }
            do throws(PluginLoadError) {
                try PluginFileCheck.checkDirectories(of: directory + "/" + names[0])
            } catch {
                refused.append(error)
                continue
            }
            for name in names where seenNames.insert(name).inserted {
                files.append(directory + "/" + name)
            }
        }
        return (files, refused)
    }

    private static func pluginNames(in directory: String) -> [String] {
        directoryEntries(atPath: directory).filter {
            $0.hasPrefix(filePrefix) && $0.hasSuffix(fileSuffix) && $0.count > filePrefix.count + fileSuffix.count
        }.sorted()
    }

    /// Called after a plugin file passed the checks and was opened, before it is loaded through
    /// that descriptor (with the path checked). Only for tests: they swap the file here to prove
    /// the loader keeps what it checked.
    public var afterCheck: (@Sendable (String) -> Void)?

    /// Loads one plugin file and creates a backend instance from it.
    ///
    /// The file is checked the way OpenSSH's `safe_path` checks keys (``PluginFileCheck``), opened
    /// once with `O_NOFOLLOW`, checked again through that descriptor (`fstat`), and loaded through
    /// it (`dlopen("/proc/self/fd/N")`), so a file swapped after the check is never the one loaded.
    public func load(path: String) throws(PluginLoadError) -> Backend {
        let (symbol, realPath) = try PluginImages.load(path, entry: HAPTICS_BACKEND_ENTRY, afterCheck: afterCheck)
        let fill = unsafeBitCast(symbol, to: haptics_backend_fill_v1_fn.self)

        var settings = self.settings
        settings[Self.pluginPathKey] = realPath
        let host = HostContext(settings: settings, logger: logger)
        var table = haptics_backend_v1()
        let rc = fill(host.table, &table, MemoryLayout<haptics_backend_v1>.size)
        guard rc == 0 else { throw .initializationFailed(path: path, code: rc, messages: host.takeMessages()) }
        guard table.abi_version == HAPTICS_ABI_VERSION else {
            // The layout cannot be trusted: the instance is leaked rather than destroyed through it.
            throw .abiVersionMismatch(path: path, found: table.abi_version, expected: HAPTICS_ABI_VERSION)
        }
        // ABI 1.0's table is the least a plugin fills; functions appended since are optional.
        let minimumSize = UInt32(Self.minimumTableSize)
        guard table.struct_size >= minimumSize else {
            throw .structSizeMismatch(path: path, found: table.struct_size, minimum: minimumSize)
        }
        let required: [(String, Bool)] = [
            ("enumerate", table.enumerate != nil), ("open", table.open != nil), ("close", table.close != nil),
            ("wake", table.wake != nil), ("sleep", table.sleep != nil), ("submit", table.submit != nil),
            ("stop", table.stop != nil), ("last_error", table.last_error != nil), ("destroy", table.destroy != nil),
        ]
        if let missing = required.first(where: { !$0.1 }) {
            table.destroy?(table.instance)
            throw .functionMissing(path: path, function: missing.0)
        }
        var name = cString(table.name)
        if name.isEmpty {
            let file = path.split(separator: "/").last.map(String.init) ?? path
            name = String(file.dropFirst(Self.filePrefix.count).dropLast(Self.fileSuffix.count))
        }
        return Backend(name: name, path: path, table: table, host: host)
    }

    /// The setting the host answers with the plugin's real path (`get_config("plugin.path")`), so a
    /// plugin finds files installed beside it.
    public static let pluginPathKey = "plugin.path"

    /// The size of ABI 1.0's backend table (`HAPTICS_BACKEND_V1_MIN_SIZE`): the nine required functions.
    public static let minimumTableSize = MemoryLayout<haptics_backend_v1>.offset(of: \.describe)!

    /// Tells a missing dependency (`libfoo.so.1: cannot open shared object file`) from other failures.
    static func openError(path: String, text: String) -> PluginLoadError {
        let marker = ": cannot open shared object file"
        if let range = text.firstRange(of: marker) {
            let library = String(text[..<range.lowerBound])
            let libraryName = library.split(separator: "/").last.map(String.init) ?? library
            let pluginName = path.split(separator: "/").last.map(String.init) ?? path
            if libraryName != pluginName {
                return .dependencyMissing(path: path, library: library, dlerror: text)
            }
        }
        return .openFailed(path: path, dlerror: text)
    }
}
