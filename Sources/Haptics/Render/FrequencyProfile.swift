/// What a device's calibration says about its frequencies, shaped like Android's
/// `VibratorFrequencyProfile` (API 36): the frequencies it plays and the output it reaches at each.
///
/// Outputs are in reference units (g of peak acceleration when the profile was measured with an
/// accelerometer; ``CalibrationProfile/referenceOutput`` is what intensity 1 asks for). It describes
/// the first channel with a usable band (the channel sharpness drives as a frequency); a device
/// whose frequency cannot be chosen (an ERM, a gamepad's motors) has none, as on Android.
public struct FrequencyProfile: Sendable, Hashable {
    /// The lowest frequency sharpness plays (sharpness 0), Hz.
    public let minimumFrequency: Double
    /// The highest frequency sharpness plays (sharpness 1), Hz.
    public let maximumFrequency: Double
    /// The output at full drive by frequency within the band, in reference units, sorted by
    /// frequency: the band's ends and every measured point between them.
    public let frequenciesOutputAcceleration: [(frequency: Double, output: Double)]

    /// The profile of `profile`'s first channel with a usable band; nil when none has one.
    public init?(profile: CalibrationProfile) {
        guard case .frequency = profile.sharpness,
            let channel = profile.channels.first(where: { ($0.usableBand?.lowerBound ?? 0) > 0 }), let band = channel.usableBand
        else { return nil }
        minimumFrequency = band.lowerBound
        maximumFrequency = band.upperBound
        let inside = channel.frequencyResponse.map(\.frequency).filter { $0 > band.lowerBound && $0 < band.upperBound }
        frequenciesOutputAcceleration = ([band.lowerBound] + inside + (band.upperBound > band.lowerBound ? [band.upperBound] : [])).map { frequency in
            (frequency, channel.fullScaleOutput * channel.relativeOutput(at: frequency))
        }
    }

    public static func == (lhs: FrequencyProfile, rhs: FrequencyProfile) -> Bool {
        lhs.minimumFrequency == rhs.minimumFrequency && lhs.maximumFrequency == rhs.maximumFrequency
            && lhs.frequenciesOutputAcceleration.elementsEqual(rhs.frequenciesOutputAcceleration) { $0.frequency == $1.frequency && $0.output == $1.output }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(minimumFrequency)
        hasher.combine(maximumFrequency)
        for point in frequenciesOutputAcceleration { hasher.combine(point.frequency); hasher.combine(point.output) }
    }

    /// The highest output within the band, reference units.
    public var maximumOutputAcceleration: Double {
        frequenciesOutputAcceleration.map(\.output).max() ?? 0
    }

    /// The output at full drive at `frequency` Hz (linear between points; 0 outside the band).
    public func outputAcceleration(atFrequency frequency: Double) -> Double {
        guard let first = frequenciesOutputAcceleration.first, let last = frequenciesOutputAcceleration.last,
            frequency >= first.frequency, frequency <= last.frequency
        else { return 0 }
        guard let upper = frequenciesOutputAcceleration.firstIndex(where: { $0.frequency >= frequency }), upper > 0 else { return first.output }
        let a = frequenciesOutputAcceleration[upper - 1], b = frequenciesOutputAcceleration[upper]
        return a.output + (b.output - a.output) * (frequency - a.frequency) / (b.frequency - a.frequency)
    }

    /// The frequencies, from the lowest up, where the device reaches at least `minimumOutput`
    /// (reference units) without a gap; nil when it never does.
    public func frequencyRange(minimumOutputAcceleration minimumOutput: Double) -> ClosedRange<Double>? {
        let points = frequenciesOutputAcceleration
        guard let startIndex = points.firstIndex(where: { $0.output >= minimumOutput }) else { return nil }
        func crossing(_ a: (frequency: Double, output: Double), _ b: (frequency: Double, output: Double)) -> Double {
            a.frequency + (b.frequency - a.frequency) * (minimumOutput - a.output) / (b.output - a.output)
        }
        let low = startIndex == 0 ? points[0].frequency : crossing(points[startIndex - 1], points[startIndex])
        var high = points[points.count - 1].frequency
        if let endIndex = points[startIndex...].firstIndex(where: { $0.output < minimumOutput }) {
            high = crossing(points[endIndex - 1], points[endIndex])
        }
        return low...high
    }
}
