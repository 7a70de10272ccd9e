/// Texas Instruments' DRV260x haptic driver ICs on I²C (DRV2604, DRV2604L, DRV2605, DRV2605L):
/// their registers and the codes this project writes to them, as pure values.
///
/// Facts and their sources are in `Docs/I2CHaptics.md` (the DRV2605L datasheet, SLOS854, and Linux's
/// `drivers/input/misc/drv260x.c`). Nothing here touches a bus: the backend writes the plans
/// (``DRV260xPlan``) these types compute.
public enum DRV260x {
    /// The chip's fixed 7-bit I²C address (one chip per bus; several sit behind a TCA9548A multiplexer).
    public static let address: UInt8 = 0x5A

    /// The registers this project reads or writes.
    public enum Register: UInt8, Sendable, Hashable, CaseIterable {
        /// STATUS: `[7:5]` device id, bit 3 DIAG_RESULT, bit 1 OVER_TEMP, bit 0 OC_DETECT.
        case status = 0x00
        /// MODE: bit 7 DEV_RESET, bit 6 STANDBY, `[2:0]` the mode (``Mode``).
        case mode = 0x01
        /// RTP_INPUT: the amplitude in real-time playback mode.
        case rtpInput = 0x02
        /// LIBRARY_SEL: `[2:0]` the ROM library (``ROMLibrary``).
        case librarySelect = 0x03
        /// WAVESEQ1; WAVESEQ2…8 follow at 0x05…0x0B.
        case waveformSequence1 = 0x04
        /// GO: bit 0 fires the mode's process and reads 1 until it is done.
        case go = 0x0C
        /// RATED_VOLTAGE: closed-loop full scale, an auto-calibration input.
        case ratedVoltage = 0x16
        /// OD_CLAMP: the peak drive clamp, open-loop full scale.
        case overdriveClamp = 0x17
        /// A_CAL_COMP: the auto-calibration's compensation result.
        case calibrationCompensation = 0x18
        /// A_CAL_BEMF: the auto-calibration's back-EMF result.
        case calibrationBackEMF = 0x19
        /// FEEDBACK_CONTROL: bit 7 N_ERM_LRA, `[6:4]` brake factor, `[3:2]` loop gain, `[1:0]` BEMF gain.
        case feedbackControl = 0x1A
        /// CONTROL1: bit 7 STARTUP_BOOST, `[4:0]` DRIVE_TIME.
        case control1 = 0x1B
        /// CONTROL2: bit 7 BIDIR_INPUT, bit 6 BRAKE_STABILIZER, `[5:4]` SAMPLE_TIME, `[3:2]` BLANKING, `[1:0]` IDISS.
        case control2 = 0x1C
        /// CONTROL3: `[7:6]` NG_THRESH, bit 5 ERM_OPEN_LOOP, bit 3 DATA_FORMAT_RTP, bit 0 LRA_OPEN_LOOP.
        case control3 = 0x1D
        /// CONTROL4: `[5:4]` AUTO_CAL_TIME.
        case control4 = 0x1E
        /// OL_LRA_PERIOD (DRV2605L, DRV2604L): `[6:0]` the open-loop LRA drive period, in units of 98.46 µs.
        case openLoopPeriod = 0x20
        /// LRA_PERIOD (read only): the LRA's measured period while driving, in units of 98.46 µs.
        case lraPeriod = 0x22

        /// WAVESEQ`slot` (1…8).
        public static func waveformSequence(_ slot: Int) -> UInt8 {
            precondition((1...8).contains(slot), "WAVESEQ slot \(slot) is outside 1...8")
            return Register.waveformSequence1.rawValue + UInt8(slot - 1)
        }
    }

    /// MODE's `[2:0]`.
    public enum Mode: UInt8, Sendable, Hashable {
        /// Internal trigger: GO plays the waveform sequence (the ROM effects).
        case internalTrigger = 0
        /// Real-time playback: RTP_INPUT is the amplitude.
        case realTimePlayback = 5
        /// Diagnostics: GO checks the actuator.
        case diagnostics = 6
        /// Auto-calibration: GO calibrates.
        case autoCalibration = 7
    }

    /// MODE's STANDBY bit: the chip's low-power state (registers are kept).
    public static let standbyBit: UInt8 = 0x40
    /// The MODE value of standby: internal trigger with STANDBY set (what Linux writes at close).
    public static let standbyMode: UInt8 = standbyBit | Mode.internalTrigger.rawValue

    /// A DRV260x variant, told by STATUS's device id.
    public enum Chip: String, Sendable, Hashable, CaseIterable {
        /// DRV2604: RAM waveforms only, no ROM library.
        case drv2604
        /// DRV2604L: the low-voltage DRV2604.
        case drv2604l
        /// DRV2605: ROM libraries A–E and LRA.
        case drv2605
        /// DRV2605L: the low-voltage DRV2605 plus library F (the breakouts makers buy).
        case drv2605l

        /// STATUS `[7:5]` of this chip.
        public var deviceID: UInt8 {
            switch self {
            case .drv2605: 3
            case .drv2604: 4
            case .drv2604l: 6
            case .drv2605l: 7
            }
        }

        /// The chip whose STATUS reads device id `id`, if any.
        public init?(deviceID id: UInt8) {
            guard let chip = Chip.allCases.first(where: { $0.deviceID == id }) else { return nil }
            self = chip
        }

        /// Whether the chip has OL_LRA_PERIOD, so it can drive an LRA in open loop (the L variants).
        public var hasOpenLoopPeriod: Bool { self == .drv2605l || self == .drv2604l }

        /// Whether the chip holds the ROM effect library (the DRV2605 and DRV2605L).
        public var hasROMLibrary: Bool { self == .drv2605 || self == .drv2605l }

        /// The ROM libraries the chip has.
        public var libraries: [ROMLibrary] {
            switch self {
            case .drv2604, .drv2604l: []
            case .drv2605: [.a, .b, .c, .d, .e, .lra]
            case .drv2605l: ROMLibrary.allCases
            }
        }
    }

    /// LIBRARY_SEL's ROM libraries: five (six on the DRV2605L) tuned for ERMs of different rise
    /// times and voltages, one for LRAs.
    public enum ROMLibrary: String, Sendable, Hashable, CaseIterable {
        /// ERM library A (TS2200 A).
        case a
        /// ERM library B.
        case b
        /// ERM library C.
        case c
        /// ERM library D.
        case d
        /// ERM library E.
        case e
        /// The LRA library.
        case lra
        /// ERM library F (DRV2605L only).
        case f

        /// LIBRARY_SEL `[2:0]`.
        public var code: UInt8 {
            switch self {
            case .a: 1
            case .b: 2
            case .c: 3
            case .d: 4
            case .e: 5
            case .lra: 6
            case .f: 7
            }
        }
    }

    /// STATUS, decoded.
    public struct Status: Sendable, Hashable {
        /// The raw register.
        public var raw: UInt8

        /// Wraps a STATUS value.
        public init(_ raw: UInt8) { self.raw = raw }

        /// `[7:5]`: the device id (``Chip/deviceID``).
        public var deviceID: UInt8 { raw >> 5 }
        /// Bit 3: after auto-calibration, the calibration failed; after diagnostics, the actuator
        /// is absent or shorted. Valid once GO has cleared; clears when read.
        public var diagnosticFailed: Bool { raw & 0x08 != 0 }
        /// Bit 1: the chip is too hot and stopped driving (latched until read).
        public var overTemperature: Bool { raw & 0x02 != 0 }
        /// Bit 0: an over-current event (a short on the output) stopped the drive (latched until read).
        public var overCurrent: Bool { raw & 0x01 != 0 }

        /// The faults this status reports, for people; empty when none.
        public var faults: [String] {
            var faults: [String] = []
            if overTemperature { faults.append("over-temperature (OVER_TEMP): the chip stopped driving to cool down") }
            if overCurrent { faults.append("over-current (OC_DETECT): a short on the motor's wires or a motor drawing too much current") }
            return faults
        }
    }

    /// One register write.
    public struct Write: Sendable, Hashable, CustomStringConvertible {
        /// The register address.
        public var register: UInt8
        /// The byte written.
        public var value: UInt8

        /// A write of `value` to `register`.
        public init(_ register: Register, _ value: UInt8) {
            self.register = register.rawValue
            self.value = value
        }

        /// A write to a register address (the WAVESEQ slots).
        public init(address register: UInt8, _ value: UInt8) {
            self.register = register
            self.value = value
        }

        /// `0x01 <- 0x40`.
        public var description: String { "\(hex(register)) <- \(hex(value))" }
    }
}

/// `0x5a`.
public func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return "0x" + (digits.count < 2 ? "0" + digits : digits)
}
