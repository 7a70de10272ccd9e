import Foundation
import HIDReports
import Testing

/// Report 0x32 (the DualSense's coils over Bluetooth), byte for byte: the layout of
/// `Docs/DualSenseBluetoothHaptics.md`, the samples' conversion, the CRC, and the decoder the VM
/// tests read the wire with.
@Suite("HID: DualSense audio-haptics report 0x32")
struct HIDDualSenseAudioHapticsTests {
    @Test("142 bytes: 32 00, packet 0x11 with the counter at 10, packet 0x12's 64 samples left/right from 13, zeros, the CRC of A2 and bytes 0…137")
    func layout() {
        var frames = [Float](repeating: 0, count: 64)
        frames[0] = 1  // frame 0 left
        frames[1] = -1  // frame 0 right
        frames[2] = 0.5  // frame 1 left
        frames[63] = -0.25  // frame 31 right
        let report = frames.withUnsafeBufferPointer { DualSense.audioHapticsBluetoothReport(frames: $0, counter: 0x2A) }
        #expect(report.count == 142)
        #expect(Array(report[0..<13]) == [0x32, 0x00, 0x91, 0x07, 0xFE, 0, 0, 0, 0, 0xFF, 0x2A, 0x92, 0x40])
        #expect(report[13] == 0x7F && report[14] == 0x81 && report[15] == 64 && report[76] == UInt8(bitPattern: -32))
        #expect(report[77..<138].allSatisfy { $0 == 0 })
        #expect(PlayStationCRC.isValid(report, seed: 0xA2))
        // The CRC covers the samples: one changed byte breaks it.
        var tampered = report
        tampered[40] ^= 1
        #expect(!PlayStationCRC.isValid(tampered, seed: 0xA2) && DualSense.parseAudioHapticsBluetoothReport(tampered) == nil)
    }

    @Test("samples round-trip within one step; out-of-range values clip, NaN is silence; fewer than 32 frames end in silence")
    func samples() throws {
        let frames = (0..<64).map { Float(sin(Double($0) * 0.3)) }
        let report = frames.withUnsafeBufferPointer { DualSense.audioHapticsBluetoothReport(frames: $0, counter: 255) }
        let parsed = try #require(DualSense.parseAudioHapticsBluetoothReport(report))
        #expect(parsed.counter == 255)
        let step: Float = 0.5 / 127 + 1e-6
        for frame in 0..<32 {
            let left: Float = parsed.left[frame] - frames[2 * frame]
            let right: Float = parsed.right[frame] - frames[2 * frame + 1]
            #expect(abs(left) <= step && abs(right) <= step, "frame \(frame)")
        }
        #expect(DualSense.audioHapticsByte(7) == 0x7F && DualSense.audioHapticsByte(-7) == 0x81 && DualSense.audioHapticsByte(.nan) == 0)
        let short: [Float] = [0.5, 0.5]
        let padded = try #require(DualSense.parseAudioHapticsBluetoothReport(short.withUnsafeBufferPointer { DualSense.audioHapticsBluetoothReport(frames: $0, counter: 0) }))
        #expect(padded.left.dropFirst().allSatisfy { $0 == 0 } && padded.right.dropFirst().allSatisfy { $0 == 0 })
        #expect(DualSense.parseAudioHapticsBluetoothReport(DualSense.audioHapticsReport(transport: .bluetooth, sequence: 0)) == nil)
    }
}
