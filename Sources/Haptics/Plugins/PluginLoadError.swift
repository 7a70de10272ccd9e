/// Why a backend plugin was not loaded. Each case names the file and, where there is one, the fix.
///
/// A failing plugin never stops the others: ``PluginLoader/loadAll()`` collects these beside the
/// backends that did load.
public enum PluginLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The directory is writable by every user, so anyone could plant a plugin in it.
    case directoryWorldWritable(directory: String)
    /// The plugin file is writable by every user, so anyone could replace it.
    case fileWorldWritable(path: String)
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

    /// The plugin file (or, for ``directoryWorldWritable(directory:)``, the directory) concerned.
    public var path: String {
        switch self {
        case .directoryWorldWritable(let path), .fileWorldWritable(let path), .unreadable(let path, _),
            .dependencyMissing(let path, _, _), .openFailed(let path, _), .entryPointMissing(let path, _, _),
            .abiVersionMismatch(let path, _, _), .structSizeMismatch(let path, _, _), .functionMissing(let path, _),
            .initializationFailed(let path, _, _), .duplicateBackend(let path, _, _):
            return path
        }
    }

    public var description: String {
        switch self {
        case .directoryWorldWritable(let directory):
            return "\(directory): plugin directory is world-writable; refusing to load from it (fix: chmod o-w \(directory))"
        case .fileWorldWritable(let path):
            return "\(path): plugin file is world-writable; refusing to load it (fix: chmod o-w \(path))"
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
}
