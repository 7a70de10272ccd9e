#if canImport(Glibc)
import Glibc
#endif

/// A brushed DC motor with an eccentric mass on its shaft (an ERM: a coin motor, a gamepad's rumble
/// motor), switched from a supply by a low-side transistor with a freewheeling diode across the
/// motor, as the `erm-transistor` and `pwm-vibrator` boards wire it.
///
/// **Electrical.** The winding is a resistance R and an inductance L with a back-EMF `Kₑ·ω`. While
/// the switch conducts, `L·di/dt = V − R·i − Kₑ·ω`; while it is open the current freewheels through
/// the diode (`L·di/dt = −R·i − Kₑ·ω`) until it reaches zero, and the diode keeps it from
/// reversing. Each switch state is solved exactly with ω held, so a 20 kHz carrier whose period is
/// comparable to L/R gives the real average current (which, at low duty, is not `duty × V / R`).
/// The current never reverses: the switch can push the rotor but never brake it.
///
/// **Mechanical.** `J·dω/dt = Kₜ·i − b·ω − T_c` while turning (viscous and running friction); a
/// stopped rotor stays stopped until the motor torque exceeds the breakaway (static) friction
/// `T_s > T_c`, and stops when friction brings it to rest: the start threshold is higher than the
/// stop threshold (hysteresis). Spinning up is damped by the back-EMF through the supply; coasting
/// down, only by friction, so the two take different times.
///
/// **Vibration.** The eccentric mass pulls the housing with `m·r·ω²` towards it and `m·r·dω/dt`
/// along its path; the housing (motor, mount and sensor, mass M) accelerates with
/// `eccentricity × (ω²·r̂ + dω/dt·t̂)`, `eccentricity = m·r/M`: a vector turning in the plane
/// perpendicular to the shaft (an ERM shakes along two axes, an LRA along one).
public struct EccentricMotor: BenchActuator {
    /// The motor, its circuit and its mount, in SI units.
    public struct Parameters: Sendable, Hashable {
        /// The supply the transistor switches, volts.
        public var supplyVoltage: Double
        /// Winding resistance, ohms.
        public var resistance: Double
        /// Winding inductance, henries.
        public var inductance: Double
        /// Torque constant Kₜ, N·m/A, equal to the back-EMF constant Kₑ in V·s/rad.
        public var torqueConstant: Double
        /// Rotor and eccentric mass inertia J, kg·m².
        public var inertia: Double
        /// Viscous friction b, N·m·s/rad.
        public var viscousFriction: Double
        /// Running (Coulomb) friction T_c, N·m.
        public var runningFriction: Double
        /// Breakaway (static) friction T_s, N·m, at least the running friction.
        public var breakawayFriction: Double
        /// Eccentric mass × radius over the mass of everything that shakes, metres.
        public var eccentricity: Double
        /// The direction (a unit vector in the sensor's axes) the eccentric mass points at angle 0.
        public var firstAxis: SIMD3<Double>
        /// The direction it points a quarter turn later: with ``firstAxis``, the plane it turns in.
        public var secondAxis: SIMD3<Double>

        /// Parameters.
        public init(
            supplyVoltage: Double, resistance: Double, inductance: Double, torqueConstant: Double, inertia: Double, viscousFriction: Double,
            runningFriction: Double, breakawayFriction: Double, eccentricity: Double, firstAxis: SIMD3<Double>, secondAxis: SIMD3<Double>
        ) {
            self.supplyVoltage = supplyVoltage
            self.resistance = resistance
            self.inductance = inductance
            self.torqueConstant = torqueConstant
            self.inertia = inertia
            self.viscousFriction = viscousFriction
            self.runningFriction = runningFriction
            self.breakawayFriction = max(breakawayFriction, runningFriction)
            self.eccentricity = eccentricity
            self.firstAxis = firstAxis
            self.secondAxis = secondAxis
        }

        /// The figures a motor's datasheet gives, turned into physical parameters.
        ///
        /// - Parameters:
        ///   - ratedVoltage: the voltage the speed and current are rated at, volts.
        ///   - ratedSpeed: shaft speed at the rated voltage, revolutions per second (= vibration frequency, Hz).
        ///   - ratedCurrent: current at the rated voltage, amperes.
        ///   - stallCurrent: current of a blocked rotor at the rated voltage (the "start current"), amperes.
        ///   - runningVoltage: the (averaged) voltage below which a turning motor stops, volts.
        ///   - breakawayVoltage: the voltage that starts a motor at rest, volts (≥ `runningVoltage`).
        ///   - spinUpTimeConstant: the speed's time constant spinning up at the rated voltage, seconds.
        ///   - ratedAcceleration: the housing's acceleration at the rated speed, g (each axis of the turning vector).
        ///   - supplyVoltage: what the board switches, volts.
        ///   - electricalTimeConstant: L/R, seconds.
        ///   - firstAxis, secondAxis: the plane of rotation in the sensor's axes.
        public static func datasheet(
            ratedVoltage: Double, ratedSpeed: Double, ratedCurrent: Double, stallCurrent: Double, runningVoltage: Double, breakawayVoltage: Double,
            spinUpTimeConstant: Double, ratedAcceleration: Double, supplyVoltage: Double, electricalTimeConstant: Double,
            firstAxis: SIMD3<Double>, secondAxis: SIMD3<Double>
        ) -> Parameters {
            let resistance = ratedVoltage / stallCurrent
            let omega = 2 * Double.pi * ratedSpeed
            let constant = (ratedVoltage - ratedCurrent * resistance) / omega
            // Running friction from the running voltage (a motor at the edge of stopping draws
            // just enough current to overcome it); the rest of the rated load is viscous.
            let running = constant * runningVoltage / resistance
            let load = constant * ratedCurrent
            let viscous = max(load - running, 0) / omega
            // J from the spin-up time constant: the electrical damping Kₜ·Kₑ/R and friction b act together.
            let inertia = spinUpTimeConstant * (viscous + constant * constant / resistance)
            return Parameters(
                supplyVoltage: supplyVoltage, resistance: resistance, inductance: electricalTimeConstant * resistance, torqueConstant: constant,
                inertia: inertia, viscousFriction: viscous, runningFriction: running, breakawayFriction: constant * breakawayVoltage / resistance,
                eccentricity: ratedAcceleration * standardGravity / (omega * omega), firstAxis: firstAxis, secondAxis: secondAxis)
        }
    }

    /// The motor.
    public let parameters: Parameters
    /// Winding current, amperes.
    public private(set) var current = 0.0
    /// Shaft speed, rad/s (never negative: the switch only pushes one way).
    public private(set) var speed = 0.0
    /// Shaft angle, radians.
    public private(set) var angle: Double
    /// Shaft angular acceleration, rad/s², averaged over about a millisecond.
    public private(set) var angularAcceleration = 0.0
    /// Whether the rotor turns (false: held by static friction).
    public private(set) var isTurning = false
    /// The motor torque averaged over about a millisecond, N·m.
    private var sustainedTorque = 0.0
    private let maximumStep = 50e-6

    /// A motor at rest with its eccentric mass at `angle` radians.
    public init(parameters: Parameters, angle: Double = 0) {
        self.parameters = parameters
        self.angle = angle
    }

    /// Shaft speed in revolutions per second (the vibration frequency, Hz).
    public var revolutionsPerSecond: Double { speed / (2 * Double.pi) }

    public var acceleration: SIMD3<Double> {
        let radial = parameters.eccentricity * speed * speed, tangential = parameters.eccentricity * angularAcceleration
        let c = cos(angle), s = sin(angle)
        let inPlane = (radial * c - tangential * s, radial * s + tangential * c)
        return (parameters.firstAxis * inPlane.0 + parameters.secondAxis * inPlane.1) / standardGravity
    }

    // The loop below runs tens of thousands of times per simulated second, in debug builds too (the
    // bench runs in real time inside the tests): plain Double locals, no generics, no calls but libm.
    public mutating func advance(from start: Double, to end: Double, drive: PWMWaveform) {
        let supply = parameters.supplyVoltage, resistance = parameters.resistance, constant = parameters.torqueConstant
        let tau = parameters.inductance / parameters.resistance, inertia = parameters.inertia, viscous = parameters.viscousFriction
        let running = parameters.runningFriction, breakaway = parameters.breakawayFriction
        var current = self.current, speed = self.speed, angle = self.angle, turning = isTurning, alpha = angularAcceleration
        var sustained = sustainedTorque
        var time = start
        var level = drive.level(at: time)
        while time < end {
            if time >= level.until { level = drive.level(at: time) }
            // (No generic min: this loop must be fast in debug builds.)
            var stepEnd = time + maximumStep
            if level.until < stepEnd { stepEnd = level.until }
            if end < stepEnd { stepEnd = end }
            let step = stepEnd - time
            if step <= 0 {
                time = level.until
                continue
            }
            // Electrical: exact over the step with ω held; `average` is the mean current.
            let backEMF = constant * speed
            var average = 0.0
            if level.high {
                let target = (supply - backEMF) / resistance
                let decay = exp(-step / tau)
                average = target + (current - target) * tau / step * (1 - decay)
                current = target + (current - target) * decay
            } else if current > 0 {
                // Freewheeling through the diode towards −Kₑω/R; the diode stops it at zero.
                let target = -backEMF / resistance
                let zeroAt = target < 0 ? tau * log((current - target) / -target) : Double.infinity
                if zeroAt >= step {
                    let decay = exp(-step / tau)
                    average = target + (current - target) * tau / step * (1 - decay)
                    current = target + (current - target) * decay
                } else {
                    average = (target * zeroAt + (current - target) * tau * (1 - exp(-zeroAt / tau))) / step
                    current = 0
                }
            } else {
                current = 0
            }
            // Mechanical: static friction holds a stopped rotor; semi-implicit in the viscous term.
            let torque = constant * average
            // Breaking away takes a sustained torque, not one carrier pulse's peak.
            sustained += (torque - sustained) * min(step / 1e-3, 1)
            if !turning, sustained > breakaway { turning = true }
            if turning {
                let previous = speed
                var next = (previous * inertia + step * (torque - running)) / (inertia + step * viscous)
                if next <= 0 {
                    next = 0
                    turning = false
                }
                speed = next
                // The torque ripples at the carrier; the sensor (and the skin) see its average.
                alpha += ((next - previous) / step - alpha) * min(step / 1e-3, 1)
                angle += 0.5 * (previous + next) * step
                if angle > 2 * Double.pi { angle -= 2 * Double.pi * (angle / (2 * Double.pi)).rounded(.down) }
            } else {
                alpha = 0
            }
            time = stepEnd
        }
        self.current = current
        self.speed = speed
        self.angle = angle
        isTurning = turning
        angularAcceleration = alpha
        sustainedTorque = sustained
    }
}
