/// The CRC-32 of zlib, Ethernet and PNG (reflected polynomial 0xEDB88320, initial and final XOR
/// 0xFFFFFFFF), table-driven, one table lookup per byte.
public enum CRC32 {
    /// The 256-entry lookup table, built once from the polynomial.
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    /// The CRC-32 of `bytes`, continuing from `crc` exactly like zlib's `crc32(crc, buf, len)`:
    /// `checksum(b, continuing: checksum(a))` equals `checksum(a + b)`.
    ///
    /// - Parameters:
    ///   - bytes: The data.
    ///   - crc: A previous result to continue from; 0 to start.
    public static func checksum<Bytes: Sequence>(_ bytes: Bytes, continuing crc: UInt32 = 0) -> UInt32
    where Bytes.Element == UInt8 {
        table.withUnsafeBufferPointer { table in
            var value = ~crc
            for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
            return ~value
        }
    }
}

/// The CRC trailer of Sony's DualShock 4 and DualSense Bluetooth reports.
///
/// The CRC is the zlib CRC-32 of one seed byte (the Bluetooth HID transaction header the report
/// travels behind) followed by the report without its last 4 bytes, stored little-endian in those 4
/// bytes. Source: hid-playstation.c, `PS_*_CRC32_SEED` and `ps_check_crc32` (`crc32_le` of the seed,
/// then of the data, inverted), and `dualsense_send_output_report`.
public enum PlayStationCRC {
    /// The seed of input reports (0xA1: DATA | INPUT).
    public static let inputSeed: UInt8 = 0xA1
    /// The seed of output reports (0xA2: DATA | OUTPUT).
    public static let outputSeed: UInt8 = 0xA2
    /// The seed of feature reports (0xA3: DATA | FEATURE).
    public static let featureSeed: UInt8 = 0xA3

    /// The CRC of `report` minus its 4-byte trailer, for `seed`.
    ///
    /// - Parameters:
    ///   - report: A whole report, report id first and trailer last (at least 4 bytes).
    ///   - seed: The seed byte for the report's kind.
    public static func checksum(of report: [UInt8], seed: UInt8) -> UInt32 {
        precondition(report.count >= 4, "a report with a CRC trailer holds at least 4 bytes")
        return CRC32.checksum(report[..<(report.count - 4)], continuing: CRC32.checksum(CollectionOfOne(seed)))
    }

    /// Writes the CRC trailer into the last 4 bytes of `report`, little-endian.
    ///
    /// - Parameters:
    ///   - report: A whole report, report id first; its last 4 bytes are overwritten.
    ///   - seed: The seed byte; output reports use `outputSeed`.
    public static func seal(_ report: inout [UInt8], seed: UInt8 = outputSeed) {
        let crc = checksum(of: report, seed: seed)
        let end = report.count
        for offset in 0..<4 { report[end - 4 + offset] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(offset))) }
    }

    /// Whether the last 4 bytes of `report` hold its CRC for `seed`.
    ///
    /// - Parameters:
    ///   - report: A whole report, report id first and trailer last.
    ///   - seed: The seed byte for the report's kind.
    public static func isValid(_ report: [UInt8], seed: UInt8) -> Bool {
        guard report.count >= 4 else { return false }
        let end = report.count
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(report[end - 4 + $1]) << (8 * UInt32($1)) }
        return stored == checksum(of: report, seed: seed)
    }
}
