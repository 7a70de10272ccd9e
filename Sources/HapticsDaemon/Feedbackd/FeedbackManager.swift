import HapticsBus

/// One event a feedbackd client triggered (feedbackd's `FbdEvent`): its id, who sent it, and what
/// renders it: a player for its haptic feedback and a timer for its silent (`Dummy`) ones. It ends
/// when both have ended, or at once when it is ended (``FeedbackManager/EndReason/explicit``).
final class FeedbackEvent {
    let id: UInt32
    let appID: String
    let event: String
    /// The unique bus name of the client (its events end when it leaves the bus; only it may end them).
    let sender: String
    /// feedbackd's timeout: -1 once, 0 until `EndFeedback`, else seconds.
    let timeout: Int32
    /// The loudest theme section a feedback came from (a profile change below it ends the event).
    let section: FeedbackProfile
    /// The player rendering its haptic feedback, until it ends.
    var playerID: UInt64?
    /// The end of its silent feedbacks, until it passes (nil: none, passed, or until ended).
    var silentEnd: EventLoop.Timer?
    /// Whether its silent feedbacks run until the event is ended (timeout 0).
    var silentUntilEnded = false

    init(id: UInt32, appID: String, event: String, sender: String, timeout: Int32, section: FeedbackProfile) {
        self.id = id
        self.appID = appID
        self.event = event
        self.sender = sender
        self.timeout = timeout
        self.section = section
    }

    /// Whether every feedback has run its course.
    var feedbacksEnded: Bool { playerID == nil && silentEnd == nil && !silentUntilEnded }
}

/// The state of the feedbackd-compatible interface (feedbackd's `FbdFeedbackManager`): the theme,
/// the events under way and each client's `Haptic.Vibrate` players. Main thread only; the policy
/// (profile) lives in ``PolicyStore``, the players in ``PlayerRegistry``.
final class FeedbackManager {
    /// Why a feedbackd event ended, as `FeedbackEnded`'s `reason` (feedbackd's `FbdEventEndReason`).
    enum EndReason: Int32 {
        /// No usable feedback for the event in the theme at the effective profile (sent as `u` 4294967295).
        case notFound = -1
        /// Every feedback played its length (after a timeout too: feedbackd lets the run under way
        /// finish and reports it as natural; it never sends `expired`, 1).
        case natural = 0
        /// `EndFeedback`, the client leaving, a profile change, the device going, the service stopping.
        case explicit = 2

        /// The value on the wire (`u`).
        var wireValue: UInt32 { UInt32(bitPattern: rawValue) }
    }

    var theme: FeedbackTheme
    /// The files the theme came from, the named one first.
    var themeFiles: [String]
    private(set) var events: [UInt32: FeedbackEvent] = [:]
    private var nextID: UInt32 = 1
    /// Each client's `Vibrate` player per app id, by the client's unique name then the app id: an
    /// app id is only a name a client gives itself, so another connection's call never touches it.
    var vibrations: [String: [String: UInt64]] = [:]

    init(theme: FeedbackTheme, files: [String]) {
        self.theme = theme
        self.themeFiles = files
    }

    /// A new event id (feedbackd counts from 1; 0 is never used).
    func allocateID() -> UInt32 {
        defer { nextID = nextID == UInt32.max ? 1 : nextID + 1 }
        return nextID
    }

    func add(_ event: FeedbackEvent) { events[event.id] = event }

    func removeEvent(_ id: UInt32) -> FeedbackEvent? { events.removeValue(forKey: id) }

    /// The events `sender` triggered, oldest first.
    func events(from sender: String) -> [FeedbackEvent] {
        events.values.filter { $0.sender == sender }.sorted { $0.id < $1.id }
    }

    /// The events whose feedback comes from a section louder than `profile`.
    func events(above profile: FeedbackProfile) -> [FeedbackEvent] {
        events.values.filter { $0.section > profile }.sorted { $0.id < $1.id }
    }
}
