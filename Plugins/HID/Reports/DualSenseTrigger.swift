@_exported import HapticsTriggers

/// The DualSense's (and DualSense Edge's) adaptive-trigger bytes: an ``AdaptiveTriggerEffect``'s
/// plan as the 11-byte block the pad takes, and the output report that carries the blocks.
///
/// Sources, and what they disagree on, are in `Docs/DualSenseTriggers.md`: the block's modes 0x05
/// (off), 0x21 (feedback: a 10-bit zone mask and 3-bit strengths), 0x25 (weapon), 0x26 (vibration,
/// the frequency in the ninth parameter byte) follow Nielk1's `TriggerEffectGenerator` (revision 6),
/// matched by dualsensectl and dualsense-ts; the valid-flag bits (0x04 right, 0x08 left) by SDL's
/// `testcontroller.c` and five other implementations.
extension DualSense {
    /// Valid-flag-0 bit that makes the pad apply the right trigger's block.
    public static let rightTriggerFlag: UInt8 = 0x04
    /// Valid-flag-0 bit that makes the pad apply the left trigger's block.
    public static let leftTriggerFlag: UInt8 = 0x08
    /// Where the right trigger's 11-byte block starts in the common block (the left's follows it).
    public static let rightTriggerOffset = 10

    /// Mode 0x05 and no parameters: the trigger moves freely.
    public static let triggerOffBlock: [UInt8] = [0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    /// The 11-byte block of an effect: the mode, then its 10 parameters.
    ///
    /// A zone mode (0x21 resistance, 0x26 vibration) has the zones with a step over 0 in a 10-bit
    /// mask (bytes 1–2, little-endian), each zone's step less 1 in 3 bits at bit 3 × zone of a 32-bit
    /// little-endian word (bytes 3–6), and the frequency in byte 9. A weapon (0x25) has its start
    /// and end zones' bits in bytes 1–2 and its step less 1 in byte 3.
    ///
    /// - Throws: ``AdaptiveTriggerError`` naming the parameter, its value and its range.
    public static func triggerBlock(_ effect: AdaptiveTriggerEffect) throws(AdaptiveTriggerError) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 11)
        var mask: UInt16 = 0
        switch try effect.plan() {
        case .off:
            return triggerOffBlock
        case .weapon(let start, let end, let step):
            block[0] = 0x25
            mask = UInt16(1) << start | UInt16(1) << end
            block[3] = UInt8(step - 1)
        case .zones(let steps, let vibrating, let frequency):
            block[0] = vibrating ? 0x26 : 0x21
            var packed: UInt32 = 0
            for (zone, step) in steps.enumerated() where step > 0 {
                mask |= 1 << zone
                packed |= UInt32((step - 1) & 7) << (3 * zone)
            }
            for index in 0..<4 { block[3 + index] = UInt8(truncatingIfNeeded: packed >> (8 * index)) }
            if vibrating { block[9] = UInt8(frequency) }
        }
        block[1] = UInt8(mask & 0xFF)
        block[2] = UInt8(mask >> 8)
        return block
    }

    /// Two triggers' blocks, encoded once: nil leaves that trigger as it is. What a backend checks an
    /// effect with before it claims a write, and then writes with the write's counter.
    public struct TriggerBlocks: Sendable, Hashable {
        /// R2's block, or nil.
        public let right: [UInt8]?
        /// L2's block, or nil.
        public let left: [UInt8]?

        /// The blocks of `right` and `left`.
        ///
        /// - Throws: ``AdaptiveTriggerError`` for an effect that cannot be played.
        public init(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(AdaptiveTriggerError) {
            self.right = try right.map { (effect) throws(AdaptiveTriggerError) in try triggerBlock(effect) }
            self.left = try left.map { (effect) throws(AdaptiveTriggerError) in try triggerBlock(effect) }
        }

        private init(right: [UInt8]?, left: [UInt8]?) {
            self.right = right
            self.left = left
        }

        /// Both triggers off.
        public static let released = TriggerBlocks(right: triggerOffBlock, left: triggerOffBlock)

        /// The engagement once these blocks are written over `engagement`.
        public func after(_ engagement: TriggerEngagement) -> TriggerEngagement {
            TriggerEngagement(right: right.map { $0 != triggerOffBlock } ?? engagement.right, left: left.map { $0 != triggerOffBlock } ?? engagement.left)
        }

        /// Puts the blocks into an output report's common block starting at `start`, with their
        /// valid-flag bits.
        func place(in report: inout [UInt8], at start: Int) {
            if let right {
                report[start] |= rightTriggerFlag
                report.replaceSubrange((start + rightTriggerOffset)..<(start + rightTriggerOffset + 11), with: right)
            }
            if let left {
                report[start] |= leftTriggerFlag
                report.replaceSubrange((start + rightTriggerOffset + 11)..<(start + rightTriggerOffset + 22), with: left)
            }
        }

        /// The output report that sets these blocks and changes nothing else (only their valid-flag
        /// bits are set): USB report 0x02, 48 bytes; Bluetooth 0x31, 78 bytes with counter `sequence`
        /// and its CRC.
        public func report(transport: HIDTransport, sequence: UInt8) -> [UInt8] {
            var report = audioHapticsReport(transport: transport, sequence: sequence)
            place(in: &report, at: transport == .usb ? 1 : 3)
            if transport == .bluetooth { PlayStationCRC.seal(&report) }
            return report
        }
    }

    /// `report` (an output report of this pad: a rumble or stop report) also releasing both
    /// triggers to off, its CRC sealed again on Bluetooth: what a process that set trigger effects
    /// leaves registered with the stop guard.
    public static func releasingTriggers(_ report: [UInt8], transport: HIDTransport) -> [UInt8] {
        var released = report
        TriggerBlocks.released.place(in: &released, at: transport == .usb ? 1 : 3)
        if transport == .bluetooth { PlayStationCRC.seal(&released) }
        return released
    }

    /// The output report that sets one or both triggers' effects and changes nothing else (only
    /// their valid-flag bits are set, so rumble, lights and audio are left as they are). nil leaves
    /// that trigger's effect as it is.
    ///
    /// - Parameters:
    ///   - right: R2's effect, or nil.
    ///   - left: L2's effect, or nil.
    ///   - transport: How the pad is connected (USB report 0x02, 48 bytes; Bluetooth 0x31, 78 bytes with its CRC).
    ///   - sequence: The counter (Bluetooth only).
    /// - Throws: ``AdaptiveTriggerError`` for an effect that cannot be played.
    public static func triggerReport(
        right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?, transport: HIDTransport, sequence: UInt8
    ) throws(AdaptiveTriggerError) -> [UInt8] {
        try TriggerBlocks(right: right, left: left).report(transport: transport, sequence: sequence)
    }
}
