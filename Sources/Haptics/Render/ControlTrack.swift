/// One dynamic control (intensity control, sharpness control, …) over time: steps from dynamic
/// parameters and linear ramps from parameter curves. Whatever starts later overrides from its start.
struct ControlTrack: Sendable, Hashable {
    /// A straight piece from `start` (value `from`) to `end` (value `to`); `end` may be infinite (a hold).
    struct Piece: Sendable, Hashable {
        var start: Double
        var end: Double
        var from: Double
        var to: Double

        func value(at time: Double) -> Double {
            guard end.isFinite, end > start, from != to else { return from }
            let fraction = min(max((time - start) / (end - start), 0), 1)
            return from + (to - from) * fraction
        }

        var ramps: Bool { from != to }
    }

    let defaultValue: Double
    private(set) var pieces: [Piece] = []

    init(defaultValue: Double) {
        self.defaultValue = defaultValue
    }

    /// The value at `time`.
    func value(at time: Double) -> Double {
        guard let piece = piece(at: time) else { return defaultValue }
        return piece.value(at: time)
    }

    /// Whether the value is changing continuously at `time`.
    func isRamping(at time: Double) -> Bool {
        guard let piece = piece(at: time) else { return false }
        return piece.ramps && time < piece.end
    }

    /// The first breakpoint after `time`.
    func nextBreakpoint(after time: Double) -> Double? {
        for piece in pieces {
            if piece.start > time { return piece.start }
            if piece.end > time, piece.end.isFinite { return piece.end }
        }
        return nil
    }

    private func piece(at time: Double) -> Piece? {
        // Binary search for the last piece starting at or before `time`.
        var low = 0, high = pieces.count
        while low < high {
            let middle = (low + high) / 2
            if pieces[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : pieces[low - 1]
    }

    /// Holds `value` from `time` on.
    mutating func set(_ value: Double, at time: Double) {
        truncate(at: time)
        pieces.append(Piece(start: time, end: .infinity, from: value, to: value))
    }

    /// Follows `points` (absolute times, increasing) linearly from the first point on, then holds the last value.
    mutating func ramp(through points: [(time: Double, value: Double)]) {
        guard let first = points.first else { return }
        truncate(at: first.time)
        for (a, b) in zip(points, points.dropFirst()) where b.time > a.time {
            pieces.append(Piece(start: a.time, end: b.time, from: a.value, to: b.value))
        }
        let last = points.last!
        pieces.append(Piece(start: last.time, end: .infinity, from: last.value, to: last.value))
    }

    private mutating func truncate(at time: Double) {
        while let last = pieces.last, last.start >= time { pieces.removeLast() }
        if var last = pieces.popLast() {
            if last.end > time {
                last.to = last.value(at: time)
                last.end = time
            }
            pieces.append(last)
        }
    }
}
