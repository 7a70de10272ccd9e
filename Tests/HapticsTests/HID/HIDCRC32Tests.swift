import HIDReports
import Testing

@Suite("HID: CRC-32 and the PlayStation Bluetooth trailer")
struct HIDCRC32Tests {
    @Test("the standard check value: CRC-32 of \"123456789\" is 0xCBF43926")
    func checkValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
    }

    @Test("continuing a checksum equals the checksum of the concatenation, as zlib's crc32 chains")
    func chaining() {
        let a: [UInt8] = [0xA2, 0x31, 0x10]
        let b: [UInt8] = Array(0...200).map { UInt8($0) }
        #expect(CRC32.checksum(b, continuing: CRC32.checksum(a)) == CRC32.checksum(a + b))
    }

    @Test("every descriptor fixture's bytes match the length and zlib CRC-32 its header declares")
    func fixtureChecksums() throws {
        let names = try HIDDescriptorFixture.allNames()
        #expect(names.count == 11)
        for name in names {
            let fixture = try HIDDescriptorFixture(name)
            #expect(fixture.bytes.count == fixture.declaredLength, "\(name)")
            #expect(CRC32.checksum(fixture.bytes) == fixture.declaredCRC32, "\(name)")
        }
    }

    @Test("the DualSense Bluetooth vector of the facts file: CRC bytes 61 87 45 58")
    func dualSenseFactsVector() {
        let report = HIDBytes.padded("31 10 10 03 00 40 80", to: 78, suffix: "61 87 45 58")
        #expect(PlayStationCRC.checksum(of: report, seed: PlayStationCRC.outputSeed) == 0x5845_8761)
        #expect(PlayStationCRC.isValid(report, seed: 0xA2))
        var resealed = report
        resealed.replaceSubrange(74..<78, with: [0, 0, 0, 0])
        PlayStationCRC.seal(&resealed)
        #expect(resealed == report)
    }

    @Test("the DualShock 4 Bluetooth vector of the facts file: CRC bytes 34 d9 31 0a")
    func dualShock4FactsVector() {
        let report = HIDBytes.padded("11 c0 00 01 00 00 40 80", to: 78, suffix: "34 d9 31 0a")
        #expect(PlayStationCRC.isValid(report, seed: PlayStationCRC.outputSeed))
        var zeroed = report
        zeroed.replaceSubrange(74..<78, with: [0, 0, 0, 0])
        PlayStationCRC.seal(&zeroed, seed: PlayStationCRC.outputSeed)
        #expect(zeroed == report)
    }

    @Test("a changed byte, a wrong seed or a short report fails the check")
    func detectsCorruption() {
        let report = HIDBytes.padded("11 c0 00 01 00 00 40 80", to: 78, suffix: "34 d9 31 0a")
        var flipped = report
        flipped[7] ^= 0x01
        #expect(!PlayStationCRC.isValid(flipped, seed: PlayStationCRC.outputSeed))
        #expect(!PlayStationCRC.isValid(report, seed: PlayStationCRC.inputSeed))
        #expect(!PlayStationCRC.isValid(report, seed: PlayStationCRC.featureSeed))
        #expect(!PlayStationCRC.isValid([0x11, 0x00, 0x00], seed: PlayStationCRC.outputSeed))
    }
}
