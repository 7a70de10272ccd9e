import DRV260x
import FuzzSupport
import GPIOBoards

/// Board files: any bytes give a board or a `BoardFileError`. Every actuator of an accepted board
/// yields outputs whose duty cycles fit their periods, from rest to full drive and back, and a
/// drive limiter that never passes more than the overdrive level. Every I²C actuator (topology
/// `i2c`) yields a register plan (its voltages within the chip's registers), RTP codes within the
/// loop's range, a set-up that ends at RTP zero in standby and a stop that ends in standby.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBoard(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let board: BoardFile
    do {
        board = try BoardFile.parse(input(data, size), path: "fuzz.json")
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    require((1...16).contains(board.actuators.count + board.i2cActuators.count), "\(board.actuators.count) + \(board.i2cActuators.count) actuators")
    for config in board.i2cActuators {
        require(config.address == DRV260x.address && config.busNumber != nil, "bus \(config.busPath) address \(config.address)")
        let plan: DRV260xPlan
        do {
            plan = try DRV260xPlan(drive: config.drive)
        } catch {
            require(false, "an accepted I2C actuator without a plan: \(error)")
            return 0
        }
        for level in [-1, 0, 1e-9, 0.5, 1, 2, .nan] {
            let code = plan.rtpCode(level: level)
            require(config.drive.loop == .closed || code >= 0x80, "open-loop RTP \(code) below mid-scale (a brake) for level \(level)")
        }
        require(
            Array(plan.setup(calibration: nil).suffix(2)) == [DRV260x.Write(.rtpInput, plan.zeroCode), DRV260x.Write(.mode, DRV260x.standbyMode)],
            "set-up does not end at RTP zero in standby")
        require(plan.halt.last == DRV260x.Write(.mode, DRV260x.standbyMode), "stop does not end in standby")
        require((0...1).contains(config.limits.ratedLevel) && config.limits.maxContinuousNanoseconds > 0, "limits \(config.limits)")
    }
    for config in board.actuators {
        let idle = config.idleOutput()
        var current = idle
        for amplitude in [0, 1e-6, 0.25, 1] {
            for frequency in [0, 1, 175, 1e6] {
                let level = config.level(forAmplitude: amplitude)
                require(level.isFinite && (0...1).contains(level), "level \(level) for amplitude \(amplitude)")
                let target = config.awakeOutput(level: level, frequency: frequency, currentPeriod: current.pwm.periodNanoseconds)
                for state in [target.pwm] + (target.directionPWM.map { [$0] } ?? []) {
                    require(state.periodNanoseconds > 0 && state.dutyNanoseconds <= state.periodNanoseconds, "PWM \(state)")
                }
                _ = ActuatorOutput.steps(from: current, to: target)
                _ = PWMWritePlan.writes(from: current.pwm, to: target.pwm)
                current = target
            }
        }
        _ = ActuatorOutput.steps(from: current, to: config.idleOutput(currentPeriod: current.pwm.periodNanoseconds))

        var limiter = DriveLimiter(limits: config.limits)
        var now: UInt64 = 1_000_000_000
        for requested in [1.0, 1, 0.5, 0, 1] {
            let decision = limiter.limit(requested, at: now)
            require(decision.level <= config.limits.overdriveLevel && decision.level >= 0, "limited level \(decision.level)")
            now += decision.recheckAt.map { $0 > now ? min($0 - now, 10_000_000_000) : 1_000_000 } ?? 1_000_000
        }
    }
    return 0
}
