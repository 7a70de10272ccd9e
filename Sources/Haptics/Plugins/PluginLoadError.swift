#if canImport(Glibc)
import Glibc
#endif

/// Why a backend plugin was not loaded. Each case names the file and, where there is one, the fix.
///
/// A failing plugin never stops the others: ``PluginLoader/loadAll()`` collects these beside the
/// backends that did load.
public enum PluginLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why a plugin file or a directory above it is not trusted.
    public enum UnsafeReason: Sendable, Hashable {
        /// Writable by every user: anyone could plant or replace a plugin.
        case worldWritable
        /// Writable by its group: every member could plant or replace a plugin.
        case groupWritable
        /// Owned by a user who is neither root nor the user running the host (`uid`).
        case foreignOwner(uid: UInt32)
        /// The plugin file is a symbolic link (whoever controls the link's target controls the code).
        case symbolicLink
        /// The plugin is not a regular file.
        case notRegularFile
    }

    /// A directory on the way to the plugin (the plugin's own, or one above it) is not trusted, so
    /// someone other than root and the user could plant a plugin or swap a directory.
    case unsafeDirectory(directory: String, reason: UnsafeReason)
    /// The plugin file is not trusted.
    case unsafeFile(path: String, reason: UnsafeReason)
    /// The file could not be inspected (`stat` failed).
    case unreadable(path: String, errno: Int32)
    /// `dlopen` failed because a shared library the plugin needs is not installed.
    case dependencyMissing(path: String, library: String, dlerror: String)
    /// `dlopen` failed for another reason (not an ELF shared object, wrong architecture, unresolved symbol).
    case openFailed(path: String, dlerror: String)
    /// The file has no `haptics_backend_fill_v1` symbol: it is not a swift-haptics backend (or an older/newer one).
    case entryPointMissing(path: String, symbol: String, dlerror: String)
    /// The plugin filled its table for another ABI version.
    case abiVersionMismatch(path: String, found: UInt32, expected: UInt32)
    /// The plugin's table is smaller than ABI version 1 requires.
    case structSizeMismatch(path: String, found: UInt32, minimum: UInt32)
    /// A required function pointer in the plugin's table is NULL.
    case functionMissing(path: String, function: String)
    /// The plugin's entry point returned an error (a negative errno value), with what it logged.
    case initializationFailed(path: String, code: Int32, messages: [String])
    /// Another plugin already provides a backend of this name.
    case duplicateBackend(path: String, name: String, loadedFrom: String)

    /// The plugin file (or, for ``unsafeDirectory(directory:reason:)``, the directory) concerned.
    public var path: String {
        switch self {
        case .unsafeDirectory(let path, _), .unsafeFile(let path, _), .unreadable(let path, _),
            .dependencyMissing(let path, _, _), .openFailed(let path, _), .entryPointMissing(let path, _, _),
            .abiVersionMismatch(let path, _, _), .structSizeMismatch(let path, _, _), .functionMissing(let path, _),
            .initializationFailed(let path, _, _), .duplicateBackend(let path, _, _):
            return path
        }
    }

    public var description: String {
        switch self {
        case .unsafeDirectory(let directory, let reason):
            return "\(directory): \(Self.explain(reason, kind: "directory", path: directory)); refusing to load plugins below it"
        case .unsafeFile(let path, let reason):
            return "\(path): \(Self.explain(reason, kind: "plugin file", path: path)); refusing to load it"
        case .unreadable(let path, let code):
            return "\(path): cannot inspect plugin: \(describeErrno(code))"
        case .dependencyMissing(let path, let library, let text):
            return "\(path): needs \(library), which is not installed (install the package providing it); dlerror: \(text)"
        case .openFailed(let path, let text):
            return "\(path): dlopen failed: \(text)"
        case .entryPointMissing(let path, let symbol, let text):
            return "\(path): no entry point \(symbol); not a swift-haptics ABI v1 backend; dlerror: \(text)"
        case .abiVersionMismatch(let path, let found, let expected):
            return "\(path): built for backend ABI version \(found), this host speaks version \(expected) (rebuild the plugin against haptics_backend.h)"
        case .structSizeMismatch(let path, let found, let minimum):
            return "\(path): backend table is \(found) bytes, ABI v1 needs at least \(minimum) (rebuild the plugin against haptics_backend.h)"
        case .functionMissing(let path, let function):
            return "\(path): required function '\(function)' is NULL in the backend table"
        case .initializationFailed(let path, let code, let messages):
            let said = messages.isEmpty ? "" : ": " + messages.joined(separator: "; ")
            return "\(path): backend initialisation failed with \(describeErrno(-code))\(said)"
        case .duplicateBackend(let path, let name, let loadedFrom):
            return "\(path): a backend named '\(name)' is already loaded from \(loadedFrom); skipped"
        }
    }

    private static func explain(_ reason: UnsafeReason, kind: String, path: String) -> String {
        switch reason {
        case .worldWritable: return "\(kind) is writable by every user (fix: chmod o-w \(path))"
        case .groupWritable: return "\(kind) is writable by its group (fix: chmod g-w \(path))"
        case .foreignOwner(let uid):
            return "\(kind) belongs to uid \(uid), neither root nor the user running this program (uid \(geteuid())) (fix: chown root \(path), or install it somewhere you own)"
        case .symbolicLink:
            return "\(kind) is a symbolic link (fix: install the file itself, or put its real directory on HAPTICS_PLUGIN_PATH)"
        case .notRegularFile: return "\(kind) is not a regular file"
        }
    }
}
