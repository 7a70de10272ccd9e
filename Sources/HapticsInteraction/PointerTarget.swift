/// An interface element the pointer can meet (iPadOS pointer interactions): its visible frame,
/// its shape, and how it reacts.
public struct PointerTarget: Sendable, Hashable, Identifiable {
    /// The visible outline.
    public enum Shape: Sendable, Hashable {
        /// A rectangle with rounded corners (radius in points, clamped to half the shorter side).
        case roundedRectangle(cornerRadius: Double)
        /// A circle inscribed in the frame.
        case circle
    }

    /// How the element reacts to the pointer.
    public enum EffectStyle: Sendable, Hashable {
        /// Small element with a transparent background: the pointer morphs into a highlight. Magnetic.
        case highlight
        /// Small opaque element: it lifts under the pointer. Magnetic.
        case lift
        /// Large element: a hover effect, no magnetism.
        case hover
        /// Text: a vertical beam; small vertical drift is resisted so the pointer keeps its line.
        case beam(lineHeight: Double)

        /// Whether the target pulls the pointer toward its centre.
        public var isMagnetic: Bool {
            switch self {
            case .highlight, .lift: true
            case .hover, .beam: false
            }
        }
    }

    /// A unique name.
    public var id: String
    /// The visible frame, points.
    public var frame: Rect
    /// The visible outline.
    public var shape: Shape
    /// The reaction.
    public var effect: EffectStyle
    /// Whether the element draws a bezel (a visible button outline): its hit region is padded less.
    public var hasBezel: Bool
    /// Padding past the visible frame in points; nil uses ``InteractionParameters/paddingWithBezel`` or ``InteractionParameters/paddingWithoutBezel``.
    public var padding: Double?
    /// Buttons of one bar (a toolbar, a tab bar) share contiguous hit regions.
    public var barGroup: String?

    /// A target.
    public init(
        id: String, frame: Rect, shape: Shape = .roundedRectangle(cornerRadius: 8), effect: EffectStyle = .highlight,
        hasBezel: Bool = true, padding: Double? = nil, barGroup: String? = nil
    ) {
        self.id = id
        self.frame = frame
        self.shape = shape
        self.effect = effect
        self.hasBezel = hasBezel
        self.padding = padding
        self.barGroup = barGroup
    }
}

/// The explicit parameters of pointer interaction: padding, magnetism, flick projection, text drift.
public struct InteractionParameters: Sendable, Hashable {
    /// Hit-region padding for elements with a bezel, points (about 12 pt in Apple's guidelines).
    public var paddingWithBezel: Double
    /// Hit-region padding for elements without a bezel, points (about 24 pt).
    public var paddingWithoutBezel: Double
    /// How far magnetism pulls the displayed pointer toward a magnetic target's centre, 0 (none) … 1 (onto it).
    public var magnetism: Double
    /// Pointer speed above which a movement counts as a flick, points per second.
    public var flickSpeed: Double
    /// Deceleration rate per millisecond used to project a flick (UIScrollView's normal rate is 0.998).
    public var decelerationRate: Double
    /// Seconds of samples the pointer velocity is measured over.
    public var velocityWindow: Double
    /// Fraction of a text line's height the pointer may drift vertically before it changes line, 0 … 1.
    public var lineDriftTolerance: Double

    /// Parameters; the defaults follow Apple's pointer guidelines and UIKit's deceleration.
    public init(
        paddingWithBezel: Double = 12, paddingWithoutBezel: Double = 24, magnetism: Double = 0.35, flickSpeed: Double = 800,
        decelerationRate: Double = 0.998, velocityWindow: Double = 0.05, lineDriftTolerance: Double = 0.6
    ) {
        self.paddingWithBezel = paddingWithBezel
        self.paddingWithoutBezel = paddingWithoutBezel
        self.magnetism = min(max(magnetism, 0), 1)
        self.flickSpeed = flickSpeed
        self.decelerationRate = min(max(decelerationRate, 0), 0.9999)
        self.velocityWindow = velocityWindow
        self.lineDriftTolerance = min(max(lineDriftTolerance, 0), 1)
    }
}
