import CHapticsABI
import HIDReports
import Testing

/// The adaptive-trigger encoders, pinned to the bytes the community reference's formulas give
/// (Docs/DualSenseTriggers.md): positions at zone z are z / 9, strengths at step s are s / 8.
@Suite("HID: DualSense adaptive-trigger effects, byte for byte")
struct HIDDualSenseTriggerTests {
    static func zone(_ zone: Int) -> Double { Double(zone) / 9 }
    static func step(_ step: Int) -> Double { Double(step) / 8 }

    @Test(
        "each effect's 11-byte block",
        arguments: [
            (AdaptiveTriggerEffect.off, "05 00 00 00 00 00 00 00 00 00 00"),
            (.feedback(position: zone(0), strength: step(8)), "21 FF 03 FF FF FF 3F 00 00 00 00"),
            (.feedback(position: zone(3), strength: step(5)), "21 F8 03 00 48 92 24 00 00 00 00"),
            (.feedback(position: zone(9), strength: step(1)), "21 00 02 00 00 00 00 00 00 00 00"),
            (.feedback(position: zone(2), strength: 0), "05 00 00 00 00 00 00 00 00 00 00"),
            (.multiplePositionFeedback(strengths: (0..<10).map { step([0, 1, 2, 3, 4, 5, 6, 7, 8, 0][$0]) }), "21 FE 01 40 34 D6 07 00 00 00 00"),
            (.multiplePositionFeedback(strengths: [Double](repeating: 0, count: 10)), "05 00 00 00 00 00 00 00 00 00 00"),
            (.slopeFeedback(startPosition: zone(0), endPosition: zone(9), startStrength: step(1), endStrength: step(8)), "21 FF 03 88 34 B6 3E 00 00 00 00"),
            (.slopeFeedback(startPosition: zone(2), endPosition: zone(6), startStrength: step(2), endStrength: step(6)), "21 FC 03 40 34 B6 2D 00 00 00 00"),
            (.slopeFeedback(startPosition: zone(1), endPosition: zone(4), startStrength: step(8), endStrength: step(1)), "21 FE 03 78 05 00 00 00 00 00 00"),
            (.weapon(startPosition: zone(2), endPosition: zone(8), strength: step(8)), "25 04 01 07 00 00 00 00 00 00 00"),
            (.weapon(startPosition: zone(4), endPosition: zone(6), strength: step(5)), "25 50 00 04 00 00 00 00 00 00 00"),
            (.weapon(startPosition: zone(4), endPosition: zone(6), strength: 0), "05 00 00 00 00 00 00 00 00 00 00"),
            (.vibration(position: zone(0), amplitude: step(8), frequency: 40), "26 FF 03 FF FF FF 3F 00 00 28 00"),
            (.vibration(position: zone(5), amplitude: step(4), frequency: 200), "26 E0 03 00 80 6D 1B 00 00 C8 00"),
            (.multiplePositionVibration(amplitudes: (0..<10).map { $0.isMultiple(of: 2) ? 1 : 0 }, frequency: 30), "26 55 01 C7 71 1C 07 00 00 1E 00"),
        ])
    func blocks(_ effect: AdaptiveTriggerEffect, _ expected: String) throws {
        #expect(try DualSense.triggerBlock(effect) == HIDBytes.hex(expected), "\(effect)")
    }

    @Test("a slope's tie rounds to even, as the reference's C# Math.Round does: zone 1 of (0…2, 2…3) is step 2, not 3")
    func slopeTie() throws {
        let block = try DualSense.triggerBlock(
            .slopeFeedback(startPosition: 0, endPosition: Self.zone(2), startStrength: Self.step(2), endStrength: Self.step(3)))
        // Steps [2, 2, 3, 3 …]: stored less 1 → 1, 1, 2, 2 … in 3-bit slots.
        let packed = UInt32(block[3]) | UInt32(block[4]) << 8 | UInt32(block[5]) << 16 | UInt32(block[6]) << 24
        #expect((packed >> 3) & 7 == 1, "zone 1 stored \((packed >> 3) & 7)")
        #expect((packed >> 6) & 7 == 2)
    }

    @Test("reports: R2 feedback and L2 weapon on USB (48 bytes, flags 0C) and Bluetooth (78 bytes, its CRC); nil leaves a trigger alone")
    func reports() throws {
        let right = AdaptiveTriggerEffect.feedback(position: Self.zone(3), strength: Self.step(5))
        let left = AdaptiveTriggerEffect.weapon(startPosition: Self.zone(2), endPosition: Self.zone(8), strength: Self.step(8))
        #expect(
            try DualSense.triggerReport(right: right, left: left, transport: .usb, sequence: 0)
                == HIDBytes.padded("02 0C 00 00 00 00 00 00 00 00 00 21 F8 03 00 48 92 24 00 00 00 00 25 04 01 07", to: 48))
        // The CRC computed independently (zlib's crc32 over A2 and bytes 0…73).
        #expect(
            try DualSense.triggerReport(right: right, left: left, transport: .bluetooth, sequence: 0)
                == HIDBytes.padded("31 00 10 0C 00 00 00 00 00 00 00 00 00 21 F8 03 00 48 92 24 00 00 00 00 25 04 01 07", to: 78, suffix: "82 83 9F F2"))
        let onlyLeft = try DualSense.triggerReport(right: nil, left: .off, transport: .usb, sequence: 0)
        #expect(onlyLeft[1] == DualSense.leftTriggerFlag && onlyLeft[11..<22].allSatisfy { $0 == 0 } && onlyLeft[22] == 0x05)
        // Rumble, lights and audio untouched: no other flag, nothing else set.
        #expect(onlyLeft[2...].enumerated().allSatisfy { $0.offset + 2 == 22 || $0.element == 0 })
    }

    @Test(
        "bad parameters are typed errors naming the parameter, its value and its range",
        arguments: [
            (AdaptiveTriggerEffect.feedback(position: 1.2, strength: 1), AdaptiveTriggerError.outOfRange(parameter: "position", value: 1.2, expected: "0…1 of the travel")),
            (.feedback(position: 0, strength: .nan), .outOfRange(parameter: "strength", value: .nan, expected: "0…1")),
            (.weapon(startPosition: 0.1, endPosition: 0.5, strength: 1), .outOfRange(parameter: "startPosition", value: 0.1, expected: "0.167…0.833 (zones 2…7)")),
            (.weapon(startPosition: 0.5, endPosition: 0.5, strength: 1), .outOfRange(parameter: "endPosition", value: 0.5, expected: "over 0.5 and under 0.944 (zones 5…8)")),
            (.weapon(startPosition: 0.5, endPosition: 1, strength: 1), .outOfRange(parameter: "endPosition", value: 1, expected: "over 0.5 and under 0.944 (zones 5…8)")),
            (.vibration(position: 0, amplitude: 1, frequency: 0), .outOfRange(parameter: "frequency", value: 0, expected: "1…255 Hz")),
            (.vibration(position: 0, amplitude: 1, frequency: 300), .outOfRange(parameter: "frequency", value: 300, expected: "1…255 Hz")),
            (.multiplePositionFeedback(strengths: [1, 1]), .zoneCount(parameter: "strengths", count: 2)),
            (.multiplePositionVibration(amplitudes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 2], frequency: 10), .outOfRange(parameter: "amplitudes[9]", value: 2, expected: "0…1")),
            (.slopeFeedback(startPosition: 0.5, endPosition: 0.4, startStrength: 1, endStrength: 1), .outOfRange(parameter: "endPosition", value: 0.4, expected: "a zone after startPosition's (4): over 0.5")),
            (.slopeFeedback(startPosition: 0, endPosition: 1, startStrength: 0, endStrength: 1), .outOfRange(parameter: "startStrength", value: 0, expected: "over 0.0625 up to 1 (steps 1…8)")),
        ])
    func badParameters(_ effect: AdaptiveTriggerEffect, _ error: AdaptiveTriggerError) {
        do {
            _ = try DualSense.triggerBlock(effect)
            Issue.record("\(effect) encoded")
        } catch let thrown {
            // NaN is not equal to itself: compare the messages.
            #expect(thrown.description == error.description)
        }
        #expect(throws: AdaptiveTriggerError.self) { try DualSense.triggerReport(right: effect, left: nil, transport: .bluetooth, sequence: 1) }
    }

    @Test("every effect crosses the plugin contract (haptics_trigger_effect_v1) and comes back the same; an unknown mode is a typed error")
    func contract() throws {
        let effects: [AdaptiveTriggerEffect] = [
            .off, .feedback(position: 0.25, strength: 0.5), .multiplePositionFeedback(strengths: (0..<10).map { Double($0) / 16 }),
            .slopeFeedback(startPosition: 0.125, endPosition: 0.75, startStrength: 0.25, endStrength: 1),
            .weapon(startPosition: 0.25, endPosition: 0.625, strength: 0.875), .vibration(position: 0.5, amplitude: 0.375, frequency: 40),
            .multiplePositionVibration(amplitudes: (0..<10).map { $0.isMultiple(of: 2) ? 0.5 : 0 }, frequency: 200),
        ]
        for effect in effects {
            // Values that floats hold exactly come back exactly.
            #expect(try AdaptiveTriggerEffect(effect.cValue) == effect)
        }
        var raw = haptics_trigger_effect_v1()
        raw.mode = 7
        #expect(throws: AdaptiveTriggerError.unknownMode(7)) { try AdaptiveTriggerEffect(raw) }
    }

    @Test("the stop guard's report of a session holding the triggers: the rumble stop report with both triggers released, its CRC sealed again")
    func releasing() throws {
        let stop = DualSense.stopReport(transport: .bluetooth, sequence: 3, mode: .compatible)
        let released = DualSense.releasingTriggers(stop, transport: .bluetooth)
        #expect(released[3] == 0x03 | 0x0C && released[13] == 0x05 && released[24] == 0x05)
        #expect(PlayStationCRC.isValid(released, seed: PlayStationCRC.outputSeed))
        var expected = stop
        expected[3] = 0x0F
        expected[13] = 0x05
        expected[24] = 0x05
        #expect(Array(released[..<74]) == Array(expected[..<74]))
        let usb = DualSense.releasingTriggers(DualSense.stopReport(transport: .usb, sequence: 0, mode: .compatibleV2), transport: .usb)
        #expect(usb[1] == 0x02 | 0x0C && usb[11] == 0x05 && usb[22] == 0x05 && usb[39] == 0x04)
    }
}
