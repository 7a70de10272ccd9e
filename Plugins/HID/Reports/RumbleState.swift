/// The drive a backend wants one controller to render right now: what every family encodes.
///
/// Amplitudes are normalized, 0 (off) … 1 (the strongest the family renders safely). Setting a value
/// outside 0…1 clamps it, and NaN becomes 0, so an encoder never sees an out-of-range drive.
/// Frequencies are in Hz and only matter to families that control frequency (the Switch Pro
/// Controller); a NaN frequency becomes the default, and each family clamps to its own range.
public struct RumbleState: Sendable, Hashable {
    /// The default frequency of the strong actuator, in Hz: the Switch HD rumble low band's default (160 Hz).
    public static let defaultStrongFrequency: Double = 160
    /// The default frequency of the weak actuator, in Hz: the Switch HD rumble high band's default (320 Hz).
    public static let defaultWeakFrequency: Double = 320
    /// Every motor off, frequencies at their defaults.
    public static let off = RumbleState()

    private var strongValue: Double = 0
    private var weakValue: Double = 0
    private var leftTriggerValue: Double?
    private var rightTriggerValue: Double?
    private var strongFrequencyValue: Double = RumbleState.defaultStrongFrequency
    private var weakFrequencyValue: Double = RumbleState.defaultWeakFrequency

    /// The strong (large, low-frequency, left) motor's amplitude, 0…1.
    public var strong: Double {
        get { strongValue }
        set { strongValue = Self.unitInterval(newValue) }
    }

    /// The weak (small, high-frequency, right) motor's amplitude, 0…1.
    public var weak: Double {
        get { weakValue }
        set { weakValue = Self.unitInterval(newValue) }
    }

    /// The left trigger motor's amplitude, 0…1, or `nil` to leave it off; ignored by families without trigger motors.
    public var leftTrigger: Double? {
        get { leftTriggerValue }
        set { leftTriggerValue = newValue.map(Self.unitInterval) }
    }

    /// The right trigger motor's amplitude, 0…1, or `nil` to leave it off; ignored by families without trigger motors.
    public var rightTrigger: Double? {
        get { rightTriggerValue }
        set { rightTriggerValue = newValue.map(Self.unitInterval) }
    }

    /// The strong actuator's frequency in Hz, for families that control frequency (0 or more; NaN becomes the default).
    public var strongFrequency: Double {
        get { strongFrequencyValue }
        set { strongFrequencyValue = Self.frequency(newValue, default: Self.defaultStrongFrequency) }
    }

    /// The weak actuator's frequency in Hz, for families that control frequency (0 or more; NaN becomes the default).
    public var weakFrequency: Double {
        get { weakFrequencyValue }
        set { weakFrequencyValue = Self.frequency(newValue, default: Self.defaultWeakFrequency) }
    }

    /// A drive state; every value is clamped as its property describes.
    ///
    /// - Parameters:
    ///   - strong: The strong motor's amplitude, 0…1.
    ///   - weak: The weak motor's amplitude, 0…1.
    ///   - leftTrigger: The left trigger motor's amplitude, 0…1, or `nil`.
    ///   - rightTrigger: The right trigger motor's amplitude, 0…1, or `nil`.
    ///   - strongFrequency: The strong actuator's frequency in Hz.
    ///   - weakFrequency: The weak actuator's frequency in Hz.
    public init(
        strong: Double = 0, weak: Double = 0, leftTrigger: Double? = nil, rightTrigger: Double? = nil,
        strongFrequency: Double = RumbleState.defaultStrongFrequency,
        weakFrequency: Double = RumbleState.defaultWeakFrequency
    ) {
        self.strong = strong
        self.weak = weak
        self.leftTrigger = leftTrigger
        self.rightTrigger = rightTrigger
        self.strongFrequency = strongFrequency
        self.weakFrequency = weakFrequency
    }

    /// Whether every motor, triggers included, is off.
    public var isOff: Bool {
        strong == 0 && weak == 0 && (leftTrigger ?? 0) == 0 && (rightTrigger ?? 0) == 0
    }

    /// `value` clamped to 0…1, with NaN as 0.
    static func unitInterval(_ value: Double) -> Double {
        value.isNaN ? 0 : min(max(value, 0), 1)
    }

    /// `value` as a frequency: NaN becomes `fallback`, negatives become 0.
    private static func frequency(_ value: Double, default fallback: Double) -> Double {
        value.isNaN ? fallback : max(value, 0)
    }
}

/// Quantizing normalized amplitudes onto a controller's integer scale.
enum Quantize {
    /// `amplitude` (0…1, already clamped) rounded onto 0…`maximum`.
    static func level(_ amplitude: Double, maximum: UInt8) -> UInt8 {
        UInt8((RumbleState.unitInterval(amplitude) * Double(maximum)).rounded())
    }
}
