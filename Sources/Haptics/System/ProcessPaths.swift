#if canImport(Glibc)
import Glibc
#endif

/// Paths of the running process, shared by the plugin search path and the profile store.
enum ProcessPaths {
    /// `/proc/self/exe`: the running executable's path.
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` with `.` and `..` components resolved lexically.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == "..", !parts.isEmpty { parts.removeLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}
