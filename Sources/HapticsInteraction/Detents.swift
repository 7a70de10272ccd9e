import HapticsSupport

/// A knob's or slider's detents as data, after SmartKnob: the range, where the detents are, how
/// strongly they click, how firmly the ends stop, and the snap point.
///
/// Positions are in the input's own unit (degrees of a knob, points of a slider, encoder counts).
public struct DetentConfiguration: Sendable, Hashable {
    /// Where the detents sit.
    public enum Spacing: Sendable, Hashable {
        /// Every `width` units from the range's lower end.
        case uniform(width: Double)
        /// At these positions (sorted when the configuration is made).
        case positions([Double])
    }

    /// The travel, in position units; beyond it is the end stop.
    public var range: ClosedRange<Double>
    /// Where the detents sit.
    public var spacing: Spacing
    /// Intensity of a detent's selection tick, 0 … 1.
    public var detentStrength: Double
    /// Intensity of the end stop's impact, 0 … 1.
    public var endStopStrength: Double
    /// How far toward the neighbouring detent (0.5 … 1 of the gap) the position must move before it
    /// snaps there. Above 0.5 the value has hysteresis, so noise at a boundary never double-fires.
    public var snapPoint: Double

    /// The detent positions, ascending.
    public let detents: [Double]

    /// The most detents a configuration may have.
    public static let maximumDetents = 10_000

    /// A configuration. Throws for an empty range, a width ≤ 0, no positions, more than
    /// ``maximumDetents`` detents, or a snap point outside 0.5 … 1.
    public init(
        range: ClosedRange<Double>, spacing: Spacing, detentStrength: Double = 0.6, endStopStrength: Double = 1,
        snapPoint: Double = 0.55
    ) throws(InteractionError) {
        guard range.lowerBound.isFinite, range.upperBound.isFinite, range.upperBound > range.lowerBound else {
            throw .invalid("range \(range.lowerBound)...\(range.upperBound) must be finite and not empty")
        }
        guard (0.5...1).contains(snapPoint) else { throw .invalid("snap point \(snapPoint) is outside 0.5...1") }
        guard (0...1).contains(detentStrength), (0...1).contains(endStopStrength) else {
            throw .invalid("strengths must be in 0...1 (detent \(detentStrength), end stop \(endStopStrength))")
        }
        switch spacing {
        case .uniform(let width):
            guard width > 0, width.isFinite else { throw .invalid("detent width \(width) must be > 0") }
            // Counted in Double first: a span that overflows or a tiny width must be an error, not a trap.
            let gaps = ((range.upperBound - range.lowerBound) / width + 1e-9).rounded(.down)
            guard gaps < Double(Self.maximumDetents) else {
                let span = "\(JSONValue.format(range.lowerBound))...\(JSONValue.format(range.upperBound))"
                let count = gaps.isFinite ? JSONValue.format(gaps + 1) : "too many"
                throw .invalid("range \(span) with detent width \(JSONValue.format(width)) makes \(count) detents; at most \(Self.maximumDetents)")
            }
            detents = (0...Int(gaps)).map { range.lowerBound + Double($0) * width }
        case .positions(let positions):
            let inside = positions.filter { range.contains($0) }.sorted()
            guard !inside.isEmpty else { throw .invalid("no detent position lies inside the range") }
            guard inside.count <= Self.maximumDetents else {
                throw .invalid("\(inside.count) detent positions lie inside the range; at most \(Self.maximumDetents)")
            }
            detents = inside
        }
        self.range = range
        self.spacing = spacing
        self.detentStrength = detentStrength
        self.endStopStrength = endStopStrength
        self.snapPoint = snapPoint
    }
}

/// Follows a position over a ``DetentConfiguration``: which detent it is on, every detent crossed
/// (in order, even several in one fast step), and the end stops.
public struct DetentTracker: Sendable {
    /// The configuration.
    public let configuration: DetentConfiguration
    /// The detent the position is on.
    public private(set) var index: Int
    private var atStop: Bool?

    /// A tracker starting on the detent nearest `position`.
    public init(configuration: DetentConfiguration, position: Double) {
        self.configuration = configuration
        let detents = configuration.detents
        index = detents.indices.min { abs(detents[$0] - position) < abs(detents[$1] - position) } ?? 0
    }

    /// The events of moving to `position`.
    public mutating func update(position: Double) -> [InteractionEvent] {
        let detents = configuration.detents
        let snap = configuration.snapPoint
        var events: [InteractionEvent] = []
        // Up: at or past the snap point toward the next detent. Down: strictly past it the other way,
        // so a position exactly on a shared boundary never moves both ways.
        while index < detents.count - 1, position >= detents[index] + snap * (detents[index + 1] - detents[index]) {
            index += 1
            events.append(.detentCrossed(index: index, direction: 1))
        }
        while index > 0, position < detents[index] - snap * (detents[index] - detents[index - 1]) {
            index -= 1
            events.append(.detentCrossed(index: index, direction: -1))
        }
        let range = configuration.range
        let stop: Bool? = position > range.upperBound ? true : position < range.lowerBound ? false : nil
        if let stop, stop != atStop { events.append(.endStop(upper: stop)) }
        atStop = stop
        return events
    }
}

/// Discrete levels of a continuous value (pressure, a slider's value), with hysteresis: passing a
/// threshold plays level-change feedback once, and the value must fall back by `hysteresis` to
/// leave the level.
public struct LevelTracker: Sendable {
    /// The thresholds, ascending: level n begins at `thresholds[n - 1]`; level 0 is below the first.
    public let thresholds: [Double]
    /// How far below a threshold the value must fall to leave its level.
    public let hysteresis: Double
    /// The current level.
    public private(set) var level = 0

    /// A tracker over `thresholds`.
    public init(thresholds: [Double], hysteresis: Double) {
        self.thresholds = thresholds.sorted()
        self.hysteresis = max(hysteresis, 0)
    }

    /// The events of the value becoming `value`.
    public mutating func update(value: Double) -> [InteractionEvent] {
        var events: [InteractionEvent] = []
        while level < thresholds.count, value >= thresholds[level] {
            level += 1
            events.append(.levelChanged(level: level))
        }
        while level > 0, value < thresholds[level - 1] - hysteresis {
            level -= 1
            events.append(.levelChanged(level: level))
        }
        return events
    }
}

/// Alignment guides for dragging: when a dragged item's edge or centre comes within `distance`
/// of a guide it snaps there, once per approach.
public struct AlignmentSnapper: Sendable {
    /// A guide line.
    public struct Guide: Sendable, Hashable {
        /// Its name, for events.
        public var name: String
        /// Vertical line at this x (`vertical`), or horizontal line at this y.
        public var position: Double
        /// Whether the line is vertical.
        public var vertical: Bool

        /// A guide.
        public init(name: String, position: Double, vertical: Bool) {
            self.name = name
            self.position = position
            self.vertical = vertical
        }
    }

    /// The guides.
    public let guides: [Guide]
    /// The snapping distance, points.
    public let distance: Double
    private var snapped: Set<String> = []

    /// A snapper.
    public init(guides: [Guide], distance: Double = 6) {
        self.guides = guides
        self.distance = distance
    }

    /// The item's frame, snapped to the nearest guide on each axis; and the snaps that just happened.
    public mutating func update(frame: Rect) -> (Rect, [InteractionEvent]) {
        var result = frame
        var events: [InteractionEvent] = []
        var now: Set<String> = []
        for vertical in [true, false] {
            let edges = vertical ? [frame.x, frame.center.x, frame.maxX] : [frame.y, frame.center.y, frame.maxY]
            var best: (guide: Guide, offset: Double)?
            for guide in guides where guide.vertical == vertical {
                for edge in edges where abs(guide.position - edge) <= distance {
                    let offset = guide.position - edge
                    if best == nil || abs(offset) < abs(best!.offset) { best = (guide, offset) }
                }
            }
            if let best {
                if vertical { result.x += best.offset } else { result.y += best.offset }
                now.insert(best.guide.name)
                if !snapped.contains(best.guide.name) { events.append(.snapped(guide: best.guide.name)) }
            }
        }
        snapped = now
        return (result, events)
    }
}

/// A configuration or trace that cannot be used, with the problem.
public enum InteractionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A value out of range or inconsistent.
    case invalid(String)
    /// A trace file line that cannot be read: the file, line number and problem.
    case trace(file: String, line: Int, problem: String)

    public var description: String {
        switch self {
        case .invalid(let problem): problem
        case .trace(let file, let line, let problem): "\(file):\(line): \(problem)"
        }
    }
}
