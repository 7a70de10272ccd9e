/// The register writes that set a DRV260x up, wake it, drive it, stop it and calibrate it, computed
/// once from its ``DRV260xDrive`` (and, when stored, its ``DRV260xCalibration``).
///
/// Power model: idle is STANDBY (MODE bit 6: the chip's quiescent state, registers kept); awake is
/// real-time playback (MODE 5) at zero; a drive is RTP_INPUT. The RTP data format is unsigned
/// (CONTROL3 DATA_FORMAT_RTP = 1). In closed loop the input is unidirectional (CONTROL2
/// BIDIR_INPUT = 0): 0x00 is no drive and 0xFF the rated voltage. In open loop it is bidirectional
/// (the reset value): 0x80 is no drive, 0xFF the clamp, and below 0x80 reverse drive, a brake, which
/// no plan writes.
public struct DRV260xPlan: Sendable, Hashable {
    /// The drive the plan is for.
    public let drive: DRV260xDrive
    /// RATED_VOLTAGE.
    public let ratedCode: UInt8
    /// OD_CLAMP.
    public let clampCode: UInt8

    /// The plan for `drive`.
    /// - Throws: ``DRV260xVoltageError`` when a voltage is out of the chip's reach.
    public init(drive: DRV260xDrive) throws(DRV260xVoltageError) {
        self.drive = drive
        ratedCode = try drive.ratedVoltageCode()
        clampCode = try drive.overdriveClampCode()
    }

    typealias Write = DRV260x.Write

    /// RTP_INPUT for no drive: 0x00 in closed loop, 0x80 (mid-scale) in open loop.
    public var zeroCode: UInt8 { drive.loop == .closed ? 0x00 : 0x80 }

    /// RTP_INPUT for `level` (0…1 of full scale, clamped).
    public func rtpCode(level: Double) -> UInt8 {
        let level = level.isFinite ? max(0, min(1, level)) : 0
        switch drive.loop {
        case .closed: return UInt8((level * 255).rounded())
        case .open: return 0x80 + UInt8((level * 127).rounded())
        }
    }

    /// FEEDBACK_CONTROL: the actuator type, brake factor 4× (3), loop gain medium (1) and the
    /// back-EMF gain (calibrated, else the reset value 2).
    public func feedbackControl(backEMFGain: UInt8 = 2) -> UInt8 {
        (drive.actuator == .lra ? 0x80 : 0) | 0x30 | 0x04 | (backEMFGain & 0x03)
    }

    /// CONTROL1: STARTUP_BOOST and DRIVE_TIME.
    public var control1: UInt8 { 0x80 | drive.driveTimeCode }

    /// CONTROL2: BIDIR_INPUT (open loop only), BRAKE_STABILIZER, SAMPLE_TIME 300 µs, BLANKING and IDISS 1.
    public var control2: UInt8 {
        (drive.loop == .open ? 0x80 : 0) | 0x40 | 0x30 | (DRV260xDrive.blankingCode << 2) | DRV260xDrive.idissCode
    }

    /// CONTROL3: NG_THRESH 4 % (2), the open-loop bit of the actuator's type, DATA_FORMAT_RTP unsigned.
    public var control3: UInt8 {
        var value: UInt8 = 0x80 | 0x08
        if drive.loop == .open { value |= drive.actuator == .erm ? 0x20 : 0x01 }
        return value
    }

    /// CONTROL4: AUTO_CAL_TIME 500–700 ms (2, the reset value and what Linux uses).
    public static let control4: UInt8 = 0x20
    /// How long auto-calibration may take before it counts as hung, in nanoseconds: AUTO_CAL_TIME's
    /// longest (700 ms) with room for a slow bus.
    public static let calibrationTimeoutNanoseconds: UInt64 = 2_000_000_000

    /// The setup written at open (and after calibrating): first out of standby into internal
    /// trigger with GO cleared, which stops whatever a killed process left playing and makes every
    /// register writable (TI advises against writing registers in standby); then the voltages, the
    /// loop, the stored calibration if any, an open-loop LRA's period, the library and RTP_INPUT at
    /// zero; standby last: idle. Without a calibration, the chip's own A_CAL_COMP and A_CAL_BEMF
    /// stay (reset values, an earlier calibration since power-up, or burned into its OTP) and so
    /// does their BEMF_GAIN, which the caller reads and passes.
    public func setup(calibration: DRV260xCalibration?, backEMFGain: UInt8 = 2) -> [DRV260x.Write] {
        var writes = [Write(.mode, DRV260x.Mode.internalTrigger.rawValue), Write(.go, 0)]
        writes += [Write(.ratedVoltage, ratedCode), Write(.overdriveClamp, clampCode)]
        writes.append(Write(.feedbackControl, feedbackControl(backEMFGain: calibration?.backEMFGain ?? backEMFGain)))
        if let calibration {
            writes += [Write(.calibrationCompensation, calibration.compensation), Write(.calibrationBackEMF, calibration.backEMF)]
        }
        writes += [Write(.control1, control1), Write(.control2, control2), Write(.control3, control3), Write(.control4, Self.control4)]
        if let period = openLoopPeriodCode { writes.append(Write(.openLoopPeriod, period)) }
        if let library = drive.library { writes.append(Write(.librarySelect, library.code)) }
        writes += [Write(.rtpInput, zeroCode), Write(.mode, DRV260x.standbyMode)]
        return writes
    }

    /// OL_LRA_PERIOD for an LRA driven in open loop on a chip that has it: the resonance's period
    /// in units of 98.46 µs (1…127); nil otherwise.
    public var openLoopPeriodCode: UInt8? {
        guard drive.actuator == .lra, drive.loop == .open, drive.chip.hasOpenLoopPeriod else { return nil }
        let code = (1 / (drive.formulaResonance * DRV260xCalibration.periodUnit)).rounded()
        return UInt8(max(1, min(127, code)))
    }

    /// Wake: real-time playback, out of standby (RTP_INPUT is at zero).
    public var wake: [DRV260x.Write] { [Write(.mode, DRV260x.Mode.realTimePlayback.rawValue)] }

    /// Stop: RTP_INPUT to zero (the chip stays awake).
    public var stop: [DRV260x.Write] { [Write(.rtpInput, zeroCode)] }

    /// Sleep: RTP_INPUT to zero, then standby.
    public var sleep: [DRV260x.Write] { [Write(.rtpInput, zeroCode), Write(.mode, DRV260x.standbyMode)] }

    /// The stop guard's program, for any moment: GO cleared (a ROM sequence or a calibration
    /// running ends), then ``sleep``.
    public var halt: [DRV260x.Write] { [Write(.go, 0)] + sleep }

    /// How long a ROM sequence may play before it counts as hung, in nanoseconds: its waits, and
    /// 2 s for each effect (the longest ROM effect, the 1000 ms alert, with room for a slow bus).
    public static func sequenceTimeoutNanoseconds(_ sequence: ROMSequence) -> UInt64 {
        sequence.steps.reduce(500_000_000) { total, step in
            switch step {
            case .effect: total + 2_000_000_000
            case .wait(let tens): total + UInt64(tens) * 10_000_000
            }
        }
    }

    /// Auto-calibration's inputs, then GO (SLOS854 §8.5.6): the mode out of standby, the voltages,
    /// the feedback with the default back-EMF gain, the drive and sample times, the calibration
    /// time. The caller polls GO until it reads 0, then reads the results (``DRV260xCalibration``).
    public var calibration: [DRV260x.Write] {
        [
            Write(.mode, DRV260x.Mode.autoCalibration.rawValue), Write(.ratedVoltage, ratedCode), Write(.overdriveClamp, clampCode),
            Write(.feedbackControl, feedbackControl()), Write(.control1, control1), Write(.control2, control2), Write(.control3, control3),
            Write(.control4, Self.control4), Write(.go, 1),
        ]
    }

    /// A ROM effect sequence: internal trigger out of standby, the library, the slots (a 0 ends a
    /// sequence shorter than 8), then GO. The caller polls GO until it reads 0 (or writes 0 to
    /// cancel), then returns the chip to real-time playback or standby.
    public func romSequence(_ sequence: ROMSequence) -> [DRV260x.Write] {
        var writes = [Write(.mode, DRV260x.Mode.internalTrigger.rawValue)]
        if let library = drive.library { writes.append(Write(.librarySelect, library.code)) }
        for (index, step) in sequence.steps.enumerated() {
            writes.append(Write(address: DRV260x.Register.waveformSequence(index + 1), step.code))
        }
        if sequence.steps.count < 8 { writes.append(Write(address: DRV260x.Register.waveformSequence(sequence.steps.count + 1), 0)) }
        writes.append(Write(.go, 1))
        return writes
    }
}

/// What auto-calibration measured, stored in the device's profile and written back at each open so
/// the chip needs no new calibration.
public struct DRV260xCalibration: Sendable, Hashable {
    /// A_CAL_COMP.
    public var compensation: UInt8
    /// A_CAL_BEMF.
    public var backEMF: UInt8
    /// FEEDBACK_CONTROL's BEMF_GAIN, 0…3.
    public var backEMFGain: UInt8
    /// LRA_PERIOD read after calibrating (an LRA), in units of 98.46 µs; nil for an ERM.
    public var lraPeriod: UInt8?

    /// Results.
    public init(compensation: UInt8, backEMF: UInt8, backEMFGain: UInt8, lraPeriod: UInt8? = nil) {
        self.compensation = compensation
        self.backEMF = backEMF
        self.backEMFGain = backEMFGain & 0x03
        self.lraPeriod = lraPeriod
    }

    /// LRA_PERIOD's unit, in seconds.
    public static let periodUnit = 98.46e-6

    /// The LRA's resonance the chip measured, in Hz, if it did.
    public var resonantFrequency: Double? {
        guard let lraPeriod, lraPeriod > 0 else { return nil }
        return 1 / (Double(lraPeriod) * Self.periodUnit)
    }

    /// The keys of ``values`` (as a profile stores them).
    public enum Key {
        /// A_CAL_COMP.
        public static let compensation = "a_cal_comp"
        /// A_CAL_BEMF.
        public static let backEMF = "a_cal_bemf"
        /// BEMF_GAIN.
        public static let backEMFGain = "bemf_gain"
        /// LRA_PERIOD.
        public static let lraPeriod = "lra_period"
    }

    /// The results as named register values.
    public var values: [String: Double] {
        var values = [Key.compensation: Double(compensation), Key.backEMF: Double(backEMF), Key.backEMFGain: Double(backEMFGain)]
        if let lraPeriod { values[Key.lraPeriod] = Double(lraPeriod) }
        return values
    }

    /// Results from named values (``values``).
    /// - Throws: a message naming the key and its range when one is missing, unknown or out of range.
    public init(values: [String: Double]) throws(DRV260xCalibrationError) {
        for key in values.keys where ![Key.compensation, Key.backEMF, Key.backEMFGain, Key.lraPeriod].contains(key) {
            throw DRV260xCalibrationError("unknown key \"\(key)\": a DRV260x stores \(Key.compensation), \(Key.backEMF), \(Key.backEMFGain) and \(Key.lraPeriod)")
        }
        func byte(_ key: String, _ range: ClosedRange<Int>) throws(DRV260xCalibrationError) -> UInt8? {
            guard let value = values[key] else { return nil }
            guard value.isFinite, value == value.rounded(), range.contains(Int(value)) else {
                throw DRV260xCalibrationError("\(key) = \(value) is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return UInt8(value)
        }
        guard let compensation = try byte(Key.compensation, 0...255), let backEMF = try byte(Key.backEMF, 0...255),
            let gain = try byte(Key.backEMFGain, 0...3)
        else {
            throw DRV260xCalibrationError("\(Key.compensation), \(Key.backEMF) and \(Key.backEMFGain) are all required")
        }
        self.init(compensation: compensation, backEMF: backEMF, backEMFGain: gain, lraPeriod: try byte(Key.lraPeriod, 1...255))
    }
}

/// Stored calibration values that cannot be used, with the reason.
public struct DRV260xCalibrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
