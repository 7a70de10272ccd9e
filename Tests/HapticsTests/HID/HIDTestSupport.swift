import Foundation

/// Helpers for the HID report suites: byte vectors written as hex, and the report descriptors in
/// Tests/Fixtures/hid-descriptors with a minimal walk of their output items.
enum HIDBytes {
    /// The bytes of a whitespace-separated hex string: `"11 c0 00 01"`.
    static func hex(_ text: String) -> [UInt8] {
        text.split(whereSeparator: \.isWhitespace).map { UInt8($0, radix: 16)! }
    }

    /// `prefix`, then zeros, then `suffix`, `length` bytes in all.
    static func padded(_ prefix: String, to length: Int, suffix: String = "") -> [UInt8] {
        let head = hex(prefix)
        let tail = hex(suffix)
        precondition(head.count + tail.count <= length)
        return head + [UInt8](repeating: 0, count: length - head.count - tail.count) + tail
    }
}

/// One report descriptor fixture: its bytes and the facts its header comments declare.
struct HIDDescriptorFixture {
    /// The directory of the fixtures.
    static let directory: String = {
        var url = URL(fileURLWithPath: #filePath)  // Tests/HapticsTests/HID/HIDTestSupport.swift
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Fixtures/hid-descriptors").path
    }()

    /// The fixture's file name.
    let name: String
    /// The descriptor bytes (comment lines dropped).
    let bytes: [UInt8]
    /// The `# length: N bytes` the header declares.
    let declaredLength: Int?
    /// The `crc32(zlib): 0x…` the header declares.
    let declaredCRC32: UInt32?

    /// Loads `name` from the fixture directory.
    init(_ name: String) throws {
        self.name = name
        let text = try String(contentsOfFile: Self.directory + "/" + name, encoding: .utf8)
        var bytes: [UInt8] = []
        var length: Int?
        var crc: UInt32?
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") {
                if let range = trimmed.range(of: "length: ") {
                    length = Int(trimmed[range.upperBound...].prefix { $0.isNumber })
                }
                if let range = trimmed.range(of: "crc32(zlib): 0x") {
                    crc = UInt32(trimmed[range.upperBound...].prefix { $0.isHexDigit }, radix: 16)
                }
                continue
            }
            bytes += HIDBytes.hex(trimmed)
        }
        self.bytes = bytes
        self.declaredLength = length
        self.declaredCRC32 = crc
    }

    /// Every output report the descriptor declares: report id → length in bytes, id included.
    ///
    /// A minimal walk of the items: Report Size, Report Count and Report ID (globals, with Push/Pop),
    /// and the Output main items, whose fields add `size × count` bits to the current report.
    func outputReportLengths() -> [UInt8: Int] {
        struct Globals { var size = 0, count = 0, id: UInt8 = 0 }
        var globals = Globals()
        var stack: [Globals] = []
        var bits: [UInt8: Int] = [:]
        var index = 0
        while index < bytes.count {
            let prefix = bytes[index]
            if prefix == 0xFE {  // long item: size, tag, data
                index += 3 + Int(bytes[index + 1])
                continue
            }
            let size = prefix & 0x03 == 3 ? 4 : Int(prefix & 0x03)
            let type = (prefix >> 2) & 0x03
            let tag = prefix >> 4
            var value = 0
            for offset in 0..<size where index + 1 + offset < bytes.count {
                value |= Int(bytes[index + 1 + offset]) << (8 * offset)
            }
            switch (type, tag) {
            case (1, 0x7): globals.size = value
            case (1, 0x8): globals.id = UInt8(value)
            case (1, 0x9): globals.count = value
            case (1, 0xA): stack.append(globals)
            case (1, 0xB): globals = stack.popLast() ?? globals
            case (0, 0x9): bits[globals.id, default: 0] += globals.size * globals.count
            default: break
            }
            index += 1 + size
        }
        return bits.mapValues { (($0 + 7) / 8) + 1 }
    }

    /// Every fixture file name in the directory.
    static func allNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".rdesc.txt") }.sorted()
    }
}
