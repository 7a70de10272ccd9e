/// A set of event codes as the kernel prints it in sysfs (`/sys/class/input/inputN/capabilities/ff`,
/// `…/key`, `…/ev`): hexadecimal words of the kernel's `long`, most significant first, separated by
/// spaces, leading zero words left out (`input_print_bitmap` in drivers/input/input.c):
///
/// ```
/// 107030000 0         FF_RUMBLE, FF_PERIODIC, FF_SQUARE, FF_TRIANGLE, FF_SINE, FF_GAIN on 64-bit
/// ```
///
/// The words are the kernel's `unsigned long` (64 bits on x86_64 and arm64, 32 on 32-bit ARM); this
/// process is assumed to have the kernel's word size, as a 32-bit program on a 64-bit kernel is the
/// one case where that does not hold (`wordBits` lets a caller say otherwise).
public struct InputBitmap: Sendable, Hashable, CustomStringConvertible {
    /// The codes whose bit is set, ascending.
    public let codes: [Int]

    /// A bitmap holding exactly `codes`.
    public init(codes: some Sequence<Int>) {
        self.codes = Set(codes).sorted()
    }

    /// Parses the sysfs text; nil when a word is not hexadecimal or too wide for `wordBits`.
    public init?(sysfs text: String, wordBits: Int = Int.bitWidth) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        var codes: [Int] = []
        for (index, word) in words.reversed().enumerated() {
            guard word.count <= wordBits / 4, let value = UInt64(word, radix: 16) else { return nil }
            for bit in 0..<wordBits where value & (1 << UInt64(bit)) != 0 {
                codes.append(index * wordBits + bit)
            }
        }
        self.init(codes: codes)
    }

    /// Reads an `EVIOCGBIT` answer: bit *n* is bit *n % 8* of byte *n / 8*.
    public init(bytes: [UInt8]) {
        var codes: [Int] = []
        for (index, byte) in bytes.enumerated() {
            for bit in 0..<8 where byte & (1 << bit) != 0 { codes.append(index * 8 + bit) }
        }
        self.init(codes: codes)
    }

    /// Whether `code`'s bit is set.
    public func contains(_ code: Int) -> Bool { codes.contains(code) }

    /// Whether any code in `range` is set.
    public func containsAny(in range: ClosedRange<Int>) -> Bool { codes.contains { range.contains($0) } }

    /// Whether no bit is set.
    public var isEmpty: Bool { codes.isEmpty }

    /// The codes in hexadecimal, comma-separated.
    public var description: String { codes.map { "0x" + String($0, radix: 16) }.joined(separator: ",") }
}
