/// How a DRV260x drives its actuator: what the board file states (the motor, its voltages, the
/// loop) and the register values that follow from it, with the datasheet's formulas
/// (`Docs/I2CHaptics.md`).
public struct DRV260xDrive: Sendable, Hashable {
    /// The motor the chip drives.
    public enum Actuator: String, Sendable, Hashable, CaseIterable {
        /// An eccentric rotating mass motor.
        case erm
        /// A linear resonant actuator.
        case lra
    }

    /// Closed loop (the chip senses back-EMF: automatic overdrive and braking, and for an LRA its
    /// resonance tracked) or open loop (the drive as asked, no sensing).
    public enum Loop: String, Sendable, Hashable, CaseIterable {
        /// Back-EMF feedback: full scale is the rated voltage; the chip kicks and brakes by itself.
        case closed
        /// No feedback: full scale is the overdrive clamp.
        case open
    }

    /// The chip.
    public var chip: DRV260x.Chip
    /// The motor.
    public var actuator: Actuator
    /// The rated voltage in volts: average for an ERM, RMS for an LRA (its data sheet's figure).
    public var ratedVoltage: Double
    /// The highest voltage the chip may apply, in volts: average for an ERM, peak for an LRA.
    public var overdriveVoltage: Double
    /// The LRA's resonance in Hz, if known (auto-calibration measures it); nil for an ERM.
    public var resonantFrequency: Double?
    /// The loop.
    public var loop: Loop
    /// The ROM library the effects are played from (chips with one), nil for a chip without.
    public var library: DRV260x.ROMLibrary?

    /// A drive.
    public init(
        chip: DRV260x.Chip, actuator: Actuator, ratedVoltage: Double, overdriveVoltage: Double, resonantFrequency: Double? = nil,
        loop: Loop = .closed, library: DRV260x.ROMLibrary? = nil
    ) {
        self.chip = chip
        self.actuator = actuator
        self.ratedVoltage = ratedVoltage
        self.overdriveVoltage = overdriveVoltage
        self.resonantFrequency = resonantFrequency
        self.loop = loop
        self.library = library
    }

    /// The resonance the LRA formulas use when the board file does not state one, in Hz (the
    /// common 175 Hz coin LRA; auto-calibration measures the real one).
    public static let assumedResonance = 175.0

    /// The resonance the formulas use, in Hz (an LRA's stated one, else ``assumedResonance``).
    public var formulaResonance: Double { resonantFrequency ?? Self.assumedResonance }

    // MARK: Timing the plan writes

    /// SAMPLE_TIME written (CONTROL2 `[5:4]` = 3), in seconds: the reset value, and the figure
    /// the LRA rated-voltage formula is worked with.
    public static let sampleTime = 300e-6
    /// BLANKING_TIME and IDISS_TIME codes written (CONTROL2 `[3:2]`, `[1:0]` = 1, the reset values).
    public static let blankingCode: UInt8 = 1
    /// IDISS_TIME code written.
    public static let idissCode: UInt8 = 1
    /// BLANKING_TIME and IDISS_TIME of code 1 for an ERM, in seconds (75 µs each, datasheet tables).
    public static let ermBlankingTime = 75e-6
    /// IDISS_TIME of code 1 for an ERM, in seconds.
    public static let ermIdissTime = 75e-6

    /// DRIVE_TIME (CONTROL1 `[4:0]`): for an LRA half its period (DT × 0.1 ms + 0.5 ms), for an ERM
    /// the reset value 19 (4.8 ms).
    public var driveTimeCode: UInt8 {
        switch actuator {
        case .erm: return 19
        case .lra:
            let halfPeriod = 0.5 / formulaResonance
            let code = ((halfPeriod - 0.5e-3) / 0.1e-3).rounded()
            return UInt8(max(0, min(31, code)))
        }
    }

    /// The drive time DRIVE_TIME sets, in seconds.
    public var driveTime: Double {
        switch actuator {
        case .erm: Double(driveTimeCode) * 0.2e-3 + 1e-3
        case .lra: Double(driveTimeCode) * 0.1e-3 + 0.5e-3
        }
    }

    // MARK: Voltages

    /// RATED_VOLTAGE for ``ratedVoltage`` (SLOS854 eq. 2–5): ERM closed loop V_avg = 21.18 mV ×
    /// code; LRA closed loop V_rms = 20.58 mV × code / √(1 − (4·t_sample + 300 µs)·f).
    /// - Throws: ``DRV260xVoltageError`` when the voltage needs a code outside 1…255.
    public func ratedVoltageCode() throws(DRV260xVoltageError) -> UInt8 {
        try Self.code(for: ratedVoltage, voltsPerStep: ratedVoltsPerStep, what: .rated)
    }

    /// OD_CLAMP for ``overdriveVoltage``: closed loop, ERM V_avg = 21.64 mV × code × (t_drive −
    /// 300 µs)/(t_drive + t_idiss + t_blank), LRA V_peak = 21.96 mV × code; open loop (full scale),
    /// ERM V_avg = 21.32 mV × code, LRA V_rms = 21.32 mV × code × √(1 − 800 µs·f).
    /// - Throws: ``DRV260xVoltageError`` when the voltage needs a code outside 1…255.
    public func overdriveClampCode() throws(DRV260xVoltageError) -> UInt8 {
        try Self.code(for: overdriveVoltage, voltsPerStep: clampVoltsPerStep, what: .overdrive)
    }

    /// Volts per RATED_VOLTAGE step.
    public var ratedVoltsPerStep: Double {
        switch actuator {
        case .erm: 21.18e-3
        case .lra: 20.58e-3 / (1 - (4 * Self.sampleTime + 300e-6) * formulaResonance).squareRoot()
        }
    }

    /// Volts per OD_CLAMP step, as ``overdriveVoltage`` is stated (ERM average, LRA peak in
    /// closed loop; ERM average, LRA RMS of the full-scale drive in open loop).
    public var clampVoltsPerStep: Double {
        switch (loop, actuator) {
        case (.closed, .erm):
            return 21.64e-3 * (driveTime - 300e-6) / (driveTime + Self.ermIdissTime + Self.ermBlankingTime)
        case (.closed, .lra):
            return 21.96e-3
        case (.open, .erm):
            return 21.32e-3
        case (.open, .lra):
            return 21.32e-3 * (1 - 800e-6 * formulaResonance).squareRoot()
        }
    }

    /// The rated drive as a fraction of RTP full scale: 1 in closed loop (full scale is the rated
    /// voltage), rated ÷ overdrive in open loop (full scale is the clamp).
    public var ratedLevel: Double {
        switch loop {
        case .closed: 1
        case .open: min(1, ratedVoltage / overdriveVoltage)
        }
    }

    static func code(for volts: Double, voltsPerStep: Double, what: DRV260xVoltageError.Which) throws(DRV260xVoltageError) -> UInt8 {
        let exact = volts / voltsPerStep
        guard exact.isFinite, exact.rounded() >= 1, exact.rounded() <= 255 else {
            throw DRV260xVoltageError(which: what, volts: volts, range: voltsPerStep...(voltsPerStep * 255))
        }
        return UInt8(exact.rounded())
    }
}

/// A voltage the chip cannot be set to: it needs a register code outside 1…255.
public struct DRV260xVoltageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which voltage.
    public enum Which: String, Sendable, Hashable {
        /// The rated voltage (RATED_VOLTAGE).
        case rated
        /// The overdrive voltage (OD_CLAMP).
        case overdrive
    }

    /// Which voltage.
    public var which: Which
    /// The voltage asked for, in volts.
    public var volts: Double
    /// The voltages this chip and drive can be set to, in volts.
    public var range: ClosedRange<Double>

    public var description: String {
        let register = which == .rated ? "RATED_VOLTAGE" : "OD_CLAMP"
        return "\(format(volts)) V is outside what \(register) can hold here (\(format(range.lowerBound))...\(format(range.upperBound)) V)"
    }

    private func format(_ value: Double) -> String { String((value * 1_000).rounded() / 1_000) }
}
