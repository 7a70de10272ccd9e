#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Decides whether a plugin file may be loaded, the way OpenSSH's `safe_path` decides whether a
/// key file may be trusted: code that runs inside every haptics process must be changeable only by
/// root or by the user running it.
///
/// - The file is opened with `O_NOFOLLOW` (a symbolic link is refused) and checked through that
///   descriptor (`fstat`): a regular file, owned by root or the effective user, writable by neither
///   its group nor others. The loader then loads that very descriptor, so what was checked is what
///   runs, whatever happens to the path afterwards.
/// - Every directory from `/` down to the plugin's (its real path, symbolic links resolved) must
///   be owned by root or the effective user and writable by no one else, or someone could rename a
///   directory and put another tree in its place. One exception: a root-owned directory with the
///   sticky bit (`/tmp`), where others can add entries but cannot rename or remove ours. The
///   plugin's own directory gets no exception: anyone able to add files there could add a plugin.
public enum PluginFileCheck {
    /// An opened plugin file: the descriptor the loader loads (the caller closes it) and the
    /// file's real path.
    public struct Opened: Sendable {
        /// The open descriptor (`O_RDONLY | O_CLOEXEC | O_NOFOLLOW`).
        public var descriptor: Int32
        /// The file's real path (directories resolved).
        public var realPath: String
        /// The file's device and inode.
        public var fileID: FileID
    }

    /// A file's identity: its device and inode numbers.
    public struct FileID: Sendable, Hashable {
        /// `st_dev`.
        public var device: UInt64
        /// `st_ino`.
        public var inode: UInt64
    }

    /// Checks the directories above `path`, opens it without following a link and checks the file.
    /// - Throws: ``PluginLoadError/unsafeDirectory(directory:reason:)``,
    ///   ``PluginLoadError/unsafeFile(path:reason:)`` or ``PluginLoadError/unreadable(path:errno:)``.
    public static func open(_ path: String) throws(PluginLoadError) -> Opened {
        let directory = try checkDirectories(of: path)
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP { throw .unsafeFile(path: path, reason: .symbolicLink) }
            throw .unreadable(path: path, errno: code)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw .unreadable(path: path, errno: code)
        }
        if let reason = problem(with: info, isDirectory: false, mayBeSticky: false) {
            close(descriptor)
            throw .unsafeFile(path: path, reason: reason)
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return Opened(
            descriptor: descriptor, realPath: (directory == "/" ? "" : directory) + "/" + name,
            fileID: FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }

    /// Checks every directory from `/` down to the one holding `path`; returns that directory's real path.
    @discardableResult
    public static func checkDirectories(of path: String) throws(PluginLoadError) -> String {
        let parent: String
        if let slash = path.lastIndex(of: "/") {
            parent = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            parent = "."
        }
        guard let resolved = realpath(parent, nil) else { throw .unreadable(path: parent, errno: errno) }
        let real = String(cString: resolved)
        free(resolved)
        var components = real.split(separator: "/").map(String.init)
        var current = ""
        var chain = ["/"]
        while !components.isEmpty {
            current += "/" + components.removeFirst()
            chain.append(current)
        }
        for (index, directory) in chain.enumerated() {
            var info = stat()
            guard lstat(directory, &info) == 0 else { throw .unreadable(path: directory, errno: errno) }
            let isPluginDirectory = index == chain.count - 1
            if let reason = problem(with: info, isDirectory: true, mayBeSticky: !isPluginDirectory) {
                throw .unsafeDirectory(directory: directory, reason: reason)
            }
        }
        return real
    }

    /// What is wrong with a file or directory of this status, if anything.
    static func problem(with info: stat, isDirectory: Bool, mayBeSticky: Bool) -> PluginLoadError.UnsafeReason? {
        let type = info.st_mode & S_IFMT
        if isDirectory ? type != S_IFDIR : type != S_IFREG { return .notRegularFile }
        if info.st_uid != 0, info.st_uid != geteuid() { return .foreignOwner(uid: info.st_uid) }
        let writableByOthers = info.st_mode & (S_IWGRP | S_IWOTH) != 0
        if writableByOthers, mayBeSticky, info.st_mode & S_ISVTX != 0, info.st_uid == 0 { return nil }
        if info.st_mode & S_IWOTH != 0 { return .worldWritable }
        if info.st_mode & S_IWGRP != 0 { return .groupWritable }
        return nil
    }
}

/// The descriptors plugins are loaded through, one per plugin file, kept open for the life of the
/// process.
///
/// glibc's `dlopen` first looks a name up among the names of the objects already loaded, by
/// string. A plugin loaded as `/proc/self/fd/7` keeps that name, so if descriptor 7 were closed
/// and reused for another plugin, `dlopen("/proc/self/fd/7")` would hand back the first plugin.
/// Keeping each plugin file's descriptor open (plugins are never unloaded either) keeps every
/// such name unique; loading the same file again goes through its kept descriptor.
enum PluginImages {
    private static let kept = Mutex<[PluginFileCheck.FileID: Int32]>([:])

    /// The descriptor to load `opened` through: the one kept for that file (closing `opened`'s),
    /// or `opened`'s, which is kept from now on.
    static func descriptor(for opened: PluginFileCheck.Opened) -> Int32 {
        kept.withLock { table in
            if let existing = table[opened.fileID] {
                close(opened.descriptor)
                return existing
            }
            table[opened.fileID] = opened.descriptor
            return opened.descriptor
        }
    }

    /// Forgets and closes the descriptor of a file that failed to load (nothing holds its name).
    static func discard(_ opened: PluginFileCheck.Opened, descriptor: Int32) {
        kept.withLock { table in
            guard table[opened.fileID] == descriptor else { return }
            table[opened.fileID] = nil
            close(descriptor)
        }
    }
}
