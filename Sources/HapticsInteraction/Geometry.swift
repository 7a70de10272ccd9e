/// A point in points (the UI's unit), y growing downwards.
public struct Point: Sendable, Hashable, CustomStringConvertible {
    /// Horizontal position, points.
    public var x: Double
    /// Vertical position, points.
    public var y: Double

    /// A point.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The distance to `other`, points.
    public func distance(to other: Point) -> Double { ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot() }

    public var description: String { "(\(x), \(y))" }
}

/// A rectangle in points.
public struct Rect: Sendable, Hashable, CustomStringConvertible {
    /// Left edge, points.
    public var x: Double
    /// Top edge, points.
    public var y: Double
    /// Width, points (≥ 0).
    public var width: Double
    /// Height, points (≥ 0).
    public var height: Double

    /// A rectangle.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = max(width, 0)
        self.height = max(height, 0)
    }

    /// The right edge.
    public var maxX: Double { x + width }
    /// The bottom edge.
    public var maxY: Double { y + height }
    /// The centre.
    public var center: Point { Point(x: x + width / 2, y: y + height / 2) }

    /// The rectangle grown by `amount` points on every side.
    public func insetBy(_ amount: Double) -> Rect {
        Rect(x: x + amount, y: y + amount, width: width - 2 * amount, height: height - 2 * amount)
    }

    /// Whether `point` is inside or on the edge.
    public func contains(_ point: Point) -> Bool {
        point.x >= x && point.x <= maxX && point.y >= y && point.y <= maxY
    }

    public var description: String { "[\(x), \(y), \(width)×\(height)]" }
}
