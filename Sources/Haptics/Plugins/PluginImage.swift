#if canImport(Glibc)
import Glibc
#endif

extension PluginImages {
    /// Checks the file at `path` (``PluginFileCheck``), opens it once, loads it through that descriptor
    /// (`dlopen("/proc/self/fd/N")`, `RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE`, never unloaded) and finds
    /// `entry`: the one way both backends and the hapticsd client transport are loaded.
    /// - Parameter afterCheck: called between the check and the load (tests swap the file there).
    /// - Returns: the entry point and the file's real path.
    static func load(_ path: String, entry: String, afterCheck: ((String) -> Void)? = nil) throws(PluginLoadError) -> (symbol: UnsafeMutableRawPointer, realPath: String) {
        let opened = try PluginFileCheck.open(path)
        let descriptor = descriptor(for: opened)
        afterCheck?(path)

        let image = "/proc/self/fd/\(descriptor)"
        _ = dlerror()
        guard let library = dlopen(image, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let text = dlerror().map { String(cString: $0) } ?? "unknown error"
            discard(opened, descriptor: descriptor)
            throw PluginLoader.openError(path: path, text: text.replacing(image, with: path))
        }
        // Never dlclose: RTLD_NODELETE keeps the image, and unloading Swift plugins is unsafe.
        _ = dlerror()
        guard let symbol = dlsym(library, entry) else {
            let text = dlerror().map { String(cString: $0) } ?? "symbol not found"
            throw .entryPointMissing(path: path, symbol: entry, dlerror: text.replacing(image, with: path))
        }
        return (symbol, opened.realPath)
    }
}
