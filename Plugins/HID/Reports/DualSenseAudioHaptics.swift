/// The DualSense's voice coils over Bluetooth: output report 0x32, which carries 32 frames of the
/// two coils' signal (3,000 frames a second) inside HID, one report every 32 / 3000 s (10.67 ms).
///
/// Sources (`Docs/DualSenseBluetoothHaptics.md` names them and what they leave open): SAxense
/// (`SAxense.c`) and Gamepad-Core (`DualSenseLibrary.cpp`, `GamepadOutput.cpp`), which agree; the
/// length is the Bluetooth report descriptor's (141 data bytes).
///
/// ## Layout (142 bytes)
///
/// | bytes | content |
/// |---|---|
/// | 0 | 0x32 |
/// | 1 | 0 (both sources leave it 0; see ``audioHapticsSequenceByte``) |
/// | 2–10 | packet 0x11: `91 07`, then `FE 00 00 00 00 FF` and the running counter |
/// | 11–76 | packet 0x12: `92 40`, then 64 bytes: 32 frames of signed 8-bit samples, left then right |
/// | 77–137 | zero |
/// | 138–141 | CRC-32 of `A2` and bytes 0–137, little-endian (as every DualSense Bluetooth output report) |
extension DualSense {
    /// The report id.
    public static let audioHapticsBluetoothReportID: UInt8 = 0x32
    /// The report's length with its id: the descriptor's 141 data bytes and the id.
    public static let audioHapticsBluetoothReportLength = 142
    /// Frames per second of the coils' signal inside the reports.
    public static let audioHapticsBluetoothRate = 3_000
    /// Frames per report (64 bytes of stereo signed 8-bit samples).
    public static let audioHapticsBluetoothFrames = 32
    /// Byte 1, the report's own sequence byte: 0, as both sources send it; the count that moves is
    /// packet 0x11's (`Docs/DualSenseBluetoothHaptics.md` says why).
    public static let audioHapticsSequenceByte: UInt8 = 0
    /// Where packet 0x11's running counter is.
    static let audioHapticsCounterOffset = 10
    /// Where packet 0x12's samples start.
    static let audioHapticsSamplesOffset = 13

    /// A sample −1…1 of the coil's full scale as the report's signed byte: × 127, rounded, clipped
    /// (a value outside −1…1, or not a number, is clipped or silent).
    public static func audioHapticsByte(_ sample: Float) -> UInt8 {
        guard sample.isFinite else { return 0 }
        let scaled = (max(-1, min(1, sample)) * 127).rounded()
        return UInt8(bitPattern: Int8(scaled))
    }

    /// The report that plays `frames` (interleaved left, right; 32 frames, fewer are followed by
    /// silence, more are ignored) with packet counter `counter`.
    ///
    /// - Parameters:
    ///   - frames: Samples −1…1, two per frame.
    ///   - counter: Packet 0x11's running counter (each report the next, wrapping at 255).
    public static func audioHapticsBluetoothReport(frames: UnsafeBufferPointer<Float>, counter: UInt8) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: audioHapticsBluetoothReportLength)
        report[0] = audioHapticsBluetoothReportID
        report[1] = audioHapticsSequenceByte
        report.replaceSubrange(2..<10, with: [0x91, 0x07, 0xFE, 0, 0, 0, 0, 0xFF])
        report[audioHapticsCounterOffset] = counter
        report[11] = 0x92
        report[12] = 0x40
        for index in 0..<min(frames.count, 2 * audioHapticsBluetoothFrames) {
            report[audioHapticsSamplesOffset + index] = audioHapticsByte(frames[index])
        }
        PlayStationCRC.seal(&report)
        return report
    }

    /// A 0x32 report read back: its counter and its 32 frames (left, right) as −1…1 (byte / 127);
    /// nil for another report, a wrong length or packet layout, or a bad CRC.
    public static func parseAudioHapticsBluetoothReport(_ report: [UInt8]) -> (counter: UInt8, left: [Float], right: [Float])? {
        guard report.count == audioHapticsBluetoothReportLength, report[0] == audioHapticsBluetoothReportID,
            Array(report[2..<10]) == [0x91, 0x07, 0xFE, 0, 0, 0, 0, 0xFF], report[11] == 0x92, report[12] == 0x40,
            PlayStationCRC.isValid(report, seed: PlayStationCRC.outputSeed)
        else { return nil }
        var left: [Float] = [], right: [Float] = []
        for frame in 0..<audioHapticsBluetoothFrames {
            left.append(Float(Int8(bitPattern: report[audioHapticsSamplesOffset + 2 * frame])) / 127)
            right.append(Float(Int8(bitPattern: report[audioHapticsSamplesOffset + 2 * frame + 1])) / 127)
        }
        return (report[audioHapticsCounterOffset], left, right)
    }
}
