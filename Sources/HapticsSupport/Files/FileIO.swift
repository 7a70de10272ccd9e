import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A file operation that failed, with the path, the operation and the errno.
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file concerned.
    public var path: String
    /// What was being done: `open`, `read`, `write`, `rename`, `fsync`.
    public var operation: String
    /// The errno value.
    public var errno: Int32

    /// An error for `operation` on `path`.
    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    init(path: String, operation: String, _ error: any Error) {
        self.init(path: path, operation: operation, errno: (error as? Errno)?.rawValue ?? EIO)
    }

    public var description: String {
        "\(path): cannot \(operation): \(String(cString: strerror(errno)))"
    }
}

/// An open file descriptor with exactly one owner, closed exactly once (explicitly or on deinit).
public final class OwnedFileDescriptor: @unchecked Sendable {
    // `descriptor` is immutable; `closed` makes close idempotent. Concurrent use of the descriptor
    // itself is the caller's to serialise.
    /// The descriptor.
    public let descriptor: FileDescriptor
    private var closed = false

    /// Takes ownership of `descriptor`.
    public init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Opens `path` and owns the result.
    public convenience init(
        path: String, _ mode: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions = [],
        permissions: FilePermissions? = nil
    ) throws(FileError) {
        do {
            self.init(try FileDescriptor.open(FilePath(path), mode, options: options.union(.closeOnExec), permissions: permissions))
        } catch {
            throw FileError(path: path, operation: "open", error)
        }
    }

    deinit { close() }

    /// Closes the descriptor; later calls do nothing.
    public func close() {
        guard !closed else { return }
        closed = true
        try? descriptor.close()
    }
}

/// Reads a whole file (at most `limit` bytes; a longer file is an error, not a silent cut).
public func readFile(atPath path: String, limit: Int = 64 << 20) throws(FileError) -> [UInt8] {
    let file = try OwnedFileDescriptor(path: path, .readOnly)
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let count: Int
        do {
            count = try chunk.withUnsafeMutableBytes { try file.descriptor.read(into: $0, retryOnInterrupt: true) }
        } catch {
            throw FileError(path: path, operation: "read", error)
        }
        if count == 0 { return bytes }
        bytes += chunk[0..<count]
        guard bytes.count <= limit else { throw FileError(path: path, operation: "read (larger than \(limit) bytes)", errno: EFBIG) }
    }
}

/// Writes `bytes` to `path` atomically: a crash at any point leaves either the old file or the
/// new one, never a mix or a truncated file.
///
/// The bytes go to a temporary file in the same directory, which is `fsync`ed, renamed over
/// `path`, and the directory `fsync`ed so the rename itself is durable.
public func writeFileAtomically(_ bytes: [UInt8], toPath path: String, permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]) throws(FileError) {
    let filePath = FilePath(path)
    let directory = filePath.removingLastComponent().isEmpty ? "." : filePath.removingLastComponent().string
    let temporary = "\(directory)/.\(filePath.lastComponent?.string ?? "file").\(getpid()).tmp"
    do throws(FileError) {
        let file = try OwnedFileDescriptor(path: temporary, .writeOnly, options: [.create, .truncate, .exclusiveCreate], permissions: permissions)
        do {
            try file.descriptor.writeAll(bytes)
        } catch {
            throw FileError(path: temporary, operation: "write", error)
        }
        guard fsync(file.descriptor.rawValue) == 0 else { throw FileError(path: temporary, operation: "fsync", errno: errno) }
        file.close()
        guard rename(temporary, path) == 0 else { throw FileError(path: path, operation: "rename \(temporary) over", errno: errno) }
        let directoryFile = try OwnedFileDescriptor(path: directory, .readOnly, options: [.directory])
        guard fsync(directoryFile.descriptor.rawValue) == 0 else { throw FileError(path: directory, operation: "fsync", errno: errno) }
    } catch {
        unlink(temporary)
        throw error
    }
}

/// The names in the directory at `path` (without `.` and `..`), sorted; empty when it cannot be read.
public func directoryEntries(atPath path: String) -> [String] {
    guard let handle = opendir(path) else { return [] }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        if name != ".", name != ".." { names.append(name) }
    }
    return names.sorted()
}
