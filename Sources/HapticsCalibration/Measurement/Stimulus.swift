import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// Something the calibration plays through the engine, and how long to watch it.
public struct Stimulus: Sendable {
    /// How the output of a stimulus is summarised.
    public enum Measure: Sendable, Hashable {
        /// The steady amplitude (√2 × RMS) between these seconds from the start.
        case steady(from: Double, to: Double)
        /// The steady amplitude of a drive that ends at `end` seconds, over the part of it the trace
        /// shows to be steady (``AccelerationTrace/steadyPart(end:window:noise:)``): for tones.
        case settled(end: Double, window: Double)
        /// The envelope peak over the whole capture: for taps and effects.
        case envelopePeak
    }

    /// What is played.
    public var pattern: HapticPattern
    /// Seconds to capture from the stimulus's start (its length plus the ring-down).
    public var captureLength: Double
    /// How its output is summarised.
    public var measure: Measure

    /// A stimulus.
    public init(pattern: HapticPattern, captureLength: Double, measure: Measure) {
        self.pattern = pattern
        self.captureLength = captureLength
        self.measure = measure
    }

    /// A sustained tone at `intensity` and `sharpness` (0…1) for `duration` seconds, measured over
    /// the part of it the trace shows to be steady (at least its last `window` seconds), and watched
    /// for `tail` seconds after it ends.
    public static func tone(intensity: Double, sharpness: Double, duration: Double, window: Double, tail: Double = 0) -> Stimulus {
        let event = HapticEvent(
            eventType: .hapticContinuous,
            parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)],
            relativeTime: 0, duration: duration)
        return Stimulus(pattern: pattern([event]), captureLength: duration + tail, measure: .settled(end: duration, window: window))
    }

    /// Tones at each of `intensities` one after another with no gap, each `step` seconds long:
    /// the actuator keeps running from one to the next.
    public static func staircase(intensities: [Double], sharpness: Double, step: Double, tail: Double = 0) -> Stimulus {
        let events = intensities.enumerated().map { index, intensity in
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)],
                relativeTime: Double(index) * step, duration: step)
        }
        let length = Double(intensities.count) * step
        return Stimulus(pattern: pattern(events), captureLength: length + tail, measure: .steady(from: length - step / 2, to: length))
    }

    /// One tap at `intensity` and `sharpness`, watched for `captureLength` seconds.
    public static func tap(intensity: Double, sharpness: Double, captureLength: Double) -> Stimulus {
        let event = HapticEvent(
            eventType: .hapticTransient,
            parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)],
            relativeTime: 0)
        return Stimulus(pattern: pattern([event]), captureLength: captureLength, measure: .envelopePeak)
    }

    /// A whole pattern (a vocabulary effect), watched for its duration plus `ringDown` seconds.
    public static func effect(_ pattern: HapticPattern, transientDuration: Double, ringDown: Double) -> Stimulus {
        let end = PatternSpan.end(of: pattern, transientDuration: transientDuration)
        return Stimulus(pattern: pattern, captureLength: end + ringDown, measure: .envelopePeak)
    }

    /// The summary of `trace` this stimulus asks for, g; `noise` is the sensor's noise amplitude
    /// (a steady part is not looked for in a trace at the noise).
    public func summarise(_ trace: AccelerationTrace, noise: Double = 0) -> Double {
        switch measure {
        case .steady(let from, let to): trace.amplitude(from: from, to: to)
        case .settled(let end, let window): trace.steadyPart(end: end, window: window, noise: noise).amplitude
        case .envelopePeak: trace.envelopePeak()
        }
    }

    /// Whether the stimulus is a short event, measured by its envelope's peak.
    public var isTransient: Bool { measure == .envelopePeak }

    private static func pattern(_ events: [HapticEvent]) -> HapticPattern {
        do { return try HapticPattern(events: events) } catch {
            preconditionFailure("a calibration stimulus is always a valid pattern: \(error)")
        }
    }
}

/// Where a pattern ends once its taps have sounded.
enum PatternSpan {
    static func end(of pattern: HapticPattern, transientDuration: Double) -> Double {
        let taps = pattern.hapticEvents.filter { $0.type == .hapticTransient }.map(\.relativeTime).max()
        return max(pattern.duration, (taps ?? 0) + transientDuration)
    }
}

/// The profile that turns intensity into raw drive on one channel: intensity `x` gives drive `x`
/// (dead zone 0, linear, full scale 1 reference unit, flat), on that channel only, at the frequency
/// sharpness selects across the channel's whole range. Measuring through it keeps the real
/// rendering path (engine, quantisation, update intervals) between the stimulus and the device.
public enum ChannelProbe {
    /// The raw-drive profile for `channel` of `device`; with `ownFrequency`, the channel plays at
    /// the frequency its backend chooses when none is asked (its resonance), whatever the sharpness.
    public static func profile(for device: DeviceDescription, channel: Int, ownFrequency: Bool = false) -> CalibrationProfile {
        let channels = device.channels.enumerated().map { index, description in
            ChannelCalibration(name: description.name, usableBand: index == channel && !ownFrequency ? description.frequencyRange : nil)
        }
        let sharpness: CalibrationProfile.SharpnessMapping
        if device.channels[channel].frequencyRange != nil, !ownFrequency {
            sharpness = .frequency
        } else if device.channels.count >= 2 {
            // Sharpness 0 puts everything on `low`: the channel measured.
            sharpness = .motorMix(low: channel, high: channel == 0 ? 1 : 0)
        } else {
            sharpness = .none
        }
        let base = CalibrationProfile.uncalibrated(for: device)
        return CalibrationProfile(
            deviceID: device.id, deviceName: device.name, source: .uncalibrated, channels: channels, sharpness: sharpness,
            transient: base.transient, drive: .measured(on: device))
    }

    /// The sharpness that makes the probe profile drive `channel` at `frequency` Hz (0 for a channel
    /// whose frequency cannot be chosen).
    public static func sharpness(for frequency: Double, channel: ChannelDescription) -> Double {
        guard let range = channel.frequencyRange, frequency > 0, range.upperBound > range.lowerBound else { return 0 }
        let clamped = min(max(frequency, range.lowerBound), range.upperBound)
        return min(max(log(clamped / range.lowerBound) / log(range.upperBound / range.lowerBound), 0), 1)
    }

    /// The frequency sharpness `sharpness` selects within `band` (as the renderer does), Hz.
    public static func frequency(forSharpness sharpness: Double, band: ClosedRange<Double>) -> Double {
        band.lowerBound * pow(band.upperBound / band.lowerBound, sharpness)
    }
}

extension CalibrationProfile.DriveScale {
    /// What calibration drives `device` in: levels from zero where its backend takes frames of
    /// levels (the board's offset is then the calibration's to replace), else amplitudes.
    public static func measured(on device: DeviceDescription) -> Self {
        device.envelope?.acceptsLevels == true ? .level : .amplitude
    }
}
