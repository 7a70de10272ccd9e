/// Decodes a rotary encoder's two quadrature lines (A and B) into steps: the maker's knob.
///
/// Feed it every edge (a new level on A or B) in order; it returns +1 or -1 for each valid
/// quarter step and ignores bounces that do not form a valid transition. A typical mechanical
/// encoder makes four quarter steps per detent (``countsPerDetent``).
public struct QuadratureDecoder: Sendable, Hashable {
    /// Quarter steps per mechanical detent (4 for most encoders, 2 or 1 for some).
    public var countsPerDetent: Int
    /// The last levels of A and B.
    public private(set) var state: (a: Bool, b: Bool)
    /// Quarter steps counted so far (signed).
    public private(set) var count = 0

    /// A decoder whose lines start at `a` and `b`.
    public init(a: Bool, b: Bool, countsPerDetent: Int = 4) {
        state = (a, b)
        self.countsPerDetent = max(countsPerDetent, 1)
    }

    public static func == (lhs: QuadratureDecoder, rhs: QuadratureDecoder) -> Bool {
        lhs.countsPerDetent == rhs.countsPerDetent && lhs.state == rhs.state && lhs.count == rhs.count
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(countsPerDetent)
        hasher.combine(state.a)
        hasher.combine(state.b)
        hasher.combine(count)
    }

    /// The Gray-code position 0…3 of levels (a, b): 00 → 0, 01 → 1, 11 → 2, 10 → 3.
    private static func phase(_ a: Bool, _ b: Bool) -> Int {
        switch (a, b) {
        case (false, false): 0
        case (false, true): 1
        case (true, true): 2
        case (true, false): 3
        }
    }

    /// Takes new levels; returns the quarter step they make (+1, -1, or 0 for no change or an invalid jump).
    public mutating func update(a: Bool, b: Bool) -> Int {
        let delta = (Self.phase(a, b) - Self.phase(state.a, state.b) + 4) % 4
        state = (a, b)
        switch delta {
        case 1: count += 1; return 1
        case 3: count -= 1; return -1
        default: return 0
        }
    }

    /// The position in detents (fractional between them).
    public var detents: Double { Double(count) / Double(countsPerDetent) }
}
