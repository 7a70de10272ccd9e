import Foundation

/// The three kinds of HID reports.
public enum HIDReportKind: Sendable, Hashable, CaseIterable {
    /// Device to host (UHID_INPUT2).
    case input
    /// Host to device (what `hid_write` sends; arrives as UHID_OUTPUT).
    case output
    /// Both ways through GET_REPORT / SET_REPORT.
    case feature
}

/// A HID report descriptor, with the report sizes it declares.
public struct HIDReportDescriptor: Sendable, Equatable {
    /// The descriptor bytes.
    public var bytes: [UInt8]

    /// Wraps descriptor `bytes`.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses the fixture text format of `Tests/Fixtures/hid-descriptors/*.rdesc.txt`:
    /// whitespace-separated hex bytes; lines starting with `#` are comments. A comment of the form
    /// `# length: N bytes; crc32(zlib): 0xXXXXXXXX; …` is checked against the bytes.
    ///
    /// - Parameter path: used in error messages only.
    /// - Throws: ``RigError/invalidDescriptor(path:reason:)`` on a bad token, or when the length or
    ///   the crc32 stated in a comment does not match.
    public init(fixtureText text: String, path: String = "<text>") throws {
        var bytes: [UInt8] = []
        var statedLength: Int?
        var statedCRC: UInt32?
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") {
                if let match = line.firstMatch(of: /length:\s*(\d+)\s*bytes/) { statedLength = Int(match.1) }
                if let match = line.firstMatch(of: /crc32\(zlib\):\s*0x([0-9a-fA-F]{1,8})/) {
                    statedCRC = UInt32(match.1, radix: 16)
                }
                continue
            }
            for token in line.split(whereSeparator: \.isWhitespace) {
                guard token.count <= 2, let byte = UInt8(token, radix: 16) else {
                    throw RigError.invalidDescriptor(
                        path: path, reason: "line \(number + 1): \(String(token).debugDescription) is not a hex byte")
                }
                bytes.append(byte)
            }
        }
        guard !bytes.isEmpty else { throw RigError.invalidDescriptor(path: path, reason: "no bytes") }
        if let statedLength, statedLength != bytes.count {
            throw RigError.invalidDescriptor(
                path: path, reason: "the comment says \(statedLength) bytes but there are \(bytes.count)")
        }
        if let statedCRC {
            let actual = RigCRC32.checksum(bytes)
            guard actual == statedCRC else {
                throw RigError.invalidDescriptor(
                    path: path,
                    reason: "crc32 is 0x\(String(actual, radix: 16)) but the comment says 0x\(String(statedCRC, radix: 16))")
            }
        }
        self.bytes = bytes
    }

    /// Loads fixture `name` from `Tests/Fixtures/hid-descriptors/` (the `.rdesc.txt` suffix is optional).
    public static func fixture(_ name: String) throws -> HIDReportDescriptor {
        let file = name.hasSuffix(".rdesc.txt") ? name : name + ".rdesc.txt"
        let path = VMRig.descriptorFixtures + "/" + file
        return try HIDReportDescriptor(fixtureText: try SysFS.read(path), path: path)
    }

    /// Every report the descriptor declares: kind and report id (0 when the descriptor uses no
    /// report ids) to the report's length in bytes **including** the report-id byte when ids are
    /// used — i.e. the size `hid_write` / HIDIOCGFEATURE and the kernel drivers use.
    public var reportLengths: [HIDReportID: Int] {
        var bits: [HIDReportID: Int] = [:]
        var usesIDs = false
        struct Globals { var size = 0, count = 0, id: UInt8 = 0 }
        var globals = Globals()
        var stack: [Globals] = []
        var i = 0
        while i < bytes.count {
            let prefix = bytes[i]
            if prefix == 0xFE {  // long item: 0xFE, size, tag, data
                guard i + 1 < bytes.count else { break }
                i += 3 + Int(bytes[i + 1])
                continue
            }
            let size = [0, 1, 2, 4][Int(prefix & 0x03)]
            var value: UInt32 = 0
            for k in 0..<size where i + 1 + k < bytes.count {
                value |= UInt32(bytes[i + 1 + k]) << (8 * k)
            }
            let kindAndTag = prefix & 0xFC
            switch kindAndTag {
            case 0x74: globals.size = Int(value)  // Report Size
            case 0x94: globals.count = Int(value)  // Report Count
            case 0x84: globals.id = UInt8(truncatingIfNeeded: value); usesIDs = true  // Report ID
            case 0xA4: stack.append(globals)  // Push
            case 0xB4: if let top = stack.popLast() { globals = top }  // Pop
            case 0x80, 0x90, 0xB0:  // Input, Output, Feature
                let kind: HIDReportKind = kindAndTag == 0x80 ? .input : kindAndTag == 0x90 ? .output : .feature
                bits[HIDReportID(kind: kind, id: globals.id), default: 0] += globals.size * globals.count
            default: break
            }
            i += 1 + size
        }
        return bits.mapValues { ($0 + 7) / 8 + (usesIDs ? 1 : 0) }
    }

    /// The length in bytes of report `id` of `kind` (report-id byte included when ids are used),
    /// or `nil` if the descriptor does not declare it.
    public func reportLength(_ kind: HIDReportKind, id: UInt8) -> Int? {
        reportLengths[HIDReportID(kind: kind, id: id)]
    }

    /// The report ids of `kind` the descriptor declares, ascending.
    public func reportIDs(_ kind: HIDReportKind) -> [UInt8] {
        reportLengths.keys.filter { $0.kind == kind }.map(\.id).sorted()
    }
}

/// A report's kind and id, the key of ``HIDReportDescriptor/reportLengths``.
public struct HIDReportID: Sendable, Hashable, CustomStringConvertible {
    /// Input, output or feature.
    public var kind: HIDReportKind
    /// The report id (0 when the descriptor uses none).
    public var id: UInt8
    /// Creates a key.
    public init(kind: HIDReportKind, id: UInt8) {
        self.kind = kind
        self.id = id
    }
    /// E.g. `feature 0x5`.
    public var description: String { "\(kind) 0x\(String(id, radix: 16))" }
}

/// zlib's CRC-32 (the one PlayStation Bluetooth reports and the fixture comments use).
public enum RigCRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The CRC-32 of `bytes`, continuing from `crc` (pass the previous result to chain).
    public static func checksum<C: Collection>(_ bytes: C, continuing crc: UInt32 = 0) -> UInt32
    where C.Element == UInt8 {
        var c = ~crc
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return ~c
    }
}
