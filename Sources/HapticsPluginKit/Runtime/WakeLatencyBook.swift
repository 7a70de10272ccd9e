import Synchronization

/// What a backend knows about how long each device takes to wake, in nanoseconds: the
/// `wake_latency_ns` it reports. Before a device was woken, the backend's estimate from documented
/// costs (listing never opens a node); after, the largest of its last four measured wakes, so one
/// fast wake does not hide a slow one.
///
/// A backend keeps one book for the process (a `static let`) where a wake latency belongs to the
/// physical device, which several instances (one per `HapticSystem`) see.
public final class WakeLatencyBook: Sendable {
    private let measured = Mutex<[String: [UInt64]]>([:])

    /// How many of the latest wakes count.
    public static let remembered = 4

    /// An empty book.
    public init() {}

    /// The latency to report for device `id`: the worst of its last measured wakes, else `estimate`.
    public func latency(for id: String, estimate: @autoclosure () -> UInt64) -> UInt64 {
        measured.withLock { $0[id]?.max() } ?? estimate()
    }

    /// Records one measured wake of device `id`, in nanoseconds.
    public func record(_ id: String, nanoseconds: UInt64) {
        measured.withLock { book in
            var recent = book[id, default: []]
            recent.append(nanoseconds)
            if recent.count > Self.remembered { recent.removeFirst(recent.count - Self.remembered) }
            book[id] = recent
        }
    }
}
