/// A change to a playing pattern at one time (Core Haptics' `CHHapticDynamicParameter`).
public struct HapticDynamicParameter: Sendable, Hashable {
    /// Which control.
    public enum ID: String, Sendable, Hashable, CaseIterable {
        /// Multiplies every event's intensity, 0 … 1. Default 1.
        case hapticIntensityControl = "HapticIntensityControl"
        /// Added to every event's sharpness, -1 … 1. Default 0.
        case hapticSharpnessControl = "HapticSharpnessControl"
        /// Scales attack times exponentially, -1 (10× shorter) … 1 (10× longer). Default 0.
        case hapticAttackTimeControl = "HapticAttackTimeControl"
        /// Scales decay times exponentially, -1 … 1. Default 0.
        case hapticDecayTimeControl = "HapticDecayTimeControl"
        /// Scales release times exponentially, -1 … 1. Default 0.
        case hapticReleaseTimeControl = "HapticReleaseTimeControl"
        /// Audio controls: kept in the pattern, not rendered by haptic devices.
        case audioVolumeControl = "AudioVolumeControl"
        case audioPanControl = "AudioPanControl"
        case audioBrightnessControl = "AudioBrightnessControl"
        case audioPitchControl = "AudioPitchControl"
        case audioAttackTimeControl = "AudioAttackTimeControl"
        case audioDecayTimeControl = "AudioDecayTimeControl"
        case audioReleaseTimeControl = "AudioReleaseTimeControl"

        /// The allowed range; values outside are clamped, as Core Haptics does.
        public var range: ClosedRange<Double> {
            switch self {
            case .hapticIntensityControl, .audioVolumeControl: 0...1
            default: -1...1
            }
        }

        /// The control's value before any change.
        public var defaultValue: Double {
            switch self {
            case .hapticIntensityControl, .audioVolumeControl: 1
            default: 0
            }
        }
    }

    /// Which control.
    public var id: ID
    /// The value (clamped to ``ID/range`` in a pattern).
    public var value: Double
    /// When it takes effect, in seconds from the pattern's start (or, sent to a player, from the send time).
    public var relativeTime: Double

    /// A control change.
    public init(parameterID: ID, value: Double, relativeTime: Double = 0) {
        self.id = parameterID
        self.value = value
        self.relativeTime = relativeTime
    }
}

/// A control that moves through points, linearly between them (Core Haptics' `CHHapticParameterCurve`).
///
/// Core Haptics caps a curve at ``maximumControlPoints`` points. ``split(_:)`` turns a longer curve
/// into consecutive curves that keep its shape: each later curve starts at the point where the
/// previous one ended.
public struct HapticParameterCurve: Sendable, Hashable {
    /// One point of a curve.
    public struct ControlPoint: Sendable, Hashable {
        /// Seconds from the curve's start.
        public var relativeTime: Double
        /// The control's value there.
        public var value: Double

        /// A point.
        public init(relativeTime: Double, value: Double) {
            self.relativeTime = relativeTime
            self.value = value
        }
    }

    /// Core Haptics' limit on points per curve.
    public static let maximumControlPoints = 16

    /// Which control the curve moves.
    public var id: HapticDynamicParameter.ID
    /// When the curve starts, in seconds from the pattern's start.
    public var relativeTime: Double
    /// The points, times relative to ``relativeTime``, in increasing time order.
    public var controlPoints: [ControlPoint]

    /// A curve. Use ``split(_:)`` (or let ``HapticPattern`` do it) for more than 16 points.
    public init(parameterID: HapticDynamicParameter.ID, controlPoints: [ControlPoint], relativeTime: Double = 0) {
        self.id = parameterID
        self.controlPoints = controlPoints
        self.relativeTime = relativeTime
    }

    /// `curve` as consecutive curves of at most 16 points with the same shape: a 17-point ramp
    /// becomes a 16-point curve and a 2-point curve starting at the 16th point.
    public static func split(_ curve: HapticParameterCurve) -> [HapticParameterCurve] {
        let points = curve.controlPoints
        guard points.count > maximumControlPoints else { return [curve] }
        var curves: [HapticParameterCurve] = []
        var start = 0
        while start < points.count - 1 {
            let end = min(start + maximumControlPoints, points.count)
            let origin = points[start].relativeTime
            let slice = points[start..<end].map { ControlPoint(relativeTime: $0.relativeTime - origin, value: $0.value) }
            curves.append(HapticParameterCurve(parameterID: curve.id, controlPoints: slice, relativeTime: curve.relativeTime + origin))
            start = end - 1
        }
        return curves
    }

    /// When the curve's last point is reached, in seconds from the pattern's start.
    public var endTime: Double { relativeTime + (controlPoints.last?.relativeTime ?? 0) }
}
