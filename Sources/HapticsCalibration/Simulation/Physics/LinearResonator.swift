/// A linear resonant actuator (a magnet on a spring inside a coil) driven directly by a PH/EN
/// H-bridge (DRV8838 class), as the `lra-hbridge` board wires it.
///
/// **Bridge.** While the PWM input is high the bridge puts the supply across the coil; while it is
/// low (and while the PWM is disabled) it brakes, shorting the coil. So the coil sees unipolar
/// pulses at the PWM's frequency, whose fundamental the calibration has to find out about.
///
/// **Coil.** `i = (v − Bl·ẋ)/R` (the inductance is neglected: L/R is microseconds against a
/// period of milliseconds); the force on the mass is `Bl·i`, so a shorted coil still damps it
/// through its back-EMF.
///
/// **Mass and spring.** `m·ẍ = Bl·i − c·ẋ − k·(1 + β·x²)·x`: a hardening spring (β > 0), so the
/// resonance rises with the amplitude and a drive at a fixed frequency falls behind it as it grows,
/// or a softening one (β < 0), whose resonance falls with the amplitude.
/// After the drive stops the mass rings down with the time constant `2m/(c + Bl²/R)`.
///
/// **Housing.** The housing (actuator, mount and sensor, mass M) recoils from the internal force:
/// its acceleration is `−(m/M)·ẍ`, along the actuator's axis only.
public struct LinearResonator: BenchActuator {
    /// The actuator, its bridge and its mount, in SI units.
    public struct Parameters: Sendable, Hashable {
        /// The bridge's supply, volts.
        public var supplyVoltage: Double
        /// Coil resistance, ohms.
        public var resistance: Double
        /// Force factor Bl, N/A (= V·s/m).
        public var forceFactor: Double
        /// Moving mass m, kg.
        public var movingMass: Double
        /// Spring stiffness at small amplitude k, N/m.
        public var stiffness: Double
        /// Spring hardening β, 1/m²: the stiffness is `k·(1 + β·x²)` (negative: a softening spring).
        public var hardening: Double
        /// Mechanical damping c, N·s/m (the coil's back-EMF damping comes on top).
        public var mechanicalDamping: Double
        /// Mass of everything that shakes with the housing M, kg.
        public var housingMass: Double
        /// The actuator's axis in the sensor's axes (a unit vector).
        public var axis: SIMD3<Double>

        /// Parameters.
        public init(
            supplyVoltage: Double, resistance: Double, forceFactor: Double, movingMass: Double, stiffness: Double, hardening: Double,
            mechanicalDamping: Double, housingMass: Double, axis: SIMD3<Double>
        ) {
            self.supplyVoltage = supplyVoltage
            self.resistance = resistance
            self.forceFactor = forceFactor
            self.movingMass = movingMass
            self.stiffness = stiffness
            self.hardening = hardening
            self.mechanicalDamping = mechanicalDamping
            self.housingMass = housingMass
            self.axis = axis
        }

        /// The figures a datasheet gives (and a few it does not), turned into physical parameters.
        ///
        /// - Parameters:
        ///   - resonantFrequency: f₀ at small amplitude, Hz.
        ///   - ratedVoltageRMS: the sine drive the part is rated for, volts RMS.
        ///   - ratedAcceleration: the housing's acceleration with that drive at f₀, g (peak), as if the spring were linear.
        ///   - drivenQ: the quality factor with the coil shorted by the driver (back-EMF damping included): it sets the ring-down, `Q/(π·f₀)` seconds.
        ///   - openCircuitQ: the quality factor with the coil open (mechanical damping only), above `drivenQ`.
        ///   - resonanceShift: how much the resonance rises at the rated amplitude (0.03 = 3 %; −0.03: falls 3 %, a softening spring).
        ///   - movingMass: kg.
        ///   - resistance: coil resistance, ohms.
        ///   - supplyVoltage: the bridge's supply, volts.
        ///   - axis: the actuator's axis in the sensor's axes.
        public static func datasheet(
            resonantFrequency: Double, ratedVoltageRMS: Double, ratedAcceleration: Double, drivenQ: Double, openCircuitQ: Double,
            resonanceShift: Double, movingMass: Double, resistance: Double, supplyVoltage: Double, axis: SIMD3<Double>
        ) -> Parameters {
            let omega = 2 * Double.pi * resonantFrequency
            let stiffness = movingMass * omega * omega
            let total = movingMass * omega / drivenQ
            let mechanical = movingMass * omega / max(openCircuitQ, drivenQ * 1.01)
            let forceFactor = ((total - mechanical) * resistance).squareRoot()
            // Excursion at resonance under the rated sine (linear spring), and the housing mass that
            // makes it the rated acceleration.
            let excursion = forceFactor * ratedVoltageRMS * 2.0.squareRoot() / resistance / (total * omega)
            let housingMass = movingMass * omega * omega * excursion / (ratedAcceleration * standardGravity)
            // A Duffing backbone rises by 3/8·β·X² at amplitude X.
            let hardening = 8 * resonanceShift / (3 * excursion * excursion)
            return Parameters(
                supplyVoltage: supplyVoltage, resistance: resistance, forceFactor: forceFactor, movingMass: movingMass, stiffness: stiffness,
                hardening: hardening, mechanicalDamping: mechanical, housingMass: housingMass, axis: axis)
        }
    }

    /// The actuator.
    public let parameters: Parameters
    /// The mass's displacement from rest, metres.
    public private(set) var position = 0.0
    /// Its velocity, m/s.
    public private(set) var velocity = 0.0
    private var massAcceleration = 0.0
    private let maximumStep = 50e-6

    /// An actuator at rest.
    public init(parameters: Parameters) {
        self.parameters = parameters
    }

    public var acceleration: SIMD3<Double> {
        parameters.axis * (-parameters.movingMass / parameters.housingMass * massAcceleration / standardGravity)
    }

    // Runs tens of thousands of times per simulated second, in debug builds too: Double locals only.
    public mutating func advance(from start: Double, to end: Double, drive: PWMWaveform) {
        var time = start
        var level = drive.level(at: time)
        while time < end {
            if time >= level.until { level = drive.level(at: time) }
            // (No generic min: this loop must be fast in debug builds.)
            var stepEnd = time + maximumStep
            if level.until < stepEnd { stepEnd = level.until }
            if end < stepEnd { stepEnd = end }
            let h = stepEnd - time
            if h <= 0 {
                time = level.until
                continue
            }
            // While low, the bridge shorts the coil: no voltage, the back-EMF still damps.
            step(h, voltage: level.high ? parameters.supplyVoltage : 0)
            time = stepEnd
        }
    }

    /// Advances by `duration` seconds with `voltage` volts across the coil from a linear amplifier
    /// (a voltage source: the coil's back-EMF damps the mass through it, as through a shorted
    /// bridge), in steps of at most 50 µs. A sound card's sample held for its period is such a drive.
    public mutating func advance(by duration: Double, voltage: Double) {
        var left = duration
        while left > 0 {
            let h = left < maximumStep ? left : maximumStep
            step(h, voltage: voltage)
            left -= h
        }
    }

    /// One classical Runge–Kutta step of `h` seconds on x'' = (F − c·x' − k·(1 + β·x²)·x)/m, with
    /// `voltage` across the coil: the coil's back-EMF current is folded into the damping, the
    /// voltage adds Bl·V/R.
    private mutating func step(_ h: Double, voltage: Double) {
        let resistance = parameters.resistance, bl = parameters.forceFactor
        let mass = parameters.movingMass, stiffness = parameters.stiffness, hardening = parameters.hardening
        let damping = parameters.mechanicalDamping + bl * bl / resistance
        let force = bl * voltage / resistance
        let x = position, v = velocity
        let a1 = (force - damping * v - stiffness * (1 + hardening * x * x) * x) / mass
        let x2 = x + 0.5 * h * v, v2 = v + 0.5 * h * a1
        let a2 = (force - damping * v2 - stiffness * (1 + hardening * x2 * x2) * x2) / mass
        let x3 = x + 0.5 * h * v2, v3 = v + 0.5 * h * a2
        let a3 = (force - damping * v3 - stiffness * (1 + hardening * x3 * x3) * x3) / mass
        let x4 = x + h * v3, v4 = v + h * a3
        let a4 = (force - damping * v4 - stiffness * (1 + hardening * x4 * x4) * x4) / mass
        let newX = x + h * (v + 2 * v2 + 2 * v3 + v4) / 6
        let newV = v + h * (a1 + 2 * a2 + 2 * a3 + a4) / 6
        position = newX
        velocity = newV
        massAcceleration = (force - damping * newV - stiffness * (1 + hardening * newX * newX) * newX) / mass
    }
}
