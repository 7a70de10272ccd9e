import Foundation
import Glibc

/// Small, errno-preserving file helpers for sysfs, configfs and debugfs.
///
/// Every failure is a ``RigError/system(operation:path:errno:)`` naming the path, which is what
/// one wants to see when a kernel interface refuses a write (`EINVAL`, `EBUSY`, …).
public enum SysFS {
    /// Reads the whole file at `path` as UTF-8.
    public static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RigError.errno("open", path) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw RigError.errno("read", path)
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads the file at `path` without surrounding white space (the usual sysfs attribute).
    public static func value(_ path: String) throws -> String {
        try read(path).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Reads the file at `path` as an integer attribute.
    public static func integer(_ path: String) throws -> Int64 {
        let text = try value(path)
        guard let number = Int64(text) else {
            throw RigError.invalidArgument("\(path) holds \(text.debugDescription), not an integer")
        }
        return number
    }

    /// Writes `text` to the attribute at `path` in one `write(2)` (as `echo text > path` does).
    public static func write(_ path: String, _ text: String) throws {
        try write(path, bytes: Array(text.utf8), shown: text.debugDescription)
    }

    /// Writes `bytes` to the attribute at `path` in one `write(2)`: a binary configfs attribute
    /// such as a HID gadget's `report_desc`.
    public static func write(_ path: String, bytes: [UInt8]) throws {
        try write(path, bytes: bytes, shown: "\(bytes.count) bytes")
    }

    private static func write(_ path: String, bytes: [UInt8], shown: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RigError.errno("open", path) }
        defer { close(fd) }
        while true {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw RigError.errno("write \(shown) to", path) }
            if n != bytes.count {
                throw RigError.system(operation: "short write to", path: path, errno: EIO)
            }
            return
        }
    }

    /// Whether `path` exists (follows symbolic links).
    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The names in directory `path`, sorted, without `.` and `..`.
    public static func list(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw RigError.errno("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The target of the symbolic link at `path`.
    public static func readLink(_ path: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { throw RigError.errno("readlink", path) }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates directory `path` (configfs objects are made this way).
    public static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
        guard mkdir(path, mode) == 0 else { throw RigError.errno("mkdir", path) }
    }

    /// Removes directory `path` (configfs objects are removed this way).
    public static func removeDirectory(_ path: String) throws {
        guard rmdir(path) == 0 else { throw RigError.errno("rmdir", path) }
    }

    /// Polls `condition` every few milliseconds until it returns a value or `timeout` passes.
    public static func wait<T>(
        for what: @autoclosure () -> String, timeout: Duration, _ condition: () throws -> T?
    ) throws -> T {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause = 1_000  // microseconds
        while true {
            if let value = try condition() { return value }
            if clock.now >= deadline { throw RigError.timeout(what: what(), seconds: timeout.seconds) }
            usleep(UInt32(pause))
            pause = min(pause * 2, 20_000)
        }
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
