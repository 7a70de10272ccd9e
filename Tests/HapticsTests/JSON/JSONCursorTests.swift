import HapticsSupport
import Testing

@Suite("JSON cursor: numbers to integers")
struct JSONCursorTests {
    func integer(_ text: String, in range: ClosedRange<Int>) throws(JSONPathError) -> Int {
        let root: JSONValue
        do { root = try JSONParser().parse(text) } catch {
            Issue.record("not JSON: \(error)")
            return -1
        }
        return try JSONCursor(root: root).integer(in: range)
    }

    @Test("a whole number at the edge of Int's range is an error naming the value, never a trapping conversion")
    func edges() throws {
        // JSON numbers are Doubles: 2^63 - 1 reads as 2^63, which no Int holds.
        #expect(throws: JSONPathError.self) { try integer("9223372036854775807", in: 0...Int.max) }
        #expect(try integer("9223372036854774784", in: 0...Int.max) == 9_223_372_036_854_774_784, "the largest Double below 2^63")
        let error = try #require(throws: JSONPathError.self) { try integer("9223372036854775808", in: 0...Int.max) }
        #expect(error.description == "$: expected a whole number in 0...\(Int.max), found 9.223372036854776e+18")
        #expect(throws: JSONPathError.self) { try integer("-9223372036854777856", in: Int.min...0) }
        #expect(try integer("-9223372036854775808", in: Int.min...0) == Int.min)
        #expect(try integer("1e3", in: 0...1000) == 1000)
        #expect(try integer("-0", in: 0...1) == 0)
        #expect(throws: JSONPathError.self) { try integer("1e300", in: 0...Int.max) }
        #expect(throws: JSONPathError.self) { try integer("0.5", in: 0...1) }
        #expect(throws: JSONPathError.self) { try integer("2", in: 0...1) }
    }
}
