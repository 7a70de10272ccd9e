/// The parameters of the one effect the backend keeps uploaded on a device: what a drive frame
/// becomes. Two frames that give equal parameters need no upload, only a play.
public struct EffectParameters: Sendable, Hashable, CustomStringConvertible {
    /// `FF_RUMBLE`, `FF_PERIODIC` or `FF_CONSTANT`.
    public var type: Int
    /// `FF_RUMBLE`: strong magnitude, 0…0xFFFF.
    public var strong: UInt16 = 0
    /// `FF_RUMBLE`: weak magnitude, 0…0xFFFF.
    public var weak: UInt16 = 0
    /// `FF_PERIODIC`: sine magnitude, 0…0x7FFF.
    public var magnitude: Int16 = 0
    /// `FF_PERIODIC`: period, in milliseconds.
    public var periodMilliseconds: UInt16 = 0
    /// `FF_CONSTANT`: level, 0…0x7FFF.
    public var level: Int16 = 0

    /// Parameters of `type` with every magnitude zero.
    public init(type: Int) { self.type = type }

    /// Whether every magnitude is zero (the effect would play nothing).
    public var isSilent: Bool { strong == 0 && weak == 0 && magnitude == 0 && level == 0 }

    /// `rumble strong 0xffff weak 0x0`, `sine magnitude 0x4000 period 6 ms`, `constant level 0x7fff`.
    public var description: String {
        switch type {
        case FF.rumble: "rumble strong 0x\(String(strong, radix: 16)) weak 0x\(String(weak, radix: 16))"
        case FF.periodic: "sine magnitude 0x\(String(magnitude, radix: 16)) period \(periodMilliseconds) ms"
        case FF.constant: "constant level 0x\(String(level, radix: 16))"
        default: "type 0x\(String(type, radix: 16))"
        }
    }
}

/// Turns drive frames into ``EffectParameters`` for one device.
public struct EffectRenderer: Sendable, Hashable {
    /// How the device is driven.
    public let strategy: EffectStrategy
    /// How magnitudes are written for its driver.
    public let encoding: DriverTraits.RumbleEncoding

    /// The drive frequencies a periodic channel accepts, in Hz: periods of 2–25 ms. The kernel takes
    /// the period in whole milliseconds, so a frequency becomes `1000 / round(1000 / f)` Hz (175 Hz is
    /// played as 6 ms, 166.7 Hz); calibration measures within this range.
    public static let periodicRange: ClosedRange<Float> = 40...500
    /// The period of a periodic channel whose frame asks for no particular frequency (0): 6 ms,
    /// 166.7 Hz, near the 150–235 Hz where phone LRAs resonate.
    public static let defaultPeriodMilliseconds: UInt16 = 6

    /// A renderer.
    public init(strategy: EffectStrategy, encoding: DriverTraits.RumbleEncoding = .linear) {
        self.strategy = strategy
        self.encoding = encoding
    }

    /// The empty effect uploaded when the device wakes (it claims the slot; playing it plays nothing).
    public var restingParameters: EffectParameters? {
        guard let type = strategy.effectType else { return nil }
        var parameters = EffectParameters(type: type)
        if type == FF.periodic { parameters.periodMilliseconds = Self.defaultPeriodMilliseconds }
        return parameters
    }

    /// The parameters for a frame of `amplitudes` (0…1, one per channel, in channel order; values
    /// outside are clamped, NaN is 0) and `frequencies` (Hz, 0 for the default), or nil when the frame
    /// is silent (the effect is stopped, not played at zero).
    public func parameters(amplitudes: [Float], frequencies: [Float]) -> EffectParameters? {
        parameters(
            channelCount: amplitudes.count, amplitude: { amplitudes[$0] },
            frequency: { $0 < frequencies.count ? frequencies[$0] : 0 })
    }

    /// The same for a frame read channel by channel (no arrays on the trigger path).
    public func parameters(channelCount: Int, amplitude raw: (Int) -> Float, frequency: (Int) -> Float) -> EffectParameters? {
        guard let type = strategy.effectType else { return nil }
        func amplitude(_ index: Int) -> Float {
            guard index < channelCount else { return 0 }
            let value = raw(index)
            return value.isNaN ? 0 : min(max(value, 0), 1)
        }
        var parameters = EffectParameters(type: type)
        switch strategy {
        case .dualRumble:
            parameters.strong = rumbleMagnitude(amplitude(0))
            parameters.weak = rumbleMagnitude(amplitude(1))
        case .singleRumble:
            parameters.strong = rumbleMagnitude(amplitude(0))
        case .periodic:
            parameters.magnitude = Int16((amplitude(0) * 0x7FFF).rounded())
            parameters.periodMilliseconds = Self.period(forFrequency: channelCount > 0 ? frequency(0) : 0)
        case .constant:
            parameters.level = Int16((amplitude(0) * 0x7FFF).rounded())
        case .unusable:
            return nil
        }
        return parameters.isSilent ? nil : parameters
    }

    /// The 16-bit rumble magnitude for `amplitude` (0…1).
    public func rumbleMagnitude(_ amplitude: Float) -> UInt16 {
        switch encoding {
        case .linear:
            return UInt16((amplitude * 0xFFFF).rounded())
        case .byteInBothHalves:
            let level = UInt16((amplitude * 0xFF).rounded())
            return level << 8 | level
        }
    }

    /// The period in whole milliseconds for `frequency` Hz, within ``periodicRange``; the default
    /// period for 0, a negative or a non-finite frequency.
    public static func period(forFrequency frequency: Float) -> UInt16 {
        guard frequency.isFinite, frequency > 0 else { return defaultPeriodMilliseconds }
        let clamped = min(max(frequency, periodicRange.lowerBound), periodicRange.upperBound)
        return UInt16((1000 / clamped).rounded())
    }
}
