/// The hit regions of a set of targets: each visible frame grown by its padding (about 12 pt with
/// a bezel, 24 pt without), except that buttons of one bar meet exactly halfway across the gaps
/// between them, so moving from one to the next never drops back to "no target".
///
/// Targets later in the list are on top. Where regions overlap, the target whose visible frame
/// holds the point wins, else the one whose centre is nearest.
public struct HitRegions: Sendable {
    /// One target's region.
    public enum Region: Sendable, Hashable {
        /// The target's shape grown by `padding` points.
        case padded(frame: Rect, shape: PointerTarget.Shape, padding: Double)
        /// A rectangle (bar buttons, whose regions tile the bar).
        case rectangle(Rect)

        /// Whether `point` is inside.
        public func contains(_ point: Point) -> Bool {
            switch self {
            case .rectangle(let rect):
                return rect.contains(point)
            case .padded(let frame, .circle, let padding):
                return point.distance(to: frame.center) <= min(frame.width, frame.height) / 2 + padding
            case .padded(let frame, .roundedRectangle(let cornerRadius), let padding):
                let radius = min(max(cornerRadius, 0), frame.width / 2, frame.height / 2)
                let core = frame.insetBy(radius)
                let dx = max(core.x - point.x, 0, point.x - core.maxX)
                let dy = max(core.y - point.y, 0, point.y - core.maxY)
                return (dx * dx + dy * dy).squareRoot() <= radius + padding
            }
        }

        /// The smallest rectangle holding the region.
        public var bounds: Rect {
            switch self {
            case .rectangle(let rect): rect
            case .padded(let frame, _, let padding): frame.insetBy(-padding)
            }
        }
    }

    /// The targets, bottom to top.
    public let targets: [PointerTarget]
    /// Each target's region, by id.
    public let regions: [String: Region]

    /// The regions of `targets` under `parameters`.
    public init(targets: [PointerTarget], parameters: InteractionParameters = InteractionParameters()) {
        self.targets = targets
        var regions: [String: Region] = [:]
        func padding(_ target: PointerTarget) -> Double {
            target.padding ?? (target.hasBezel ? parameters.paddingWithBezel : parameters.paddingWithoutBezel)
        }
        for target in targets where target.barGroup == nil {
            regions[target.id] = .padded(frame: target.frame, shape: target.shape, padding: padding(target))
        }
        let bars = Dictionary(grouping: targets.filter { $0.barGroup != nil }, by: { $0.barGroup! })
        for (_, members) in bars {
            // A bar runs along the axis its buttons spread over.
            let xs = members.map(\.frame.center.x), ys = members.map(\.frame.center.y)
            let horizontal = (xs.max()! - xs.min()!) >= (ys.max()! - ys.min()!)
            let ordered = members.sorted { horizontal ? $0.frame.x < $1.frame.x : $0.frame.y < $1.frame.y }
            for (index, member) in ordered.enumerated() {
                let pad = padding(member)
                var rect = member.frame.insetBy(-pad)
                if horizontal {
                    if index > 0 {
                        let previous = ordered[index - 1].frame
                        let boundary = (previous.maxX + member.frame.x) / 2
                        rect = Rect(x: boundary, y: rect.y, width: rect.maxX - boundary, height: rect.height)
                    }
                    if index < ordered.count - 1 {
                        let boundary = (member.frame.maxX + ordered[index + 1].frame.x) / 2
                        rect = Rect(x: rect.x, y: rect.y, width: boundary - rect.x, height: rect.height)
                    }
                } else {
                    if index > 0 {
                        let previous = ordered[index - 1].frame
                        let boundary = (previous.maxY + member.frame.y) / 2
                        rect = Rect(x: rect.x, y: boundary, width: rect.width, height: rect.maxY - boundary)
                    }
                    if index < ordered.count - 1 {
                        let boundary = (member.frame.maxY + ordered[index + 1].frame.y) / 2
                        rect = Rect(x: rect.x, y: rect.y, width: rect.width, height: boundary - rect.y)
                    }
                }
                regions[member.id] = .rectangle(rect)
            }
        }
        self.regions = regions
    }

    /// The target at `point`, if any.
    public func target(at point: Point) -> PointerTarget? {
        let hits = targets.filter { regions[$0.id]!.contains(point) }
        if let onTop = hits.last(where: { $0.frame.contains(point) }) { return onTop }
        return hits.min { $0.frame.center.distance(to: point) < $1.frame.center.distance(to: point) }
    }

    /// The most points ``magneticTarget(reachedFrom:to:step:)`` tests on one path.
    public static let maximumPathSteps = 10_000

    /// The magnetic target a movement from `start` coasting to `end` reaches: the one holding the
    /// end point, else the last one the straight path crosses (walked in steps of at most `step`
    /// points, or of a ``maximumPathSteps``-th of the path if that is longer). Nil for a path
    /// that is not finite.
    public func magneticTarget(reachedFrom start: Point, to end: Point, step: Double = 2) -> PointerTarget? {
        let length = start.distance(to: end)
        guard length.isFinite, step > 0 else { return nil }
        let count = Int(min(max((length / step).rounded(.up), 1), Double(Self.maximumPathSteps)))
        var reached: PointerTarget?
        for index in 0...count {
            let fraction = Double(index) / Double(count)
            let point = Point(x: start.x + (end.x - start.x) * fraction, y: start.y + (end.y - start.y) * fraction)
            if let target = target(at: point), target.effect.isMagnetic { reached = target }
        }
        return reached
    }
}
