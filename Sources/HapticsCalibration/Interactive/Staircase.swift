/// An adaptive 1-up/2-down staircase for a detection threshold (Levitt's transformed up-down
/// method): the level goes down after two detections in a row and up after one miss, so it
/// settles where a stimulus is detected 70.7 % of the time (p² = 0.5). The step halves at every
/// reversal down to a floor; the threshold is the mean of the reversal levels after the first two.
public struct Staircase: Sendable, Hashable {
    /// The level to present next, 0…1 (drive).
    public private(set) var level: Double
    /// The current step.
    public private(set) var step: Double
    /// Levels at which the direction reversed, in order.
    public private(set) var reversals: [Double] = []
    /// Trials answered.
    public private(set) var trials = 0
    let minimumStep: Double
    let range: ClosedRange<Double>
    let reversalsNeeded: Int
    let maximumTrials: Int
    private var detectedInARow = 0
    private var lastDirection = 0

    /// A staircase starting at `start` with steps of `step`, halving at each reversal down to
    /// `minimumStep`, finished after `reversals` reversals or `maximumTrials` trials.
    public init(
        start: Double, step: Double, minimumStep: Double, range: ClosedRange<Double> = 0...1, reversals: Int = 8, maximumTrials: Int = 60
    ) {
        level = min(max(start, range.lowerBound), range.upperBound)
        self.step = step
        self.minimumStep = minimumStep
        self.range = range
        reversalsNeeded = reversals
        self.maximumTrials = maximumTrials
    }

    /// Whether enough reversals (or trials) have been seen.
    public var isFinished: Bool { reversals.count >= reversalsNeeded || trials >= maximumTrials }

    /// The threshold estimate: the mean of the reversal levels after the first two (the current
    /// level if there are none yet).
    public var threshold: Double {
        let used = reversals.count > 2 ? Array(reversals.dropFirst(2)) : reversals
        return used.isEmpty ? level : used.reduce(0, +) / Double(used.count)
    }

    /// Records the answer to the stimulus at ``level`` and moves to the next level.
    public mutating func record(detected: Bool) {
        trials += 1
        var direction = 0
        if detected {
            detectedInARow += 1
            if detectedInARow == 2 {
                direction = -1
                detectedInARow = 0
            }
        } else {
            direction = 1
            detectedInARow = 0
        }
        guard direction != 0 else { return }
        if lastDirection != 0, direction != lastDirection {
            reversals.append(level)
            step = max(step / 2, minimumStep)
        }
        lastDirection = direction
        level = min(max(level + Double(direction) * step, range.lowerBound), range.upperBound)
    }
}

/// Finds by bisection the drive at which a test stimulus matches a reference, from answers
/// "stronger", "weaker" or "the same".
public struct MatchSearch: Sendable, Hashable {
    /// The drive to present next.
    public private(set) var level: Double
    private var low: Double
    private var high: Double
    private var everStronger = false
    let top: Double
    let tolerance: Double
    /// Whether the answer has been found (a "same" answer, or an interval narrower than the tolerance).
    public private(set) var isFinished = false
    /// Whether the test was still weaker at the top of the range (the match lies above it).
    public private(set) var saturated = false

    /// A search over `range`, starting at `start`, done when the interval is narrower than `tolerance`.
    public init(range: ClosedRange<Double>, start: Double, tolerance: Double) {
        low = range.lowerBound
        high = range.upperBound
        top = range.upperBound
        level = min(max(start, low), high)
        self.tolerance = tolerance
    }

    /// The answer for the stimulus at ``level``: how the test compared with the target.
    public enum Answer: Sendable, Hashable {
        /// The test felt stronger than the target.
        case stronger
        /// The test felt weaker than the target.
        case weaker
        /// They felt the same.
        case same
    }

    /// Records an answer and moves on.
    public mutating func record(_ answer: Answer) {
        switch answer {
        case .same:
            isFinished = true
            return
        case .stronger:
            high = level
            everStronger = true
        case .weaker:
            low = level
        }
        level = (low + high) / 2
        if high - low < tolerance {
            isFinished = true
            if !everStronger, high >= top - 1e-12 {
                // Weaker every time, up to the top: the match lies at or beyond full drive.
                saturated = true
                level = top
            }
        }
    }
}
