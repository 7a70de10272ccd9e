import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// Drive as the device received it: the frames of a recording, as offsets from a start, each
/// holding until the next (the drive between frames is constant, as on the hardware).
public struct DriveSchedule: Sendable, Hashable {
    /// One frame: seconds from the schedule's start, and every channel's drive.
    public struct Step: Sendable, Hashable {
        /// Seconds from the start.
        public var time: Double
        /// Per-channel drive, in the device's channel order.
        public var channels: [ChannelDrive]

        /// A step.
        public init(time: Double, channels: [ChannelDrive]) {
            self.time = time
            self.channels = channels
        }
    }

    /// The steps in time order; before the first, every channel is off.
    public var steps: [Step]

    /// A schedule.
    public init(steps: [Step]) {
        self.steps = steps.sorted { $0.time < $1.time }
    }

    /// The frames of `recording` for `deviceID` whose time is in `start ..< end`, as offsets from
    /// `start`; the drive in force at `start` (from an earlier frame) is carried in at offset 0.
    public init(recording frames: [(received: HapticInstant, frame: DriveFrame)], from start: HapticInstant, to end: HapticInstant) {
        var steps: [Step] = []
        var carried: DriveFrame?
        for entry in frames {
            let time = entry.frame.time
            if time < start {
                carried = entry.frame
            } else if time < end {
                steps.append(Step(time: time.seconds(since: start), channels: entry.frame.channels))
            }
        }
        if let carried, !carried.isSilent, steps.first.map({ $0.time > 0 }) ?? true {
            steps.insert(Step(time: 0, channels: carried.channels), at: 0)
        }
        self.init(steps: steps)
    }
}

/// A seeded pseudo-random generator (SplitMix64) with Gaussian draws, so simulated noise is
/// reproducible: the same seed gives the same measurement.
public struct SeededRandom: Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0 ..< 1.
    public mutating func uniform() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-300), u2 = uniform()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

/// A linear resonant actuator as a driven, damped mass–spring resonator.
///
/// The drive (0…1) passes a dead zone and a response curve to become a force amplitude
/// `u = ((d − deadZone) / (1 − deadZone))^responseExponent`, applied as a sinusoid at the frame's
/// frequency (its resonant frequency when the frame says 0). The moving mass obeys
/// `x'' + (ω₀/Q)·x' + ω₀²·x = (peak/Q)·u·sin φ` with ω₀ = 2π·f₀, so at resonance and full drive
/// the steady acceleration amplitude is `peakAcceleration` g. The output is the acceleration `x''`
/// in g. Starting and stopping take about Q/(π·f₀) seconds (the envelope's time constant), which
/// is why a 12 ms tap on a high-Q LRA is weak.
public struct LRAModel: Sendable, Hashable {
    /// Resonant frequency f₀, Hz.
    public var resonantFrequency: Double
    /// Quality factor Q (> 0.5; the envelope time constant is Q/(π·f₀) s).
    public var qFactor: Double
    /// Drive (0…1) below which nothing moves.
    public var deadZone: Double
    /// Exponent of the drive-to-force curve above the dead zone.
    public var responseExponent: Double
    /// Steady acceleration amplitude at resonance and full drive, g.
    public var peakAcceleration: Double

    /// A resonator.
    public init(resonantFrequency: Double, qFactor: Double, deadZone: Double, responseExponent: Double = 1, peakAcceleration: Double) {
        self.resonantFrequency = resonantFrequency
        self.qFactor = qFactor
        self.deadZone = deadZone
        self.responseExponent = responseExponent
        self.peakAcceleration = peakAcceleration
    }

    /// The steady acceleration amplitude (g) at `drive` and `frequency` Hz (the model's truth, for tests).
    public func steadyOutput(drive: Double, frequency: Double) -> Double {
        let u = effectiveDrive(drive)
        let r = frequency / resonantFrequency
        let response = r * r / ((1 - r * r) * (1 - r * r) + (r / qFactor) * (r / qFactor)).squareRoot() / qFactor
        return peakAcceleration * u * response
    }

    func effectiveDrive(_ drive: Double) -> Double {
        drive > deadZone ? pow((drive - deadZone) / (1 - deadZone), responseExponent) : 0
    }
}

/// An eccentric-rotating-mass motor: a speed that lags the drive, and a vibration that grows with
/// the square of the speed (the centripetal force of the mass).
///
/// The drive passes a dead zone (the motor stalls below it) to become a target speed
/// `u = (d − deadZone) / (1 − deadZone)` (0…1 of full speed); the speed `s` follows it with time
/// constant τ (`s' = (u − s)/τ`, for spin-up and coast-down alike). The output is
/// `peakAcceleration · s² · sin φ` g, with φ turning at `nominalFrequency · s` Hz, so the steady
/// output follows the drive with exponent 2 and the vibration frequency rises with speed.
public struct ERMModel: Sendable, Hashable {
    /// Vibration frequency at full speed, Hz.
    public var nominalFrequency: Double
    /// Drive (0…1) below which the motor stalls.
    public var deadZone: Double
    /// Speed time constant τ, seconds (a start to 90 % takes about 2.3 τ).
    public var timeConstant: Double
    /// Steady acceleration amplitude at full speed, g.
    public var peakAcceleration: Double

    /// A motor.
    public init(nominalFrequency: Double, deadZone: Double, timeConstant: Double, peakAcceleration: Double) {
        self.nominalFrequency = nominalFrequency
        self.deadZone = deadZone
        self.timeConstant = timeConstant
        self.peakAcceleration = peakAcceleration
    }

    /// The steady acceleration amplitude (g) at `drive` (the model's truth, for tests).
    public func steadyOutput(drive: Double) -> Double {
        let u = drive > deadZone ? (drive - deadZone) / (1 - deadZone) : 0
        return peakAcceleration * u * u
    }
}

/// What one channel of a simulated device is.
public enum ChannelModel: Sendable, Hashable {
    /// A resonator (LRA, voice coil).
    case lra(LRAModel)
    /// A rotating-mass motor (ERM, a gamepad's rumble motor, a trigger motor).
    case erm(ERMModel)

    /// The steady output (g) at `drive` and `frequency` (0: the channel's default), for tests.
    public func steadyOutput(drive: Double, frequency: Double = 0) -> Double {
        switch self {
        case .lra(let model): model.steadyOutput(drive: drive, frequency: frequency > 0 ? frequency : model.resonantFrequency)
        case .erm(let model): model.steadyOutput(drive: drive)
        }
    }

    /// The channel's dead zone (the model's truth).
    public var deadZone: Double {
        switch self {
        case .lra(let model): model.deadZone
        case .erm(let model): model.deadZone
        }
    }
}

/// A simulated device: one model per channel, their accelerations summed (they share a housing),
/// plus Gaussian sensor noise from a seeded generator.
///
/// A dual-motor gamepad is two ``ERMModel``s of different nominal frequency and strength.
public struct DeviceModel: Sendable, Hashable {
    /// One model per device channel, in channel order.
    public var channels: [ChannelModel]
    /// Standard deviation of the sensor noise added to every sample, g.
    public var noise: Double
    /// The noise generator's seed.
    public var seed: UInt64

    /// A device model.
    public init(channels: [ChannelModel], noise: Double = 0, seed: UInt64 = 1) {
        self.channels = channels
        self.noise = noise
        self.seed = seed
    }

    /// The acceleration (g) sampled at `sampleRate` Hz for `duration` seconds from the schedule's
    /// start, starting at rest. `noiseStream` picks an independent noise sequence (e.g. the
    /// stimulus's index), so repeated stimuli do not share their noise.
    public func simulate(_ schedule: DriveSchedule, duration: Double, sampleRate: Double, noiseStream: UInt64 = 0) -> [Double] {
        var runner = makeRunner(noiseStream: noiseStream)
        let count = max(Int((duration * sampleRate).rounded()), 0)
        let dt = 1 / sampleRate
        var result = [Double](repeating: 0, count: count)
        var next = 0
        var drives = [ChannelDrive](repeating: .off, count: channels.count)
        for index in 0..<count {
            let time = Double(index) * dt
            while next < schedule.steps.count, schedule.steps[next].time <= time + 1e-12 {
                drives = schedule.steps[next].channels
                next += 1
            }
            result[index] = runner.advance(by: dt, drives: drives)
        }
        return result
    }

    /// A stepper that advances the device's state by any time step (for models fed in real time).
    public func makeRunner(noiseStream: UInt64 = 0) -> Runner {
        Runner(model: self, noiseStream: noiseStream)
    }

    /// The device's state (every resonator's position and velocity, every motor's speed and phase),
    /// advanced step by step.
    public struct Runner: Sendable {
        let model: DeviceModel
        private var position: [Double]
        private var velocity: [Double]
        private var speed: [Double]
        private var phase: [Double]
        private var random: SeededRandom

        init(model: DeviceModel, noiseStream: UInt64) {
            self.model = model
            let count = model.channels.count
            position = Array(repeating: 0, count: count)
            velocity = Array(repeating: 0, count: count)
            speed = Array(repeating: 0, count: count)
            var random = SeededRandom(seed: model.seed &* 0x2545_F491_4F6C_DD1D &+ noiseStream &* 0x9E37_79B9)
            // A stopped rotor rests at any angle; a resonator starts in phase with its drive.
            phase = model.channels.map { channel in
                if case .erm = channel { return 2 * Double.pi * random.uniform() }
                return 0
            }
            self.random = random
        }

        /// Advances by `dt` seconds with `drives` held, and returns the acceleration at the end, g.
        ///
        /// The resonator is advanced by the exact solution of the damped oscillator over the step
        /// with the force held (zero-order hold), so it is stable for any step and accurate for
        /// steps much shorter than a period.
        public mutating func advance(by dt: Double, drives: [ChannelDrive]) -> Double {
            var total = 0.0
            for (index, channel) in model.channels.enumerated() {
                let drive = index < drives.count ? drives[index] : .off
                switch channel {
                case .lra(let lra):
                    let frequency = drive.frequency > 0 ? drive.frequency : lra.resonantFrequency
                    let omega0 = 2 * Double.pi * lra.resonantFrequency
                    let force = lra.peakAcceleration / lra.qFactor * lra.effectiveDrive(drive.amplitude) * sin(phase[index])
                    let zeta = 1 / (2 * lra.qFactor)
                    let sigma = zeta * omega0
                    let omegaD = omega0 * max(1 - zeta * zeta, 1e-12).squareRoot()
                    let decay = exp(-sigma * dt), c = cos(omegaD * dt), s = sin(omegaD * dt)
                    // Deviation from the static equilibrium x* = force/ω0².
                    let equilibrium = force / (omega0 * omega0)
                    let x = position[index] - equilibrium, v = velocity[index]
                    position[index] = equilibrium + decay * ((c + sigma / omegaD * s) * x + s / omegaD * v)
                    velocity[index] = decay * (-(omega0 * omega0) / omegaD * s * x + (c - sigma / omegaD * s) * v)
                    phase[index] = (phase[index] + 2 * Double.pi * frequency * dt).truncatingRemainder(dividingBy: 2 * Double.pi)
                    total += force - 2 * sigma * velocity[index] - omega0 * omega0 * position[index]
                case .erm(let erm):
                    let target = drive.amplitude > erm.deadZone ? (drive.amplitude - erm.deadZone) / (1 - erm.deadZone) : 0
                    speed[index] += (target - speed[index]) * (1 - exp(-dt / erm.timeConstant))
                    phase[index] = (phase[index] + 2 * Double.pi * erm.nominalFrequency * speed[index] * dt).truncatingRemainder(dividingBy: 2 * Double.pi)
                    total += erm.peakAcceleration * speed[index] * speed[index] * sin(phase[index])
                }
            }
            if model.noise > 0 { total += model.noise * random.gaussian() }
            return total
        }
    }
}
