/// The power state of an actuator.
public enum PowerState: String, Sendable, Hashable, Codable {
    /// Lowest power: a driver IC's enable line low, a controller left silent. Waking costs latency.
    case idle
    /// Awake with minimum latency, not playing: the state `prepare()` asks for.
    case prepared
    /// Playing.
    case active
}

/// The timing rules of the power model. All in seconds.
public struct PowerPolicy: Sendable, Hashable {
    /// How long one `prepare()` keeps an actuator prepared without a trigger (UIKit: "typically seconds").
    public var prepareTimeout: Double
    /// The longest an actuator stays prepared through repeated `prepare()` calls without a trigger.
    /// Once reached, it idles and further prepares are ignored until a trigger happens.
    public var preparedCap: Double

    /// A policy; the defaults keep an actuator prepared for 2 s per prepare, 10 s at most.
    public init(prepareTimeout: Double = 2.0, preparedCap: Double = 10.0) {
        self.prepareTimeout = prepareTimeout
        self.preparedCap = max(preparedCap, prepareTimeout)
    }
}

/// The idle / prepared / active state machine of one actuator, as a value.
///
/// It does no I/O: each transition returns the ``Effect``s to carry out (wake or sleep the device,
/// move the prepared deadline). ``HapticDevice`` applies them to a real actuator on a clock; tests
/// can drive this type directly, instant by instant.
///
/// The rules (from `UIFeedbackGenerator`):
/// - ``prepare(at:)`` wakes an idle actuator and keeps it prepared for ``PowerPolicy/prepareTimeout``;
///   another prepare extends that, but a run of prepares without a trigger never keeps it prepared
///   longer than ``PowerPolicy/preparedCap``; when the cap ends the run, later prepares are ignored
///   until a trigger.
/// - ``beginActivity(at:)`` (a trigger) wakes an idle actuator (the slow path) or uses the prepared
///   one (the fast path) and consumes the preparation.
/// - When the last activity ends, the actuator idles, unless `prepare()` was called during the
///   activity: then it stays prepared for a timeout from that call.
/// - The prepared deadline passing idles it.
/// - Releasing the last holder idles a prepared actuator at once, and an active one when it finishes.
public struct PowerModel: Sendable, Hashable {
    /// What the owner must do after a transition.
    public enum Effect: Sendable, Hashable {
        /// Call the actuator's `wake`.
        case wake
        /// Call the actuator's `sleep`.
        case sleep
        /// Arm the prepared-timeout timer for this instant (replacing any armed one), or disarm it with `nil`.
        case setDeadline(HapticInstant?)
    }

    /// The timing rules.
    public let policy: PowerPolicy
    /// The current state.
    public private(set) var state: PowerState = .idle
    /// When the prepared state ends (while prepared), or will end after the activity (while active).
    public private(set) var preparedUntil: HapticInstant?
    /// Playbacks in progress.
    public private(set) var activeCount = 0
    /// Holders (generators, engines) of the actuator.
    public private(set) var holders = 0
    /// Whether prepares are ignored until the next trigger (the cap ended the last prepared run).
    public private(set) var preparesSuspended = false
    /// When the current run of prepares without a trigger started.
    private var runStart: HapticInstant?

    /// A model in the idle state.
    public init(policy: PowerPolicy = PowerPolicy()) {
        self.policy = policy
    }

    /// A holder asks for low latency for the next while.
    public mutating func prepare(at now: HapticInstant) -> [Effect] {
        if preparesSuspended { return [] }
        let start = runStart ?? now
        let capEnd = start.advanced(bySeconds: policy.preparedCap)
        guard now < capEnd else {
            preparesSuspended = true
            return []
        }
        runStart = start
        let deadline = min(now.advanced(bySeconds: policy.prepareTimeout), capEnd)
        switch state {
        case .idle:
            state = .prepared
            preparedUntil = deadline
            return [.wake, .setDeadline(deadline)]
        case .prepared:
            guard deadline > preparedUntil! else { return [] }
            preparedUntil = deadline
            return [.setDeadline(deadline)]
        case .active:
            // Takes effect when the activity ends.
            preparedUntil = max(preparedUntil ?? deadline, deadline)
            return []
        }
    }

    /// A playback starts (a trigger). Consumes any preparation and re-enables prepares. The
    /// time does not change what follows (a start always ends the preparation); it is taken for
    /// symmetry with the model's other events.
    public mutating func beginActivity(at now: HapticInstant) -> [Effect] {
        beginActivityEffect().map { [$0] } ?? []
    }

    /// ``beginActivity(at:)`` with its one effect at most, without an array and without a time
    /// (it needs none, so the trigger path reads no clock for it).
    mutating func beginActivityEffect() -> Effect? {
        activeCount += 1
        runStart = nil
        preparesSuspended = false
        switch state {
        case .idle:
            state = .active
            preparedUntil = nil
            return .wake
        case .prepared:
            state = .active
            preparedUntil = nil
            return .setDeadline(nil)
        case .active:
            return nil
        }
    }

    /// A playback ended. When it was the last, the actuator idles, or stays prepared if it was
    /// prepared during the activity and that preparation has not run out.
    public mutating func endActivity(at now: HapticInstant) -> [Effect] {
        guard activeCount > 0 else { return [] }
        activeCount -= 1
        guard activeCount == 0 else { return [] }
        if let until = preparedUntil, until > now {
            state = .prepared
            return [.setDeadline(until)]
        }
        return goIdle()
    }

    /// The prepared deadline armed through ``Effect/setDeadline(_:)`` arrived.
    public mutating func deadlineReached(at now: HapticInstant) -> [Effect] {
        guard state == .prepared, let until = preparedUntil, until <= now else { return [] }
        if let start = runStart, until >= start.advanced(bySeconds: policy.preparedCap) {
            preparesSuspended = true
        }
        return goIdle()
    }

    /// A holder (a generator, an engine) starts holding the actuator.
    public mutating func hold() {
        holders += 1
    }

    /// A holder lets go. When the last one does, a prepared actuator idles now and an active one
    /// idles when its playback ends.
    public mutating func release(at now: HapticInstant) -> [Effect] {
        guard holders > 0 else { return [] }
        holders -= 1
        guard holders == 0 else { return [] }
        switch state {
        case .prepared: return goIdle()
        case .active:
            preparedUntil = nil
            return []
        case .idle: return []
        }
    }

    private mutating func goIdle() -> [Effect] {
        state = .idle
        preparedUntil = nil
        runStart = preparesSuspended ? runStart : nil
        return [.setDeadline(nil), .sleep]
    }
}
