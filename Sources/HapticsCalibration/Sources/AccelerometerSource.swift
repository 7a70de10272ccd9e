import Haptics

/// Measures the device with an accelerometer read through IIO sysfs while the engine plays.
///
/// Each stimulus starts on the engine's scheduler thread while the calling thread reads every
/// axis as fast as sysfs answers, with `CLOCK_MONOTONIC` time stamps on the engine's own time
/// base. Gravity is removed per axis (the mean over the capture), and each sample becomes the
/// magnitude of the vibration vector, so the sensor may sit at any angle. Sysfs sampling is slow
/// and uneven (hundreds of hertz over I²C), far below an LRA's frequency; amplitudes are taken
/// from the RMS of many samples at effectively random phases, which does not need the waveform.
public final class AccelerometerSource: VibrationSensorSource {
    /// Accelerometer measurements.
    public let method = CalibrationProfile.Source.accelerometer
    /// The device measured.
    public var device: DeviceDescription { playback.device.description }
    /// The sensor.
    public let sensor: IIOAccelerometer
    /// Silence after each stimulus, seconds (the actuator rings down).
    public var gap = 0.15
    /// Fewest samples a capture must get.
    public var minimumSamples = 20

    let playback: RealtimePlayback

    /// Measures `playback`'s device with `sensor`.
    public init(playback: RealtimePlayback, sensor: IIOAccelerometer) {
        self.playback = playback
        self.sensor = sensor
    }

    /// Plays each stimulus in real time and samples the sensor during it.
    public func capture(_ stimuli: [Stimulus], profile: CalibrationProfile, phase: String, progress: ProgressReporter) throws(CalibrationError)
        -> [AccelerationTrace]
    {
        var traces: [AccelerationTrace] = []
        for (index, stimulus) in stimuli.enumerated() {
            let (start, player) = try playback.start(stimulus.pattern, profile: profile, lead: 0.03)
            let end = start.advanced(bySeconds: stimulus.captureLength)
            var times: [Double] = []
            var readings: [[Double]] = []
            while true {
                let now = HapticInstant.monotonicNow()
                if now >= end { break }
                let values = try sensor.read()
                if now >= start {
                    times.append(now.seconds(since: start))
                    readings.append(values)
                }
            }
            withExtendedLifetime(player) {}
            guard times.count >= minimumSamples else {
                throw .sensor(
                    path: sensor.directory,
                    problem: "only \(times.count) samples in \(format(stimulus.captureLength)) s; the sensor reads too slowly (raise its sampling_frequency)")
            }
            traces.append(AccelerationTrace(times: times, magnitudes: Self.vibration(readings)))
            progress.report(phase: phase, done: index + 1, total: stimuli.count)
            RealtimePlayback.sleep(seconds: gap)
        }
        return traces
    }

    /// The magnitude of each reading's deviation from the per-axis mean (gravity and offsets removed), g.
    static func vibration(_ readings: [[Double]]) -> [Double] {
        guard let axes = readings.first?.count else { return [] }
        let means = (0..<axes).map { axis in readings.map { $0[axis] }.reduce(0, +) / Double(readings.count) }
        return readings.map { reading in
            zip(reading, means).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
        }
    }
}
