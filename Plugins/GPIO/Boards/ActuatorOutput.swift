#if canImport(Glibc)
import Glibc
#endif

/// What an actuator's hardware does at one moment: its lines (logical values: true = active) and
/// its PWM channel(s). The power model maps onto it as:
/// - idle: every line inactive, every PWM disabled at duty 0;
/// - prepared (awake, no output): enable active, PWM running at the zero-output duty; an H-bridge's
///   PWM (no carrier: each period is one push of the LRA) stopped at duty 0 instead, which drives
///   the bridge the same, so each drive's first push comes when the drive starts;
/// - active: enable and direction active, PWM at the duty for the level (and the pwm-vibrator
///   direction PWM at its fixed duty).
public struct ActuatorOutput: Sendable, Hashable, CustomStringConvertible {
    /// The lines the actuator has, by role: true = active.
    public var lines: [LineRole: Bool]
    /// The amplitude PWM.
    public var pwm: PWMState
    /// The pwm-vibrator direction PWM, if any.
    public var directionPWM: PWMState?

    /// An output state.
    public init(lines: [LineRole: Bool], pwm: PWMState, directionPWM: PWMState? = nil) {
        self.lines = lines
        self.pwm = pwm
        self.directionPWM = directionPWM
    }

    /// Whether anything drives the actuator or keeps its driver awake.
    public var isStopped: Bool {
        !lines.values.contains(true) && !pwm.enabled && pwm.dutyNanoseconds == 0 && !(directionPWM?.enabled ?? false)
    }

    public var description: String {
        let lineText = LineRole.allCases.compactMap { role in lines[role].map { "\(role.rawValue)=\($0 ? 1 : 0)" } }
        var parts = lineText + ["pwm: \(pwm)"]
        if let directionPWM { parts.append("direction pwm: \(directionPWM)") }
        return parts.joined(separator: "; ")
    }
}

/// One step of a transition between two ``ActuatorOutput``s.
public enum OutputStep: Sendable, Hashable, CustomStringConvertible {
    /// Set the lines to these logical values (all of the actuator's lines).
    case lines([LineRole: Bool])
    /// Take the amplitude PWM to this state.
    case pwm(PWMState)
    /// Take the direction PWM to this state.
    case directionPWM(PWMState)

    public var description: String {
        switch self {
        case .lines(let values):
            "lines " + LineRole.allCases.compactMap { role in values[role].map { "\(role.rawValue)=\($0 ? 1 : 0)" } }.joined(separator: " ")
        case .pwm(let state): "pwm \(state)"
        case .directionPWM(let state): "direction pwm \(state)"
        }
    }
}

extension ActuatorOutput {
    /// The steps from `current` to `target`, ordered so the hardware never does something neither
    /// state asked for:
    /// - an enable line goes inactive *before* the PWM changes and active *after* it (a DRV2603
    ///   woken with its input low would drive full reverse; a bridge woken before its PWM is at
    ///   zero would kick);
    /// - a direction line goes active before the PWM drives and inactive after it stopped;
    /// - the direction PWM of a pwm-vibrator starts before the amplitude PWM and stops after it.
    public static func steps(from current: ActuatorOutput, to target: ActuatorOutput) -> [OutputStep] {
        var steps: [OutputStep] = []
        var lines = current.lines
        var early = false
        if lines[.enable] == true, target.lines[.enable] == false {
            lines[.enable] = false
            early = true
        }
        if lines[.direction] == false, target.lines[.direction] == true {
            lines[.direction] = true
            early = true
        }
        if early { steps.append(.lines(lines)) }

        let directionStarts = (target.directionPWM?.enabled ?? false) && !(current.directionPWM?.enabled ?? false)
        if directionStarts, let direction = target.directionPWM { steps.append(.directionPWM(direction)) }
        if target.pwm != current.pwm { steps.append(.pwm(target.pwm)) }
        if !directionStarts, let direction = target.directionPWM, direction != current.directionPWM { steps.append(.directionPWM(direction)) }

        if lines != target.lines { steps.append(.lines(target.lines)) }
        return steps
    }
}

extension ActuatorConfig {
    /// The level (0…1 of full scale) for an engine amplitude: 0 stays 0; above it, an actuator with
    /// a dead zone starts at the dead zone (`deadZone + amplitude × (1 − deadZone)`), so every
    /// non-zero amplitude moves the motor.
    public func level(forAmplitude amplitude: Double) -> Double {
        let clamped = amplitude.isFinite ? min(max(amplitude, 0), 1) : 0
        guard clamped > 0 else { return 0 }
        return limits.deadZone + clamped * (1 - limits.deadZone)
    }

    /// The level (0…1 of full scale) for a level a frame of levels asks for: the same, within 0…1
    /// (anything else, NaN too, is off or full scale). No dead-zone lift: calibration measures the
    /// actuator from zero through these. The drive limiter still applies.
    public func level(forLevel level: Double) -> Double {
        level.isFinite ? min(max(level, 0), 1) : 0
    }

    /// The duty cycle (0…1 of the period) that gives `level` (0…1 of full scale):
    /// - driver IC: `zeroDuty + level × (fullDuty − zeroDuty)`;
    /// - pwm-vibrator, ERM on a transistor: `level`;
    /// - H-bridge LRA: `asin(level) / π`, so the drive's fundamental, `∝ sin(π × duty)`, is
    ///   proportional to the level and full scale is a 50 % square wave.
    public func dutyFraction(forLevel level: Double) -> Double {
        let clamped = min(max(level, 0), 1)
        switch topology {
        case .driverIC:
            let driver = self.driver ?? DriverICConfig()
            return driver.zeroDuty + clamped * (driver.fullDuty - driver.zeroDuty)
        case .pwmVibrator, .ermTransistor:
            return clamped
        case .lraHBridge:
            return asin(clamped) / Double.pi
        }
    }

    /// The drive frequency for a frame's frequency (0 = the default): the resonance, or the asked
    /// frequency clamped to the actuator's range. In Hz.
    public func driveFrequency(forRequested requested: Double) -> Double {
        guard requested > 0, requested.isFinite, let range = frequencyRange else { return defaultFrequency }
        return min(max(requested, range.lowerBound), range.upperBound)
    }

    /// The idle output: lines inactive, PWM disabled at duty 0. `period` keeps the channel's
    /// current period when it has one (no needless writes), else the carrier or resonance period.
    public func idleOutput(currentPeriod period: UInt64 = 0) -> ActuatorOutput {
        let keep = period > 0 ? period : restingPeriod
        var lines: [LineRole: Bool] = [:]
        for (role, _) in gpio?.lines ?? [] { lines[role] = false }
        return ActuatorOutput(
            lines: lines, pwm: PWMState(periodNanoseconds: keep, dutyNanoseconds: 0, polarity: pwm.polarity, enabled: false),
            directionPWM: directionIdle)
    }

    /// The awake output at `level` (0…1 of full scale, already limited) and drive `frequency` in Hz
    /// (H-bridge only; 0 = resonance). At level 0 this is the prepared state: enable active, PWM
    /// running at the zero-output duty, or, on an H-bridge, stopped at duty 0.
    ///
    /// An H-bridge's PWM period is the drive's period: each period is one push. Left running
    /// between drives, it would put a drive's pushes wherever its free-running periods fall, so a
    /// 10 ms kick at 175 Hz would get one push or two, and the first push would come up to a period
    /// (5.7 ms) late. Stopped at duty 0 (the bridge's outputs held as in the off part of every
    /// period), it starts a period when a drive enables it (``PWMWritePlan`` writes `enable` last;
    /// a controller holds its counter while disabled, the Raspberry Pi's and most others): the first
    /// push comes with the drive, and a tap's pushes are the same every time.
    public func awakeOutput(level: Double, frequency: Double = 0, currentPeriod: UInt64 = 0) -> ActuatorOutput {
        let driving = level > 0
        let period: UInt64
        if let carrier = pwm.carrierPeriodNanoseconds {
            period = carrier
        } else if driving {
            period = periodNanoseconds(forFrequency: driveFrequency(forRequested: frequency))
        } else {
            period = currentPeriod > 0 ? currentPeriod : restingPeriod
        }
        let duty = UInt64((dutyFraction(forLevel: level) * Double(period)).rounded())
        var lines: [LineRole: Bool] = [:]
        if gpio?.enable != nil { lines[.enable] = true }
        if gpio?.direction != nil { lines[.direction] = driving }
        var direction = directionIdle
        if driving, let channelPeriod = pwm.carrierPeriodNanoseconds, direction != nil {
            direction = PWMState(
                periodNanoseconds: channelPeriod, dutyNanoseconds: UInt64((pwm.directionDuty * Double(channelPeriod)).rounded()),
                polarity: pwm.polarity, enabled: true)
        }
        return ActuatorOutput(
            lines: lines,
            pwm: PWMState(
                periodNanoseconds: period, dutyNanoseconds: min(duty, period), polarity: pwm.polarity, enabled: driving || pwm.carrierPeriodNanoseconds != nil),
            directionPWM: direction)
    }

    /// The period the channel rests at: the carrier, or the resonance period for an H-bridge.
    var restingPeriod: UInt64 {
        pwm.carrierPeriodNanoseconds ?? periodNanoseconds(forFrequency: max(defaultFrequency, 1))
    }

    var directionIdle: PWMState? {
        guard pwm.directionChannel != nil, let period = pwm.carrierPeriodNanoseconds else { return nil }
        return PWMState(periodNanoseconds: period, dutyNanoseconds: 0, polarity: pwm.polarity, enabled: false)
    }
}
