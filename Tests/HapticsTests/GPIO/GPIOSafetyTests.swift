import GPIOBoards
import Testing

private let ms: UInt64 = 1_000_000

@Suite("GPIO: the drive limiter caps the level, bounds the kick and cuts continuous drive")
struct GPIODriveLimiterTests {
    let limits = ActuatorLimits(
        ratedLevel: 0.6, overdriveLevel: 1, overdriveMaxNanoseconds: 30 * ms, maxContinuousNanoseconds: 200 * ms, restNanoseconds: 20 * ms)

    @Test("above the rated level only during the first overdrive_max of a drive, and the kick's end is a deadline")
    func boundedKick() {
        var limiter = DriveLimiter(limits: limits)
        let start: UInt64 = 1_000 * ms
        let kick = limiter.limit(1, at: start)
        #expect(kick == .init(level: 1, isKick: true, isCut: false, recheckAt: start + 30 * ms))
        let during = limiter.limit(0.9, at: start + 29 * ms)
        #expect(during.level == 0.9 && during.isKick)
        let after = limiter.limit(1, at: start + 30 * ms)
        #expect(after == .init(level: 0.6, isKick: false, isCut: false, recheckAt: start + 200 * ms))
        #expect(limiter.limit(0.4, at: start + 40 * ms).level == 0.4)
    }

    @Test("one kick per drive: a gap shorter than rest_ms continues the drive; a longer one starts a new drive with a new kick")
    func oneKickPerDrive() {
        var limiter = DriveLimiter(limits: limits)
        _ = limiter.limit(1, at: 0)
        _ = limiter.limit(0, at: 35 * ms)
        let shortGap = limiter.limit(1, at: 50 * ms)  // 15 ms < 20 ms rest: same drive, kick over
        #expect(shortGap.level == 0.6)
        #expect(limiter.driveStart == 0)
        _ = limiter.limit(0, at: 60 * ms)
        let longGap = limiter.limit(1, at: 80 * ms)  // 20 ms of rest: a new drive
        #expect(longGap.level == 1 && longGap.isKick)
        #expect(limiter.driveStart == 80 * ms)
    }

    @Test("a drive longer than max_continuous_ms is cut and stays cut until the request rests")
    func continuousCut() {
        var limiter = DriveLimiter(limits: limits)
        #expect(limiter.limit(0.5, at: 0).recheckAt == 200 * ms)
        #expect(limiter.limit(0.5, at: 199 * ms).level == 0.5)
        let cut = limiter.limit(0.5, at: 200 * ms)
        #expect(cut == .init(level: 0, isKick: false, isCut: true, recheckAt: nil))
        #expect(limiter.limit(0.7, at: 300 * ms).level == 0)  // still asking: still cut
        _ = limiter.limit(0, at: 310 * ms)
        #expect(limiter.limit(0.5, at: 320 * ms).level == 0)  // rested only 10 ms
        _ = limiter.limit(0, at: 330 * ms)
        let rearmed = limiter.limit(0.5, at: 350 * ms)  // rested 20 ms: a new drive
        #expect(rearmed == .init(level: 0.5, isKick: false, isCut: false, recheckAt: 550 * ms))
    }

    @Test("no overdrive configured: the rated level is the cap from the start; bad input is 0")
    func noOverdrive() {
        var limiter = DriveLimiter(limits: ActuatorLimits(ratedLevel: 0.8, maxContinuousNanoseconds: 1_000 * ms))
        let first = limiter.limit(1, at: 5)
        #expect(first.level == 0.8 && !first.isKick)
        #expect(limiter.limit(.nan, at: 10).level == 0)
        #expect(limiter.limit(-3, at: 20).level == 0)
    }
}

@Suite("GPIO: each topology's outputs and the order of its hardware steps")
struct GPIOActuatorOutputTests {
    static func actuator(_ topology: Topology, enable: Bool = true, direction: Bool = false, directionChannel: Int? = nil, deadZone: Double = 0)
        -> ActuatorConfig
    {
        let gpio =
            enable || direction
            ? GPIOConfig(
                chip: "gpiochip0", enable: enable ? LineConfig(reference: .offset(1), key: "e") : nil,
                direction: direction ? LineConfig(reference: .offset(2), key: "d") : nil, chipKey: "c") : nil
        let carrier: Double? = topology == .lraHBridge ? nil : 20_000
        return ActuatorConfig(
            name: "a", topology: topology, actuator: topology == .ermTransistor ? .erm : .lra, gpio: gpio,
            pwm: PWMConfig(chip: "pwmchip0", channel: 0, carrierFrequency: carrier, directionChannel: directionChannel, chipKey: "p", channelKey: "pc"),
            driver: topology == .driverIC ? DriverICConfig(zeroDuty: 0.5, fullDuty: 1) : nil,
            limits: ActuatorLimits(
                resonantFrequency: 175, frequencyRange: topology == .lraHBridge ? 130...260 : nil, ratedLevel: 1, maxContinuousNanoseconds: 1_000 * ms,
                deadZone: deadZone),
            key: "$.actuators[0]")
    }

    @Test("duty for a level: driver IC between zero and full duty, ERM linear, H-bridge asin(level)/π")
    func dutyMapping() {
        #expect(Self.actuator(.driverIC).dutyFraction(forLevel: 0) == 0.5)
        #expect(Self.actuator(.driverIC).dutyFraction(forLevel: 0.5) == 0.75)
        #expect(Self.actuator(.ermTransistor, enable: false).dutyFraction(forLevel: 0.3) == 0.3)
        let bridge = Self.actuator(.lraHBridge)
        #expect(bridge.dutyFraction(forLevel: 1) == 0.5)
        #expect(abs(bridge.dutyFraction(forLevel: 0.5) - 1.0 / 6.0) < 1e-12)  // sin(π/6) = 0.5
        let erm = Self.actuator(.ermTransistor, enable: false, deadZone: 0.25)
        #expect(erm.level(forAmplitude: 0) == 0)
        #expect(abs(erm.level(forAmplitude: 0.01) - 0.2575) < 1e-12)
        #expect(erm.level(forAmplitude: 1) == 1)
    }

    @Test("H-bridge frequency: 0 means resonance; others are clamped to the band; the period follows")
    func bridgeFrequency() {
        let bridge = Self.actuator(.lraHBridge, direction: true)
        #expect(bridge.driveFrequency(forRequested: 0) == 175)
        #expect(bridge.driveFrequency(forRequested: 500) == 260)
        #expect(bridge.driveFrequency(forRequested: 100) == 130)
        let driving = bridge.awakeOutput(level: 1, frequency: 200)
        #expect(driving.pwm == PWMState(periodNanoseconds: 5_000_000, dutyNanoseconds: 2_500_000, enabled: true))
        #expect(driving.lines == [.enable: true, .direction: true])
        let prepared = bridge.awakeOutput(level: 0, currentPeriod: 5_000_000)
        #expect(prepared.pwm == PWMState(periodNanoseconds: 5_000_000, dutyNanoseconds: 0, enabled: false))
        #expect(prepared.lines == [.enable: true, .direction: false])
        #expect(bridge.idleOutput().pwm.periodNanoseconds == 5_714_286)  // resonance
    }

    @Test("driver IC wake: the PWM reaches zero output (50 %) before the enable line goes active; sleep: enable first")
    func driverICOrder() {
        let driver = Self.actuator(.driverIC)
        let idle = driver.idleOutput()
        let prepared = driver.awakeOutput(level: 0)
        #expect(idle.isStopped)
        #expect(
            ActuatorOutput.steps(from: idle, to: prepared) == [
                .pwm(PWMState(periodNanoseconds: 50_000, dutyNanoseconds: 25_000, enabled: true)), .lines([.enable: true]),
            ])
        #expect(
            ActuatorOutput.steps(from: prepared, to: idle) == [
                .lines([.enable: false]), .pwm(PWMState(periodNanoseconds: 50_000, dutyNanoseconds: 0, enabled: false)),
            ])
        #expect(
            ActuatorOutput.steps(from: prepared, to: driver.awakeOutput(level: 1)) == [
                .pwm(PWMState(periodNanoseconds: 50_000, dutyNanoseconds: 50_000, enabled: true))
            ])
    }

    @Test("H-bridge: direction active before the PWM drives, inactive after it stopped")
    func bridgeOrder() {
        let bridge = Self.actuator(.lraHBridge, direction: true)
        let prepared = bridge.awakeOutput(level: 0)
        let driving = bridge.awakeOutput(level: 0.5)
        #expect(ActuatorOutput.steps(from: prepared, to: driving) == [.lines([.enable: true, .direction: true]), .pwm(driving.pwm)])
        #expect(ActuatorOutput.steps(from: driving, to: bridge.idleOutput(currentPeriod: 5_714_286)) == [
            .lines([.enable: false, .direction: true]), .pwm(PWMState(periodNanoseconds: 5_714_286, dutyNanoseconds: 0, enabled: false)),
            .lines([.enable: false, .direction: false]),
        ])
    }

    @Test("H-bridge: prepared, the PWM is stopped at duty 0; each drive enables it last, so its first push comes when it starts")
    func bridgePushesStartWithTheDrive() {
        let bridge = Self.actuator(.lraHBridge)
        let prepared = bridge.awakeOutput(level: 0)
        let kick = bridge.awakeOutput(level: 1), held = bridge.awakeOutput(level: 0.5)
        #expect(prepared.lines == [.enable: true] && !prepared.pwm.enabled && prepared.pwm.dutyNanoseconds == 0)
        // Electrically the same as a running PWM at duty 0: nothing drives the bridge.
        #expect(!prepared.isStopped)
        #expect(PWMWritePlan.writes(from: prepared.pwm, to: kick.pwm) == [.dutyCycle(kick.pwm.dutyNanoseconds), .enable(true)])
        // Within a drive the period runs on: only the duty changes.
        #expect(PWMWritePlan.writes(from: kick.pwm, to: held.pwm) == [.dutyCycle(held.pwm.dutyNanoseconds)])
        #expect(PWMWritePlan.writes(from: held.pwm, to: prepared.pwm) == [.dutyCycle(0), .enable(false)])
        // A carrier PWM's phase means nothing: it keeps running at its zero-output duty.
        #expect(Self.actuator(.driverIC).awakeOutput(level: 0).pwm.enabled)
        #expect(Self.actuator(.pwmVibrator).awakeOutput(level: 0).pwm.enabled)
    }

    @Test("pwm-vibrator: the direction PWM starts before the amplitude PWM and stops after it")
    func vibratorOrder() {
        let vibrator = Self.actuator(.pwmVibrator, directionChannel: 1)
        let prepared = vibrator.awakeOutput(level: 0)
        #expect(prepared.directionPWM == PWMState(periodNanoseconds: 50_000, dutyNanoseconds: 0, enabled: false))
        let driving = vibrator.awakeOutput(level: 0.4)
        #expect(driving.directionPWM == PWMState(periodNanoseconds: 50_000, dutyNanoseconds: 25_000, enabled: true))
        #expect(ActuatorOutput.steps(from: prepared, to: driving) == [.directionPWM(driving.directionPWM!), .pwm(driving.pwm)])
        #expect(ActuatorOutput.steps(from: driving, to: prepared) == [.pwm(prepared.pwm), .directionPWM(prepared.directionPWM!)])
    }
}
