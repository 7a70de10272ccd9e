import HIDReports

/// What one controller's writer does next: the transport discipline as a value, with no I/O and no
/// clock of its own (times are `CLOCK_MONOTONIC` nanoseconds passed in).
///
/// - **Coalescing.** ``request(_:)`` replaces the wanted state; nothing queues. Whatever was asked
///   last is what the next write sends.
/// - **Spacing.** No write starts earlier than ``minimumInterval`` after the previous one finished
///   (Switch Pro 30 ms, Xbox over Bluetooth 50 ms, Sony pads 10 ms).
/// - **Refresh.** A held non-zero state is written again every ``refreshInterval`` (a DualShock 4
///   stops rumbling after about 5 s: 2 s; Switch HD rumble: 50 ms; Xbox's bounded 1.5 s effects: 1 s).
/// - **Stopping.** ``beginClosing()`` asks for all-off and then `.close`: the writer sends the off
///   report unless the last report sent already was off, and closes only after that.
/// - **Failures.** After a failed write the state is unknown; that request is not retried (no
///   busy loop on a broken node), but the next request, or closing, writes again.
struct WriteSchedule: Sendable, Equatable {
    /// What the writer should do now.
    enum Action: Sendable, Equatable {
        /// Write the report for this state now.
        case write(RumbleState)
        /// Nothing may be written before this time (nanoseconds); wait, unless a new request comes.
        case wait(until: UInt64)
        /// Nothing to do until a new request.
        case idle
        /// Closing, and the off report is out (or failed): close the device.
        case close
    }

    /// The shortest time between the end of one write and the start of the next, in nanoseconds.
    let minimumInterval: UInt64
    /// How often a held non-zero state is written again, in nanoseconds; `nil` if never.
    let refreshInterval: UInt64?
    /// The newest state asked for.
    private(set) var desired: RumbleState = .off
    /// The state the device was last told, `nil` when unknown (a write failed).
    private(set) var lastSent: RumbleState? = .off
    /// When the last write finished, in nanoseconds; `nil` before the first.
    private(set) var lastWrite: UInt64?
    /// Whether the device is to be closed once it is silent.
    private(set) var isClosing = false
    private var version: UInt64 = 0
    private var failedVersion: UInt64?

    /// A schedule for a freshly opened controller at rest.
    ///
    /// - Parameters:
    ///   - minimumInterval: the spacing, in nanoseconds.
    ///   - refreshInterval: the refresh period in nanoseconds, or `nil`.
    ///   - lastWrite: when the set-up's last write to the controller finished, if there was one, so
    ///     the first rumble report keeps the spacing too.
    init(minimumInterval: UInt64, refreshInterval: UInt64?, lastWrite: UInt64? = nil) {
        self.minimumInterval = minimumInterval
        self.refreshInterval = refreshInterval
        self.lastWrite = lastWrite
    }

    /// Asks for `state`, replacing any state not yet written.
    mutating func request(_ state: RumbleState) {
        desired = state
        version &+= 1
    }

    /// Asks for all-off, then for the device to be closed.
    mutating func beginClosing() {
        request(.off)
        isClosing = true
    }

    /// Keeps the device open after all (a wake before the close happened). The off request stays.
    mutating func cancelClosing() {
        isClosing = false
    }

    /// What to do at `now` (nanoseconds).
    func next(now: UInt64) -> Action {
        let earliest = lastWrite.map { $0 &+ minimumInterval } ?? 0
        if lastSent != desired, failedVersion != version {
            return now >= earliest ? .write(desired) : .wait(until: earliest)
        }
        if isClosing { return .close }
        if let refreshInterval, let lastSent, !lastSent.isOff, let lastWrite {
            let due = max(lastWrite &+ refreshInterval, earliest)
            return now >= due ? .write(lastSent) : .wait(until: due)
        }
        return .idle
    }

    /// Records the outcome of writing `state`, finished at `time` (nanoseconds).
    mutating func wrote(_ state: RumbleState, at time: UInt64, succeeded: Bool) {
        lastWrite = time
        if succeeded {
            lastSent = state
        } else {
            lastSent = nil
            failedVersion = version
        }
    }
}
