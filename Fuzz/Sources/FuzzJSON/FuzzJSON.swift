import FuzzSupport
import HapticsSupport

/// The JSON parser: any bytes give a value or a `JSONSyntaxError` at a real position; a value
/// serialises (compact and indented) to text that parses back to it; whatever the strict parser
/// accepts the lenient one reads the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    var strict: JSONValue?
    for trailingCommas in [false, true] {
        let value: JSONValue
        do {
            value = try JSONParser(allowTrailingCommas: trailingCommas).parse(bytes)
        } catch {
            require(error.line >= 1 && error.column >= 1 && error.column <= bytes.count + 1, "syntax error at an impossible place: \(error)")
            require(strict == nil, "the lenient parser refused what the strict one read: \(error)")
            continue
        }
        if let strict { require(value == strict, "strict and lenient parsers read different values") }
        if !trailingCommas { strict = value }
        for pretty in [false, true] {
            let text = value.serialized(pretty: pretty)
            do {
                let again = try JSONParser(allowTrailingCommas: false).parse(text)
                require(again == value, "serialising changed the value: \(text)")
            } catch {
                require(false, "serialised JSON does not parse: \(error)\n\(text)")
            }
        }
    }
    return 0
}
