/// The state of one PWM channel, as sysfs shows it.
public struct PWMState: Sendable, Hashable, CustomStringConvertible {
    /// The period in nanoseconds (0 on a channel never configured).
    public var periodNanoseconds: UInt64
    /// The duty cycle in nanoseconds, at most the period.
    public var dutyNanoseconds: UInt64
    /// The output polarity.
    public var polarity: PWMPolarity
    /// Whether the output runs.
    public var enabled: Bool

    /// A state.
    public init(periodNanoseconds: UInt64, dutyNanoseconds: UInt64, polarity: PWMPolarity = .normal, enabled: Bool) {
        self.periodNanoseconds = periodNanoseconds
        self.dutyNanoseconds = dutyNanoseconds
        self.polarity = polarity
        self.enabled = enabled
    }

    /// The state of a freshly exported, never configured channel.
    public static let unconfigured = PWMState(periodNanoseconds: 0, dutyNanoseconds: 0, enabled: false)

    /// `period 50000 ns, duty 25000 ns, enabled, normal`.
    public var description: String {
        "period \(periodNanoseconds) ns, duty \(dutyNanoseconds) ns, \(enabled ? "enabled" : "disabled"), \(polarity.rawValue)"
    }
}

/// One write to a PWM channel's sysfs attribute.
public enum PWMWrite: Sendable, Hashable, CustomStringConvertible {
    /// `period` ← nanoseconds.
    case period(UInt64)
    /// `duty_cycle` ← nanoseconds.
    case dutyCycle(UInt64)
    /// `polarity` ← `normal` / `inversed`.
    case polarity(PWMPolarity)
    /// `enable` ← `1` / `0`.
    case enable(Bool)

    /// The attribute's file name.
    public var attribute: String {
        switch self {
        case .period: "period"
        case .dutyCycle: "duty_cycle"
        case .polarity: "polarity"
        case .enable: "enable"
        }
    }

    /// The text written.
    public var value: String {
        switch self {
        case .period(let nanoseconds): String(nanoseconds)
        case .dutyCycle(let nanoseconds): String(nanoseconds)
        case .polarity(let polarity): polarity.rawValue
        case .enable(let on): on ? "1" : "0"
        }
    }

    /// `period ← 50000`.
    public var description: String { "\(attribute) ← \(value)" }

    /// The state after this write is applied to `state`.
    public func applied(to state: PWMState) -> PWMState {
        var next = state
        switch self {
        case .period(let nanoseconds): next.periodNanoseconds = nanoseconds
        case .dutyCycle(let nanoseconds): next.dutyNanoseconds = nanoseconds
        case .polarity(let polarity): next.polarity = polarity
        case .enable(let on): next.enabled = on
        }
        return next
    }
}

/// The writes that take a channel from one state to another in an order the kernel accepts.
///
/// Every sysfs write applies a whole state, and the kernel (`pwm_apply_state`) refuses a state
/// whose period is 0 or whose duty cycle exceeds its period (`EINVAL`); many drivers also refuse
/// to change the polarity of a running output. So:
/// 1. a running output that must stop, or change polarity, is disabled first (after lowering its
///    duty cycle when the target is lower, so output falls before the output stops);
/// 2. the period and duty cycle change in the order that keeps `duty ≤ period > 0` at every step:
///    a duty cycle larger than the old period is written after the period, a period shorter than
///    the old duty cycle after the duty cycle;
/// 3. then the polarity, and last `enable`.
///
/// Writes that would not change anything are left out. A target with period 0 is only reachable
/// from period 0 (nothing is written then).
public enum PWMWritePlan {
    /// The ordered writes from `current` to `target`.
    public static func writes(from current: PWMState, to target: PWMState) -> [PWMWrite] {
        var writes: [PWMWrite] = []
        var state = current
        func write(_ step: PWMWrite) {
            writes.append(step)
            state = step.applied(to: state)
        }
        guard target.periodNanoseconds > 0 else { return [] }
        let duty = min(target.dutyNanoseconds, target.periodNanoseconds)

        if state.enabled, !target.enabled || target.polarity != state.polarity {
            if !target.enabled, duty < state.dutyNanoseconds, state.periodNanoseconds > 0 { write(.dutyCycle(duty)) }
            write(.enable(false))
        }
        if target.periodNanoseconds != state.periodNanoseconds {
            if target.periodNanoseconds < state.dutyNanoseconds {
                write(.dutyCycle(duty))
                write(.period(target.periodNanoseconds))
            } else {
                write(.period(target.periodNanoseconds))
                if duty != state.dutyNanoseconds { write(.dutyCycle(duty)) }
            }
        } else if duty != state.dutyNanoseconds {
            write(.dutyCycle(duty))
        }
        if target.polarity != state.polarity { write(.polarity(target.polarity)) }
        if target.enabled, !state.enabled { write(.enable(true)) }
        return writes
    }
}
