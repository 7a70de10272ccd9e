/// An adaptive-trigger effect of the DualSense (and DualSense Edge): what the motor behind the L2 or
/// R2 trigger does while the trigger is pulled. Named as Apple's `GCDualSenseAdaptiveTrigger` modes,
/// with positions along the travel and strengths as fractions 0…1 and frequencies in Hz.
///
/// The firmware works in 10 *zones* along the travel (0 near rest, 9 fully pulled) and 8 strength
/// steps: a position `p` is zone `(p × 9)` and a strength `s` is step `(s × 8)`, each rounded to the
/// nearest, ties to even (the community reference's C# `Math.Round`, which its captures of Apple's API
/// agree with). A strength (or amplitude) that rounds to 0 asks for nothing, so the effect is ``off``,
/// as the firmware's own effects do.
///
/// Sources, and what they disagree on, are in `Docs/DualSenseTriggers.md`: the 11-byte block's modes
/// 0x05 (off), 0x21 (feedback: a 10-bit zone mask and 3-bit strengths), 0x25 (weapon), 0x26 (vibration,
/// the frequency in the ninth parameter byte) follow Nielk1's `TriggerEffectGenerator` (revision 6),
/// matched by dualsensectl and dualsense-ts; the valid-flag bits (0x04 right, 0x08 left) by SDL's
/// `testcontroller.c` and five other implementations.
public enum DualSenseTriggerEffect: Sendable, Hashable {
    /// No effect: the trigger moves freely (mode 0x05).
    case off
    /// Resistance from `position` to the end of the travel, at `strength` (Apple's `setModeFeedback(startPosition:resistiveStrength:)`).
    case feedback(position: Double, strength: Double)
    /// Resistance per zone: 10 strengths, 0 where the trigger moves freely (`setModeFeedback(resistiveStrengths:)`).
    case multiplePositionFeedback(strengths: [Double])
    /// Resistance rising or falling linearly from `startStrength` at `startPosition` to `endStrength` at
    /// `endPosition`, held there to the end (`setModeSlopeFeedback`). Strengths must give at least step 1.
    case slopeFeedback(startPosition: Double, endPosition: Double, startStrength: Double, endStrength: Double)
    /// Resistance between `startPosition` and `endPosition` that gives way with a click, like a gun's
    /// trigger (`setModeWeapon`). The firmware takes start zones 2…7 and end zones from start + 1 to 8.
    case weapon(startPosition: Double, endPosition: Double, strength: Double)
    /// The trigger vibrates from `position` to the end at `amplitude`, `frequency` Hz (1…255) (`setModeVibration(startPosition:amplitude:frequency:)`).
    case vibration(position: Double, amplitude: Double, frequency: Double)
    /// Vibration per zone: 10 amplitudes, 0 where it is still, at `frequency` Hz (`setModeVibration(amplitudes:frequency:)`).
    case multiplePositionVibration(amplitudes: [Double], frequency: Double)

    /// Zones along the travel.
    public static let zoneCount = 10

    /// The effect's 11-byte block: the mode, then its 10 parameters.
    ///
    /// - Throws: ``DualSenseTriggerError`` naming the parameter, its value and the range it must be in.
    public func block() throws(DualSenseTriggerError) -> [UInt8] {
        switch self {
        case .off:
            return Self.offBlock
        case .feedback(let position, let strength):
            let zone = try Self.zone(position, "position")
            let step = try Self.step(strength, "strength")
            var strengths = [Int](repeating: 0, count: Self.zoneCount)
            for index in zone..<Self.zoneCount { strengths[index] = step }
            return Self.zoned(0x21, strengths)
        case .multiplePositionFeedback(let strengths):
            return Self.zoned(0x21, try Self.steps(strengths, "strengths"))
        case .slopeFeedback(let startPosition, let endPosition, let startStrength, let endStrength):
            let start = try Self.zone(startPosition, "startPosition")
            let end = try Self.zone(endPosition, "endPosition")
            guard start <= 8 else { throw .outOfRange(parameter: "startPosition", value: startPosition, expected: "0…0.944 (zones 0…8)") }
            guard end > start else {
                throw .outOfRange(parameter: "endPosition", value: endPosition, expected: "a zone after startPosition's (\(start)): over \(Self.edge(start))")
            }
            let first = try Self.step(startStrength, "startStrength"), last = try Self.step(endStrength, "endStrength")
            guard first >= 1 else { throw .outOfRange(parameter: "startStrength", value: startStrength, expected: "over 0.0625 up to 1 (steps 1…8)") }
            guard last >= 1 else { throw .outOfRange(parameter: "endStrength", value: endStrength, expected: "over 0.0625 up to 1 (steps 1…8)") }
            let slope = Double(last - first) / Double(end - start)
            var strengths = [Int](repeating: 0, count: Self.zoneCount)
            for index in start..<Self.zoneCount {
                strengths[index] = index <= end ? Int((Double(first) + slope * Double(index - start)).rounded(.toNearestOrEven)) : last
            }
            return Self.zoned(0x21, strengths)
        case .weapon(let startPosition, let endPosition, let strength):
            let start = try Self.zone(startPosition, "startPosition")
            let end = try Self.zone(endPosition, "endPosition")
            guard (2...7).contains(start) else { throw .outOfRange(parameter: "startPosition", value: startPosition, expected: "0.167…0.833 (zones 2…7)") }
            guard end > start, end <= 8 else {
                throw .outOfRange(parameter: "endPosition", value: endPosition, expected: "over \(Self.edge(start)) and under 0.944 (zones \(start + 1)…8)")
            }
            let step = try Self.step(strength, "strength")
            guard step > 0 else { return Self.offBlock }
            var block = [UInt8](repeating: 0, count: 11)
            block[0] = 0x25
            let mask = UInt16(1) << start | UInt16(1) << end
            block[1] = UInt8(mask & 0xFF)
            block[2] = UInt8(mask >> 8)
            block[3] = UInt8(step - 1)
            return block
        case .vibration(let position, let amplitude, let frequency):
            let zone = try Self.zone(position, "position")
            let step = try Self.step(amplitude, "amplitude")
            let hertz = try Self.frequency(frequency)
            var amplitudes = [Int](repeating: 0, count: Self.zoneCount)
            for index in zone..<Self.zoneCount { amplitudes[index] = step }
            return Self.zoned(0x26, amplitudes, frequency: hertz)
        case .multiplePositionVibration(let amplitudes, let frequency):
            let steps = try Self.steps(amplitudes, "amplitudes")
            return Self.zoned(0x26, steps, frequency: try Self.frequency(frequency))
        }
    }

    /// Mode 0x05 and no parameters.
    static let offBlock: [UInt8] = [0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    /// A zone mode's block: the zones with a step over 0 in a 10-bit mask (bytes 1–2, little-endian),
    /// each zone's step less 1 in 3 bits at bit 3 × zone of a 32-bit little-endian word (bytes 3–6), and
    /// the frequency in byte 9. Nothing to do (every step 0, or a frequency of 0) is ``off``.
    static func zoned(_ mode: UInt8, _ steps: [Int], frequency: UInt8? = nil) -> [UInt8] {
        var mask: UInt16 = 0
        var packed: UInt32 = 0
        for (zone, step) in steps.enumerated() where step > 0 {
            mask |= 1 << zone
            packed |= UInt32((step - 1) & 7) << (3 * zone)
        }
        guard mask != 0, frequency != 0 else { return offBlock }
        var block = [UInt8](repeating: 0, count: 11)
        block[0] = mode
        block[1] = UInt8(mask & 0xFF)
        block[2] = UInt8(mask >> 8)
        for index in 0..<4 { block[3 + index] = UInt8(truncatingIfNeeded: packed >> (8 * index)) }
        if let frequency { block[9] = frequency }
        return block
    }

    /// The zone of a position 0…1.
    static func zone(_ position: Double, _ name: String) throws(DualSenseTriggerError) -> Int {
        guard position.isFinite, (0...1).contains(position) else { throw .outOfRange(parameter: name, value: position, expected: "0…1 of the travel") }
        return Int((position * 9).rounded(.toNearestOrEven))
    }

    /// The step (0…8) of a strength or amplitude 0…1.
    static func step(_ strength: Double, _ name: String) throws(DualSenseTriggerError) -> Int {
        guard strength.isFinite, (0...1).contains(strength) else { throw .outOfRange(parameter: name, value: strength, expected: "0…1") }
        return Int((strength * 8).rounded(.toNearestOrEven))
    }

    /// The steps of 10 per-zone strengths.
    static func steps(_ values: [Double], _ name: String) throws(DualSenseTriggerError) -> [Int] {
        guard values.count == zoneCount else { throw .zoneCount(parameter: name, count: values.count) }
        var steps: [Int] = []
        for (index, value) in values.enumerated() { steps.append(try step(value, "\(name)[\(index)]")) }
        return steps
    }

    /// A frequency in whole Hz, 1…255.
    static func frequency(_ hertz: Double) throws(DualSenseTriggerError) -> UInt8 {
        guard hertz.isFinite, hertz > 0.5, hertz < 255.5 else { throw .outOfRange(parameter: "frequency", value: hertz, expected: "1…255 Hz") }
        return UInt8(hertz.rounded(.toNearestOrEven))
    }

    /// The lowest position past zone `zone`, for messages ("0.5": zone 4's upper edge is 4.5 / 9).
    static func edge(_ zone: Int) -> String {
        let value = (Double(zone) + 0.5) / 9
        return String((value * 1000).rounded() / 1000)
    }
}

/// Why a trigger effect cannot be encoded: the parameter, what it was, and what it must be.
public enum DualSenseTriggerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A value outside its range (or not a number).
    case outOfRange(parameter: String, value: Double, expected: String)
    /// A per-zone list that does not have one value per zone.
    case zoneCount(parameter: String, count: Int)

    public var description: String {
        switch self {
        case .outOfRange(let parameter, let value, let expected): "trigger effect: \(parameter) \(value) is outside \(expected)"
        case .zoneCount(let parameter, let count):
            "trigger effect: \(parameter) has \(count) values; the trigger has \(DualSenseTriggerEffect.zoneCount) zones, one value each"
        }
    }
}

extension DualSense {
    /// Valid-flag-0 bit that makes the pad apply the right trigger's block.
    public static let rightTriggerFlag: UInt8 = 0x04
    /// Valid-flag-0 bit that makes the pad apply the left trigger's block.
    public static let leftTriggerFlag: UInt8 = 0x08
    /// Where the right trigger's 11-byte block starts in the common block (the left's follows it).
    public static let rightTriggerOffset = 10

    /// The output report that sets one or both triggers' effects and changes nothing else (only
    /// their valid-flag bits are set, so rumble, lights and audio are left as they are). nil leaves
    /// that trigger's effect as it is.
    ///
    /// - Parameters:
    ///   - right: R2's effect, or nil.
    ///   - left: L2's effect, or nil.
    ///   - transport: How the pad is connected (USB report 0x02, 48 bytes; Bluetooth 0x31, 78 bytes with its CRC).
    ///   - sequence: The counter (Bluetooth only).
    /// - Throws: ``DualSenseTriggerError`` for an effect that cannot be encoded.
    public static func triggerReport(
        right: DualSenseTriggerEffect?, left: DualSenseTriggerEffect?, transport: HIDTransport, sequence: UInt8
    ) throws(DualSenseTriggerError) -> [UInt8] {
        var report = audioHapticsReport(transport: transport, sequence: sequence)
        let start = transport == .usb ? 1 : 3
        if let right {
            report[start] |= rightTriggerFlag
            report.replaceSubrange((start + rightTriggerOffset)..<(start + rightTriggerOffset + 11), with: try right.block())
        }
        if let left {
            report[start] |= leftTriggerFlag
            report.replaceSubrange((start + rightTriggerOffset + 11)..<(start + rightTriggerOffset + 22), with: try left.block())
        }
        if transport == .bluetooth { PlayStationCRC.seal(&report) }
        return report
    }
}
