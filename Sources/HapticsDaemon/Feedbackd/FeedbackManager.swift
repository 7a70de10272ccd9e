/// One event a feedbackd client triggered (feedbackd's `FbdEvent`): its id, who sent it, and the
/// player that renders its haptic feedback.
struct FeedbackEvent {
    let id: UInt32
    let appID: String
    let event: String
    /// The unique bus name of the client (its events end when it leaves the bus).
    let sender: String
    /// feedbackd's timeout: -1 once, 0 until `EndFeedback`, else seconds.
    let timeout: Int32
    /// The theme section the feedback came from (a profile change below it ends the event).
    let section: FeedbackProfile
    /// The player rendering it.
    let playerID: UInt64
}

/// The state of the feedbackd-compatible interface (feedbackd's `FbdFeedbackManager`): the theme,
/// the events under way and each app's `Haptic.Vibrate` player. Main thread only; the policy
/// (profile) lives in ``PolicyStore``, the players in ``PlayerRegistry``.
final class FeedbackManager {
    /// Why a feedbackd event ended, as `FeedbackEnded`'s `reason` (feedbackd's `FbdEventEndReason`).
    enum EndReason: Int32 {
        /// No usable feedback for the event in the theme at the effective profile (sent as `u` 4294967295).
        case notFound = -1
        /// Every feedback played its length.
        case natural = 0
        /// The timeout passed.
        case expired = 1
        /// `EndFeedback`, the client leaving, a profile change, the device going, the service stopping.
        case explicit = 2

        /// The code from a player's end reason.
        init(playerReason: String) {
            switch playerReason {
            case "finished": self = .natural
            case "expired": self = .expired
            default: self = .explicit
            }
        }

        /// The value on the wire (`u`).
        var wireValue: UInt32 { UInt32(bitPattern: rawValue) }
    }

    var theme: FeedbackTheme
    /// The files the theme came from, the named one first.
    var themeFiles: [String]
    private(set) var events: [UInt32: FeedbackEvent] = [:]
    private var nextID: UInt32 = 1
    /// Each app's `Vibrate` player.
    var vibrations: [String: UInt64] = [:]

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

    /// The events whose feedback comes from a section louder than `profile`.
    func events(above profile: FeedbackProfile) -> [FeedbackEvent] {
        events.values.filter { $0.section > profile }.sorted { $0.id < $1.id }
    }
}
