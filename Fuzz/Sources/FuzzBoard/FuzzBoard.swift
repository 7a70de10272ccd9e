import FuzzSupport
import GPIOBoards

/// Board files: any bytes give a board or a `BoardFileError`. Every actuator of an accepted board
/// yields outputs whose duty cycles fit their periods, from rest to full drive and back, and a
/// drive limiter that never passes more than the overdrive level.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBoard(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let board: BoardFile
    do {
        board = try BoardFile.parse(input(data, size), path: "fuzz.json")
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    require((1...16).contains(board.actuators.count), "\(board.actuators.count) actuators")
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
