import Haptics
import HapticsBus

/// The errors hapticsd replies with: each a specific D-Bus name under
/// `org.swifthaptics.Haptics1.Error.` and a message naming the field, the value and what is allowed.
public enum DaemonError {
    /// The prefix of every error name.
    public static let prefix = HapticsServiceName.errorPrefix

    /// No device has this id (and no device is the default).
    public static func unknownDevice(_ query: String, available: [String]) -> BusError {
        let list = available.isEmpty ? "no devices are available (see hapticsd's log)" : "devices: " + available.joined(separator: ", ")
        return BusError(name: prefix + "UnknownDevice", message: "device: no device '\(query)'; \(list)")
    }

    /// The device is listed but cannot be used now.
    public static func deviceUnavailable(_ id: String, reason: String) -> BusError {
        BusError(name: prefix + "DeviceUnavailable", message: "device '\(id)' cannot be used: \(reason)")
    }

    /// The device failed while hapticsd drove it.
    public static func deviceFailed(_ id: String, _ problem: String) -> BusError {
        BusError(name: prefix + "DeviceFailed", message: "device '\(id)': \(problem)")
    }

    /// No vocabulary effect has this name.
    public static func unknownEffect(_ name: String) -> BusError {
        BusError(name: prefix + "UnknownEffect", message: "effect: no effect '\(name)' (ListEffects gives every name, e.g. impact.medium, selection, notification.success)")
    }

    /// An AHAP document that cannot be used.
    public static func invalidPattern(_ field: String, _ problem: String) -> BusError {
        BusError(name: prefix + "InvalidPattern", message: "\(field): \(problem)")
    }

    /// A number outside its range, or not finite.
    public static func invalidValue(_ field: String, _ value: Double, expected: String) -> BusError {
        let shown = value.isFinite ? "\(value)" : (value.isNaN ? "NaN" : (value > 0 ? "inf" : "-inf"))
        return BusError(name: prefix + "InvalidValue", message: "\(field): \(shown) is outside \(expected)")
    }

    /// A value of the right type but not one of the allowed ones.
    public static func invalidArgument(_ field: String, _ problem: String) -> BusError {
        BusError(name: prefix + "InvalidArgument", message: "\(field): \(problem)")
    }

    /// An application id that is not a valid name.
    public static func invalidAppID(_ appID: String) -> BusError {
        let shown = appID.count > 80 ? String(appID.prefix(80)) + "…" : appID
        return BusError(
            name: prefix + "InvalidAppId",
            message: "app_id: '\(shown)' is not a valid application id: 1…255 characters of A–Z a–z 0–9 _ - . , not starting with '.', '-' or a digit (e.g. org.example.App)")
    }

    /// A feedbackd event name that breaks the event naming spec.
    public static func invalidEvent(_ event: String) -> BusError {
        let shown = event.count > 80 ? String(event.prefix(80)) + "…" : event
        return BusError(
            name: prefix + "InvalidEvent",
            message: "event: '\(shown)' is not an event name: 1…255 characters of a–z 0–9 _ - . (see the feedbackd event naming spec, e.g. button-pressed)")
    }

    /// No player at this path (ended, released, or never created).
    public static func unknownPlayer(_ path: String) -> BusError {
        BusError(name: prefix + "UnknownPlayer", message: "no player \(path): it ended (one-shot players go when they end), was released, or never existed")
    }

    /// A player belongs to another client.
    public static func notOwner(_ path: String) -> BusError {
        BusError(name: prefix + "NotOwner", message: "player \(path) belongs to another client; only the connection that created it may control it")
    }

    /// The caller sends more calls than it may.
    public static func throttled(_ client: String, limit: Int) -> BusError {
        BusError(
            name: prefix + "Throttled",
            message: "client \(client) sent more than \(limit) play calls per second; calls are refused until its rate drops (hapticsd --max-calls-per-second)")
    }

    /// A pattern that would take a client's players past its element budget.
    public static func overBudget(_ client: String, holding: Int, adding: Int, limit: Int) -> BusError {
        BusError(
            name: prefix + "OverBudget",
            message: "client \(client) holds \(holding) pattern elements (events, parameter changes, curve points) and this pattern adds \(adding); at most \(limit) are held per client (hapticsd --max-events-per-client): release players it no longer needs")
    }

    /// The caller sends more document bytes than it may have parsed.
    public static func throttledBytes(_ client: String, limit: Int) -> BusError {
        BusError(
            name: prefix + "Throttled",
            message: "client \(client) sent more than \(limit) bytes of patterns per second; patterns are refused until its rate drops")
    }

    /// Too many connections of one user play at once.
    public static func tooManyClients(uid: UInt32, limit: Int) -> BusError {
        BusError(
            name: prefix + "TooManyClients",
            message: "user \(uid) has \(limit) connections playing already, the most allowed (hapticsd --max-clients-per-user); close connections it no longer needs")
    }

    /// A document cannot be parsed now: the caller's previous one still is, or the service has as
    /// many under way as it takes (`busy`).
    public static func parsing(_ client: String, busy: Bool) -> BusError {
        BusError(
            name: prefix + "Throttled",
            message: busy
                ? "the service is parsing as many patterns as it takes at once; try again in a moment"
                : "client \(client) has a pattern being parsed already; send the next when its reply has come")
    }

    /// A clip the service cannot hold: the client's or the service's clip budget (``AudioStore``).
    public static func audioBudget(_ client: String, _ problem: String) -> BusError {
        BusError(name: prefix + "OverBudget", message: "client \(client) \(problem)")
    }

    /// No clip of the caller's has this id.
    /// Another client holds the device's adaptive triggers (`SetTriggers`).
    public static func triggersInUse(_ id: String, holder: String, app: String) -> BusError {
        BusError(
            name: prefix + "TriggersInUse",
            message: "device '\(id)': its adaptive triggers are held by client \(holder) (app \(app)) until it sets both off or leaves the bus")
    }

    /// A trigger effect of `SetTriggers` that cannot be played: a value out of range is
    /// `InvalidValue` naming the side and the parameter; any other problem `InvalidArgument`.
    public static func invalidTrigger(_ side: String, _ error: AdaptiveTriggerError) -> BusError {
        if case .outOfRange(let parameter, let value, let expected) = error { return invalidValue("\(side).\(parameter)", value, expected: expected) }
        return invalidArgument(side, "\(error)")
    }

    public static func unknownAudio(_ id: UInt64) -> BusError {
        BusError(name: prefix + "UnknownAudio", message: "no clip \(id) is registered by this connection (unregistered, replaced under its name, or another client's)")
    }

    /// Too many listeners (`Listen`) for the caller or the service.
    public static func tooManyListeners(_ problem: String) -> BusError {
        BusError(name: prefix + "TooManyListeners", message: problem)
    }

    /// Too many players at once for one client.
    public static func tooManyPlayers(_ client: String, limit: Int) -> BusError {
        BusError(name: prefix + "TooManyPlayers", message: "client \(client) holds \(limit) players, the most allowed; release players it no longer needs")
    }
}
