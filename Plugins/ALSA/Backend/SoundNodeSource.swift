import ALSADevices
import HapticsPluginKit

#if canImport(Glibc)
import Glibc
#endif

/// Hears of sound cards coming and going: inotify on `/dev/snd` for PCM nodes (`pcmC…`), and on
/// `/dev` for `/dev/snd` itself, which exists only once a first card does; when it appears it is
/// watched too. Like the hidraw monitor's source, it works with and without udev (devtmpfs makes
/// and removes the nodes). Without inotify the monitor rescans once a second.
struct SoundNodeSource: HotplugSource {
    let fileDescriptor: Int32
    private var soundWatch: Int32 = -1
    private var buffer = [UInt8](repeating: 0, count: 8192)

    init() {
        var fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if fd >= 0, inotify_add_watch(fd, "/dev", UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) < 0 {
            close(fd)
            fd = -1
        }
        fileDescriptor = fd
        if fd >= 0 { watchSoundDirectory() }
    }

    /// Watches `/dev/snd` if it exists and is not watched yet.
    private mutating func watchSoundDirectory() {
        guard soundWatch < 0 else { return }
        soundWatch = inotify_add_watch(fileDescriptor, "/dev/snd", UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO))
    }

    mutating func drain() -> Bool {
        var relevant = false
        var soundWatch = self.soundWatch, created = false
        InotifySource.readEvents(fileDescriptor, into: &buffer) { watch, mask, name in
            if watch == soundWatch {
                if mask & UInt32(IN_IGNORED) != 0 { soundWatch = -1 }  // /dev/snd went with the last card
                if name.starts(with: "pcmC".utf8) { relevant = true }
            } else if name.elementsEqual("snd".utf8) {
                relevant = true
                if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { created = true }
            }
        }
        self.soundWatch = soundWatch
        if created { watchSoundDirectory() }
        return relevant
    }
}

extension ALSAOutput: FoundDevice {
    /// The PCM, for messages.
    public var nodePath: String { pcm }
    /// A pad's USB interface in sysfs (a replug makes a new one); for a device file, its PCM.
    public var connection: String { padCard?.sysfsDevice ?? pcm }
    /// How the log names it when it arrives.
    public var arrival: String { "(\(pcm), \(name))" }
}
