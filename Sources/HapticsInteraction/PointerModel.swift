/// One pointer position at a time, in seconds (any monotonic origin).
public struct PointerSample: Sendable, Hashable {
    /// When, seconds.
    public var time: Double
    /// Where, points.
    public var position: Point

    /// A sample.
    public init(time: Double, position: Point) {
        self.time = time
        self.position = position
    }
}

/// What the pointer model made of one sample.
public struct PointerFrame: Sendable, Hashable {
    /// The sample's time, seconds.
    public var time: Double
    /// Where the input put the pointer.
    public var raw: Point
    /// Where the pointer is shown: pulled by magnetism, kept on its text line.
    public var displayed: Point
    /// The target under the pointer.
    public var target: String?
    /// The magnetic target a flick in progress will reach.
    public var projectedTarget: String?
}

/// Pointer interaction as a pure function of samples and targets: hit regions, magnetism toward
/// highlight and lift targets (never hover), flick projection along the trajectory, and line
/// keeping over text. ``process(_:)`` runs a whole trace; ``update(_:)`` takes one sample at a time.
public struct PointerModel: Sendable {
    /// The regions.
    public let regions: HitRegions
    /// The parameters.
    public let parameters: InteractionParameters
    private var current: String?
    private var projected: String?
    private var lineY: Double?
    /// The samples of the velocity window: `recent[recentStart...]` (older ones are dropped in bulk,
    /// so a long run of samples inside one window costs linear time, not quadratic).
    private var recent: [PointerSample] = []
    private var recentStart = 0

    /// A model over `targets`.
    public init(targets: [PointerTarget], parameters: InteractionParameters = InteractionParameters()) {
        regions = HitRegions(targets: targets, parameters: parameters)
        self.parameters = parameters
    }

    /// The frames and the events (with their times) of a whole trace.
    public static func process(
        _ samples: [PointerSample], targets: [PointerTarget], parameters: InteractionParameters = InteractionParameters()
    ) -> (frames: [PointerFrame], events: [(time: Double, event: InteractionEvent)]) {
        var model = PointerModel(targets: targets, parameters: parameters)
        var frames: [PointerFrame] = []
        var events: [(time: Double, event: InteractionEvent)] = []
        for sample in samples {
            let (frame, happened) = model.update(sample)
            frames.append(frame)
            events += happened.map { (sample.time, $0) }
        }
        return (frames, events)
    }

    /// Takes one sample.
    public mutating func update(_ sample: PointerSample) -> (PointerFrame, [InteractionEvent]) {
        var events: [InteractionEvent] = []
        let hit = regions.target(at: sample.position)
        if hit?.id != current {
            if let current { events.append(.targetExited(id: current)) }
            if let hit { events.append(.targetEntered(id: hit.id, magnetic: hit.effect.isMagnetic)) }
            current = hit?.id
            lineY = nil
        }

        var displayed = sample.position
        if let hit {
            switch hit.effect {
            case .highlight, .lift:
                let center = hit.frame.center
                displayed = Point(
                    x: sample.position.x + (center.x - sample.position.x) * parameters.magnetism,
                    y: sample.position.y + (center.y - sample.position.y) * parameters.magnetism)
            case .beam(let lineHeight):
                if let line = lineY, abs(sample.position.y - line) <= lineHeight * parameters.lineDriftTolerance {
                    displayed.y = line
                } else {
                    lineY = sample.position.y
                }
            case .hover:
                break
            }
        }

        recent.append(sample)
        // Samples arrive in time order, so the window's old samples are at its front.
        while recentStart < recent.count, recent[recentStart].time < sample.time - parameters.velocityWindow { recentStart += 1 }
        if recentStart > 64, recentStart * 2 > recent.count {
            recent.removeFirst(recentStart)
            recentStart = 0
        }
        var target: String?
        if recentStart < recent.count, case let first = recent[recentStart], sample.time > first.time {
            let elapsed = sample.time - first.time
            let velocity = Point(x: (sample.position.x - first.position.x) / elapsed, y: (sample.position.y - first.position.y) / elapsed)
            if (velocity.x * velocity.x + velocity.y * velocity.y).squareRoot() >= parameters.flickSpeed {
                let end = Point(x: sample.position.x + Self.projection(velocity.x, parameters.decelerationRate),
                                y: sample.position.y + Self.projection(velocity.y, parameters.decelerationRate))
                target = regions.magneticTarget(reachedFrom: sample.position, to: end)?.id
            }
        }
        if let target, target != projected { events.append(.flickProjected(id: target)) }
        projected = target
        return (PointerFrame(time: sample.time, raw: sample.position, displayed: displayed, target: current, projectedTarget: target), events)
    }

    /// The longest projection, in points: far beyond any screen, and short enough to walk.
    public static let maximumProjection = 10_000.0

    /// How far a movement at `velocity` (points per second) coasts with a deceleration `rate` per
    /// millisecond: the limit of the geometric series UIKit uses, `(v / 1000) · r / (1 − r)` points,
    /// at most ``maximumProjection`` either way (samples microseconds apart can make any velocity).
    public static func projection(_ velocity: Double, _ rate: Double) -> Double {
        let distance = velocity / 1000 * rate / (1 - rate)
        guard !distance.isNaN else { return 0 }
        return min(max(distance, -maximumProjection), maximumProjection)
    }
}
