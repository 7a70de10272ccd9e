/// SVG elements written one after another: the one place plots write SVG, so every number is
/// formatted alike (one decimal, in user units) and every text and attribute is escaped.
///
/// ``SVGChart`` draws charts on it; `HapticsInteraction`'s trace plot draws its pointer canvas on
/// it and stacks charts with ``group(translatedBy:_:)``.
public struct SVGCanvas: Sendable {
    /// The elements so far, one per line.
    public private(set) var elements = ""

    /// An empty canvas.
    public init() {}

    /// A rectangle; `rx` rounds its corners, `dash` is a `stroke-dasharray` (`"4,3"`).
    public mutating func rect(
        x: Double, y: Double, width: Double, height: Double, fill: String = "none", stroke: String? = nil, dash: String? = nil, rx: Double? = nil
    ) {
        var attributes = [("x", number(x)), ("y", number(y)), ("width", number(width)), ("height", number(height))]
        if let rx { attributes.append(("rx", number(rx))) }
        attributes.append(("fill", fill))
        if let stroke { attributes.append(("stroke", stroke)) }
        if let dash { attributes.append(("stroke-dasharray", dash)) }
        element("rect", attributes)
    }

    /// A circle of radius `r` around (`cx`, `cy`).
    public mutating func circle(cx: Double, cy: Double, r: Double, fill: String, stroke: String? = nil) {
        var attributes = [("cx", number(cx)), ("cy", number(cy)), ("r", number(r)), ("fill", fill)]
        if let stroke { attributes.append(("stroke", stroke)) }
        element("circle", attributes)
    }

    /// A line from (`x1`, `y1`) to (`x2`, `y2`).
    public mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, dash: String? = nil) {
        var attributes = [("x1", number(x1)), ("y1", number(y1)), ("x2", number(x2)), ("y2", number(y2)), ("stroke", stroke)]
        if let dash { attributes.append(("stroke-dasharray", dash)) }
        element("line", attributes)
    }

    /// An open path through `points` (non-finite ones left out); nothing for no points.
    public mutating func polyline(_ points: [(x: Double, y: Double)], stroke: String, width: Double = 1.5) {
        let finite = points.filter { $0.x.isFinite && $0.y.isFinite }
        guard !finite.isEmpty else { return }
        let list = finite.map { "\(number($0.x)),\(number($0.y))" }.joined(separator: " ")
        element("polyline", [("fill", "none"), ("stroke", stroke), ("stroke-width", number(width)), ("points", list)])
    }

    /// How a text is anchored at its `x`.
    public enum Anchor: String, Sendable {
        /// Its start (the default).
        case start
        /// Its middle.
        case middle
        /// Its end.
        case end
    }

    /// `content` at (`x`, `y`), escaped; `size` in user units (the document's default when nil),
    /// `dx` shifts it right.
    public mutating func text(
        _ content: String, x: Double, y: Double, size: Double? = nil, bold: Bool = false, anchor: Anchor = .start, fill: String? = nil,
        dx: Double? = nil
    ) {
        var attributes = [("x", number(x)), ("y", number(y))]
        if let dx { attributes.append(("dx", number(dx))) }
        if anchor != .start { attributes.append(("text-anchor", anchor.rawValue)) }
        if let fill { attributes.append(("fill", fill)) }
        if let size { attributes.append(("font-size", number(size))) }
        if bold { attributes.append(("font-weight", "bold")) }
        elements += "<text" + attributes.map { " \($0.0)=\"\(Self.escape($0.1))\"" }.joined() + ">" + Self.escape(content) + "</text>\n"
    }

    /// `other`'s elements moved down by `offset` user units.
    public mutating func group(translatedBy offset: Double, _ other: SVGCanvas) {
        elements += "<g transform=\"translate(0,\(number(offset)))\">\n" + other.elements + "</g>\n"
    }

    /// The whole document: a white page `width` × `height` user units holding the elements.
    public func document(width: Double, height: Double, fontSize: Double = 11) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(number(width))\" height=\"\(number(height))\" "
            + "viewBox=\"0 0 \(number(width)) \(number(height))\" font-family=\"sans-serif\" font-size=\"\(number(fontSize))\">\n"
            + "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + elements + "</svg>\n"
    }

    private mutating func element(_ name: String, _ attributes: [(String, String)]) {
        elements += "<\(name)" + attributes.map { " \($0.0)=\"\(Self.escape($0.1))\"" }.joined() + "/>\n"
    }

    /// A coordinate with one decimal: enough for a screen, and short.
    private func number(_ value: Double) -> String { String((value * 10).rounded() / 10) }

    /// `text` with `<`, `>`, `&` and `"` escaped, for element content and attribute values.
    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "&": result += "&amp;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
