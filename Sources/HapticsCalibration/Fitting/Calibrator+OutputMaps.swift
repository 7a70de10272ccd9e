import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// The band measured again at other outputs (``ChannelCalibration/frequencyResponseByOutput``).
///
/// An LRA's spring is not quite linear: where it softens, the resonance falls as the amplitude
/// grows (3 % at the rated drive on the `hbridge-lra-soft` bench), where it stiffens it rises. The
/// frequency sweep measures the map at one drive, so across a narrow band a weak tone at the band's
/// high end, nearer the resonance than the map says, read 7–11 % high, and a strong one at its low
/// end 3 % high. The band is therefore measured again at a low and at the largest steady drive;
/// where either map differs from the main one by more than ``outputMapTolerance``, the profile
/// keeps all three (the main one read at the band's frequencies as the middle), each as outputs
/// relative to the frequency the output curve was measured at, and keyed by the output there.
extension Calibrator {
    /// How far (relative) a map at another output must differ from the main map somewhere in the
    /// band for the profile to keep the maps: above what one tone's reading scatters by (about 1 %).
    public static let outputMapTolerance = 0.03
    /// The output the low map is measured at, reference units, when the sensor's noise allows
    /// (at least ``outputMapNoiseMargin`` times it): the weakest edge tone the verification plays.
    static let lowMapOutput = 0.2
    /// How many times over each map's tones are played (in rounds) and averaged.
    static let outputMapRounds = 3
    /// How far over the sensor's noise floor the low map's output must be.
    static let outputMapNoiseMargin = 6.0
    /// The sharpnesses the maps are measured at (as played frequencies), besides the frequency the
    /// output curve was measured at.
    static let outputMapSharpnesses = [0.0, 0.25, 0.5, 0.75, 1.0]

    /// The maps by output for `channel` of `profile`, measured on `sensor`; empty where the
    /// channel has no band or no measured reference frequency, or where the maps agree with the
    /// main one within ``outputMapTolerance``.
    func outputMaps(
        channel index: Int, profile: CalibrationProfile, measurement: ChannelMeasurement, sensor: any VibrationSensorSource, progress: ProgressReporter
    ) throws(CalibrationError) -> [ChannelCalibration.OutputFrequencyMap] {
        let channel = profile.channels[index]
        let reference = measurement.amplitudeFrequency
        guard let band = channel.usableBand, band.lowerBound > 0, reference > 0, let rise = measurement.timing?.rise,
            let sweptAtReference = measurement.frequencySweep.first(where: { abs($0.input - reference) < 1e-9 })?.output
        else { return [] }
        let device = sensor.device
        var frequencies = Self.outputMapSharpnesses.map {
            device.playedFrequency(band.lowerBound * pow(band.upperBound / band.lowerBound, $0), within: band)
        }
        // The reference, and none within 0.3 % of it: two readings 0.1 Hz apart differ by their
        // scatter alone, a slope the map would then carry.
        frequencies = frequencies.filter { abs($0 / reference - 1) >= 0.003 } + [reference]
        frequencies = Array(Set(frequencies.map { Self.round($0, 1) })).sorted()
        guard frequencies.count >= 2, let referenceIndex = frequencies.firstIndex(of: Self.round(reference, 1)) else { return [] }

        let noise = measurement.noiseFloor
        let middleOutput = Verifier.withoutNoise(sweptAtReference, noise: noise)
        // A map's output is written with four decimals, and the format keeps it within 0.001…100.
        let writable = ProfileFormat.Range.fullScaleOutput
        guard writable.contains(middleOutput) else { return [] }
        let lowTarget = max(Self.lowMapOutput, Self.outputMapNoiseMargin * noise)
        var drives: [Double] = []
        if lowTarget < 0.5 * middleOutput { drives.append(channel.drive(forOutput: lowTarget, at: reference)) }
        if measurement.largestSteadyDrive > measurement.sweepDrive * 1.1 { drives.append(measurement.largestSteadyDrive) }
        drives = drives.filter { $0 > 0 && $0 <= 1 }.sorted()
        guard !drives.isEmpty else { return [] }
        // One batch: every frequency at each drive, the strongest last (an LRA warms as it plays),
        // the whole round ``outputMapRounds`` times over and averaged: one tone's reading scatters
        // by about 2 %, as much as the maps differ by at a band's end.
        let round = drives.flatMap { drive in frequencies.map { (frequency: $0, drive: drive) } }
        let played = try sensor.measureTones(
            Array((0..<Self.outputMapRounds).map { _ in round }.joined()), channel: index, rise: rise, plan: plan, progress: progress)
        let outputs = round.indices.map { tone in
            (0..<Self.outputMapRounds).map { played[$0 * round.count + tone] }.reduce(0, +) / Double(Self.outputMapRounds)
        }
        var maps = [ChannelCalibration.OutputFrequencyMap(
            output: Self.round(middleOutput, 4),
            points: frequencies.map { .init(frequency: $0, relativeOutput: Self.round(channel.relativeOutput(at: $0), 4)) })]
        for offset in drives.indices {
            let readings = outputs[(offset * frequencies.count)..<((offset + 1) * frequencies.count)].map { Verifier.withoutNoise($0, noise: noise) }
            let atReference = readings[readings.startIndex + referenceIndex]
            guard atReference > 3 * noise, writable.contains(atReference) else { continue }
            let scale = channel.relativeOutput(at: reference) / atReference
            maps.append(.init(
                output: Self.round(atReference, 4),
                points: zip(frequencies, readings).map { .init(frequency: $0, relativeOutput: Self.round(min($1 * scale, 4), 4)) }))
        }
        maps.sort { $0.output < $1.output }
        // Outputs too close to tell apart make no map of their own.
        maps = maps.enumerated().filter { $0.offset == 0 || $0.element.output > maps[$0.offset - 1].output * 1.1 }.map(\.element)
        guard maps.count >= 2 else { return [] }
        let differs = maps.contains { map in
            map.points.contains { point in
                let main = channel.relativeOutput(at: point.frequency)
                return main > 0 && abs(point.relativeOutput / main - 1) > Self.outputMapTolerance
            }
        }
        return differs ? maps : []
    }
}
