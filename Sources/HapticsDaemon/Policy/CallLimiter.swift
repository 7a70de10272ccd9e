import Haptics
import HapticsBus

/// Keeps one client from flooding the service: a token bucket per connection (``limit`` play calls
/// per second, bursts up to the same number). A call beyond it is refused at once with
/// `Error.Throttled`, so a flood costs the service a few microseconds per call and other clients'
/// calls are not queued behind a backlog of plays. Main thread only.
struct CallLimiter {
    /// Calls per second a connection may make (sustained, and as a burst).
    let limit: Int
    /// Bytes of documents per second a connection may have parsed (sustained, and as a burst).
    let byteLimit: Int
    private var calls: TokenBuckets
    private var bytes: TokenBuckets

    /// The parse budget's default: 8 MiB a second (two of the largest documents), tens of ms of
    /// parsing in a release build.
    static let defaultByteLimit = 8 << 20

    init(limit: Int, byteLimit: Int = defaultByteLimit) {
        self.limit = limit
        self.byteLimit = byteLimit
        calls = TokenBuckets(rate: Double(limit))
        bytes = TokenBuckets(rate: Double(byteLimit))
    }

    /// Throws `Throttled` while `client` owes bytes of its parse budget at `now`: parsing is work
    /// the caller pays for, so a client sending the largest documents over and over is slowed down
    /// before the service reads another.
    func admitBytes(_ client: String, at now: HapticInstant) throws(BusError) {
        guard bytes.balance(for: client, at: now) > 0 else { throw DaemonError.throttledBytes(client, limit: byteLimit) }
    }

    /// Charges `count` bytes, a document read, to `client`'s parse budget at `now`. The balance may
    /// go below zero (a document's size is known only once it is read, off the event loop); the
    /// client's next documents are refused until it is paid back, at ``byteLimit`` a second.
    mutating func chargeBytes(_ client: String, _ count: Int, at now: HapticInstant) {
        bytes.charge(Double(count), for: client, at: now)
    }

    /// Takes one token for `client` at `now`, or throws `Throttled`.
    mutating func admit(_ client: String, at now: HapticInstant) throws(BusError) {
        guard calls.take(1, for: client, at: now) else { throw DaemonError.throttled(client, limit: limit) }
    }

    /// Forgets a client that left the bus.
    mutating func forget(_ client: String) {
        calls.forget(client)
        bytes.forget(client)
    }
}

/// A token bucket per client: `rate` tokens a second, bursts of as many.
struct TokenBuckets {
    let rate: Double
    private var buckets: [String: (tokens: Double, updated: HapticInstant)] = [:]

    init(rate: Double) { self.rate = rate }

    /// The tokens `client` has at `now` (below zero while it owes some).
    func balance(for client: String, at now: HapticInstant) -> Double {
        guard let bucket = buckets[client] else { return rate }
        return min(rate, bucket.tokens + now.seconds(since: bucket.updated) * rate)
    }

    /// Takes `amount` tokens from `client` at `now`, into debt if it has fewer.
    mutating func charge(_ amount: Double, for client: String, at now: HapticInstant) {
        buckets[client] = (balance(for: client, at: now) - amount, now)
    }

    /// Takes `amount` tokens for `client` at `now`; false (nothing taken) when it has fewer.
    mutating func take(_ amount: Double, for client: String, at now: HapticInstant) -> Bool {
        let tokens = balance(for: client, at: now)
        let granted = tokens >= amount
        buckets[client] = (granted ? tokens - amount : tokens, now)
        return granted
    }

    mutating func forget(_ client: String) { buckets[client] = nil }
}
