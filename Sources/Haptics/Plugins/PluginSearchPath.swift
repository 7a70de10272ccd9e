#if canImport(Glibc)
import Glibc
#endif

/// Where the loader looks for backend plugins (files named `libhaptics-NAME.so`), in order.
///
/// The standard order is `$HAPTICS_PLUGIN_PATH` (a colon-separated list), then the directory of
/// the running executable (where `swift build` puts the plugins beside `haptic-cal` and the test
/// runner), then the install prefix's `lib/haptics` (the executable's `../lib/haptics`, as
/// `Scripts/install` lays it out). A file name found twice loads from the first directory only.
public struct PluginSearchPath: Sendable, Hashable {
    /// The directories, searched in order.
    public var directories: [String]

    /// A search path of exactly these directories.
    public init(directories: [String]) {
        self.directories = directories
    }

    /// The standard search path for this process, with `$HAPTICS_PLUGIN_PATH` read from the environment.
    public static func standard() -> PluginSearchPath {
        standard(pluginPath: Environment.value("HAPTICS_PLUGIN_PATH"))
    }

    /// The standard search path with `pluginPath` standing for `$HAPTICS_PLUGIN_PATH`.
    public static func standard(pluginPath: String?) -> PluginSearchPath {
        var directories = (pluginPath ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        if let executableDirectory = executableDirectory() {
            directories.append(executableDirectory)
            directories.append(ProcessPaths.normalize(executableDirectory + "/../lib/haptics"))
        }
        var seen = Set<String>()
        return PluginSearchPath(directories: directories.filter { seen.insert($0).inserted })
    }

    /// The directory of `/proc/self/exe`.
    public static func executableDirectory() -> String? {
        guard let path = ProcessPaths.executablePath(), let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
