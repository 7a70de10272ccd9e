import Haptics
import HapticsBus

/// The clips clients registered (`RegisterAudio`), each client's under its own names: a pattern a
/// client plays finds only its own clips, and they go when it leaves. Bounded per client and for
/// the whole service, in bytes of samples (4 a sample), so no client, or crowd of them, can make the
/// service hold more than ``maximumBytes``.
struct AudioStore {
    /// The most bytes of samples one client holds: a 60 s stereo clip at 48 kHz (22 MiB) and change.
    static let maximumBytesPerClient = 32 << 20
    /// The most bytes of samples the service holds for everyone together.
    static let maximumBytes = 128 << 20
    /// The most clips one client holds.
    static let maximumClipsPerClient = 64

    private struct Entry {
        let id: UInt64
        let clip: AudioClip
        var bytes: Int { clip.samples.count * MemoryLayout<Float>.size }
    }

    /// By client, by name.
    private var clients: [String: [String: Entry]] = [:]
    private var nextID: UInt64 = 1
    /// Bytes of samples held, for everyone.
    private(set) var bytes = 0

    /// Clips held, for everyone.
    var count: Int { clients.values.reduce(0) { $0 + $1.count } }

    /// Whether the service can take `adding` more bytes for `client`: throws `OverBudget` naming
    /// the limit it would pass. A clip registered again under its name counts only its difference.
    func admit(_ client: String, name: String, adding: Int) throws(BusError) {
        let held = clients[client] ?? [:]
        let replaced = held[name]?.bytes ?? 0
        let holding = held.values.reduce(0) { $0 + $1.bytes }
        if held[name] == nil, held.count >= Self.maximumClipsPerClient {
            throw DaemonError.audioBudget(client, "holds \(held.count) clips, the most allowed; unregister clips it no longer needs")
        }
        if holding - replaced + adding > Self.maximumBytesPerClient {
            throw DaemonError.audioBudget(
                client, "holds \(holding) bytes of clips and this one is \(adding); at most \(Self.maximumBytesPerClient) are held per client (about 90 s of mono 48 kHz)")
        }
        if bytes - replaced + adding > Self.maximumBytes {
            throw DaemonError.audioBudget(client, "cannot register this clip: the service holds \(bytes) bytes of clips for all clients, and at most \(Self.maximumBytes); try again later")
        }
    }

    /// Registers `clip` as `client`'s `name` (replacing one it had under that name); its id.
    mutating func register(_ client: String, name: String, clip: AudioClip) throws(BusError) -> UInt64 {
        let adding = clip.samples.count * MemoryLayout<Float>.size
        try admit(client, name: name, adding: adding)
        let id = nextID
        nextID += 1
        bytes += adding - (clients[client]?[name]?.bytes ?? 0)
        clients[client, default: [:]][name] = Entry(id: id, clip: clip)
        return id
    }

    /// Drops `client`'s clip `id`; false when it holds none by that id.
    mutating func unregister(_ client: String, id: UInt64) -> Bool {
        guard let name = clients[client]?.first(where: { $0.value.id == id })?.key, let entry = clients[client]?.removeValue(forKey: name) else { return false }
        bytes -= entry.bytes
        if clients[client]?.isEmpty == true { clients[client] = nil }
        return true
    }

    /// `client`'s clips by name, as a pattern's `EventWaveformPath` names them.
    func clips(of client: String) -> [String: AudioClip] {
        (clients[client] ?? [:]).mapValues(\.clip)
    }

    /// Drops every clip of a client that left.
    mutating func forget(_ client: String) {
        guard let held = clients.removeValue(forKey: client) else { return }
        bytes -= held.values.reduce(0) { $0 + $1.bytes }
    }
}
