import Haptics
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Measures the device with an accelerometer read through IIO sysfs while the engine plays.
///
/// **Baseline.** Before anything is played, the sensor is read for ``baselineDuration`` seconds:
/// the mean of each axis (gravity and offsets) and the noise power around it. Everything after is
/// measured against it.
///
/// **Settling.** Before each stimulus the sensor must read quiet: over the last ``quietWindow``
/// seconds, no more vibration than the noise measured at the start (with the margin a window of
/// that many samples needs), and at least the backend's rest time since the last drive (so each
/// stimulus gets its own kick and no cut carries over). An actuator still coasting from the last
/// stimulus is waited for; one that never comes to rest within ``settleTimeout`` is an error.
///
/// **Sampling.** Each stimulus starts on the engine's scheduler thread while a sampling thread
/// reads every axis, paced to the sensor's `sampling_frequency` (twice per conversion; a conversion
/// read twice is kept once), with `CLOCK_MONOTONIC` stamps on the engine's time base. Each sample is the
/// magnitude of the deviation from the axes' rest values just before the stimulus, so the sensor
/// may sit at any angle. On a device that takes samples (a voice coil on a sound card), the capture
/// starts when the stimulus is felt, the stream's ``SampleStreamFormat/outputDelay`` after it was
/// meant (the buffer ahead of the card), and lasts as long. A capture with a gap of more than ``longestGap`` seconds between new
/// readings (the reader or the sensor was held up) is played again, after a pause that grows each
/// time (0.25 s, 0.5 s, …), up to ``captureAttempts`` times in all: a busy moment passes, a sensor
/// too slow for the capture does not.
///
/// Sysfs sampling is slow and uneven (hundreds of hertz over I²C), far below an LRA's frequency;
/// amplitudes come from the RMS of many samples at effectively random phases, which does not
/// need the waveform, and short events are played ``repetitions`` times, and again while their
/// plays leave the peak uncertain (``targetStandardError``), and pooled.
public final class AccelerometerSource: VibrationSensorSource, @unchecked Sendable {
    // The mutable state (`baseline`, `lastDriveEnd`, the settings) belongs to the thread calling
    // `capture`; the sampling thread it starts only runs while that thread waits for it.

    /// Accelerometer measurements.
    public let method = CalibrationProfile.Source.accelerometer
    /// The device measured.
    public var device: DeviceDescription { playback.device.description }
    /// The sensor.
    public let sensor: IIOAccelerometer
    /// What the backend does to a drive (from the device's description).
    public var envelope: DriveEnvelope?
    /// Seconds of quiet readings at the start that give the baseline.
    public var baselineDuration = 0.5
    /// Seconds of readings that must be quiet before a stimulus.
    public var quietWindow = 0.05
    /// Longest wait for quiet before a stimulus, seconds.
    public var settleTimeout = 6.0
    /// Fewest samples a capture must get.
    public var minimumSamples = 20
    /// The longest gap between readings a capture may have, seconds.
    public var longestGap = 0.02
    /// How many times a capture is played before a gap in its readings is an error.
    public static let captureAttempts = 5
    /// How many times short events are played and pooled: ``linearRepetitions`` once a steady tone
    /// has shown a vibration along one axis, else ``turningRepetitions``.
    public var repetitions: Int { (vibrationScatter ?? 0) > 0.4 ? linearRepetitions : turningRepetitions }
    /// Repetitions for a vibration along one axis (an LRA): its magnitude swings with the phase
    /// each reading happens to meet, so each reading says little (a 17 ms tap read at 800 Hz gives
    /// 14 readings); those still uncertain after these are played again (``targetStandardError``).
    public var linearRepetitions = 6
    /// Repetitions for a vibration that turns (an ERM's rotating vector): its magnitude holds still.
    public var turningRepetitions = 3
    /// A short event's peak is measured to within this fraction (one standard error of the mean of
    /// its plays): one more uncertain is played again. One play of an LRA's tap peaks 5-12 % off the
    /// mean of many, mostly from the phases its few readings meet.
    public var targetStandardError = 0.025
    /// The most times one short event is played for ``targetStandardError``.
    public var maximumPlays = 30
    /// How much the squared magnitude of a steady vibration scatters from reading to reading
    /// (standard deviation over mean): about 0.7 for a sinusoid along one axis, near 0 for a
    /// turning vector; nil until a steady tone well above the noise was measured.
    public private(set) var vibrationScatter: Double?

    let playback: RealtimePlayback
    /// The rest values and noise, once measured.
    public private(set) var baseline: SensorBaseline?
    private var lastDriveEnd: HapticInstant?

    /// Measures `playback`'s device with `sensor`.
    public init(playback: RealtimePlayback, sensor: IIOAccelerometer, envelope: DriveEnvelope? = nil) {
        self.playback = playback
        self.sensor = sensor
        self.envelope = envelope ?? DriveEnvelope.of(playback.device.description)
    }

    public func noiseAmplitude() throws(CalibrationError) -> Double {
        try measuredBaseline().noiseAmplitude
    }

    /// The baseline, measured on first use.
    public func measuredBaseline() throws(CalibrationError) -> SensorBaseline {
        if let baseline { return baseline }
        let readings = try onSamplingThread { () throws(CalibrationError) in try self.record(for: self.baselineDuration) }
        guard readings.count >= minimumSamples else {
            throw .sensor(
                path: sensor.directory,
                problem: "only \(readings.count) readings in \(format(baselineDuration)) s; the sensor reads too slowly (raise its sampling_frequency)")
        }
        var made = SensorBaseline(readings, duration: baselineDuration)
        // A sensor too quiet to show its own noise still rounds to whole counts.
        let count = sensor.axes.map { $0.scale / IIOAccelerometer.standardGravity }
        made.noisePower = max(made.noisePower, count.map { $0 * $0 }.reduce(0, +))
        baseline = made
        return made
    }

    /// Plays each stimulus in real time once the actuator is quiet, and samples the sensor during it.
    public func capture(_ stimuli: [Stimulus], profile: CalibrationProfile, phase: String, progress: ProgressReporter) throws(CalibrationError)
        -> [AccelerationTrace]
    {
        let baseline = try measuredBaseline()
        return try onSamplingThread { () throws(CalibrationError) in
            var traces: [AccelerationTrace] = []
            for (index, stimulus) in stimuli.enumerated() {
                traces.append(try self.captureOne(stimulus, profile: profile, baseline: baseline))
                progress.report(phase: phase, done: index + 1, total: stimuli.count)
            }
            return traces
        }
    }

    private func captureOne(_ stimulus: Stimulus, profile: CalibrationProfile, baseline: SensorBaseline) throws(CalibrationError) -> AccelerationTrace {
        var attempt = 0
        while true {
            attempt += 1
            let rest = try waitForQuiet(baseline)
            let (played, player) = try playback.start(stimulus.pattern, profile: profile, lead: 0.02)
            // A device that takes samples is felt its stream's delay after the frames were meant.
            let start = played.advanced(bySeconds: device.sampleStream?.outputDelay ?? 0)
            let end = start.advanced(bySeconds: stimulus.captureLength)
            var times: [Double] = [], readings: [SIMD3<Double>] = []
            // The reader's own gaps (it was held up), whether or not the reading changed.
            var lastRead = start, gap = 0.0, reads = 0
            try sample(until: end) { now, values in
                guard now >= start else { return }
                gap = max(gap, now.seconds(since: lastRead))
                lastRead = now
                reads += 1
                // The same conversion read twice says nothing new; a new conversion that reads the
                // same (a quiet sensor at rest) does, or the trace would thin out where nothing moves.
                let sinceKept = times.last.map { now.seconds(since: start) - $0 } ?? .infinity
                if let conversion = sensor.samplingFrequency.map({ 1 / $0 }), values == readings.last, sinceKept < 0.9 * conversion {
                    return
                }
                times.append(now.seconds(since: start))
                readings.append(values)
            }
            gap = max(gap, end.seconds(since: lastRead))
            withExtendedLifetime(player) {}
            lastDriveEnd = end
            let trace = AccelerationTrace(times: times, magnitudes: readings.map { Self.magnitude($0 - rest) })
            if reads >= minimumSamples, gap <= max(longestGap, 4 * baseline.interval) {
                noteScatter(trace, stimulus: stimulus, baseline: baseline)
                return trace
            }
            guard attempt < Self.captureAttempts else {
                throw .sensor(
                    path: sensor.directory,
                    problem: "only \(reads) readings in \(format(stimulus.captureLength)) s, with a gap of \(format(gap * 1000)) ms, "
                        + "\(attempt) times in a row; the sensor reads too slowly or the system is too busy (raise its sampling_frequency, or stop other work)")
            }
            // Whatever held the reader up (a burst of other work, a busy host) may still be going on:
            // give it a moment more before each new attempt.
            RealtimePlayback.sleep(until: HapticInstant.monotonicNow().advanced(bySeconds: 0.25 * Double(attempt)))
        }
    }

    /// Updates ``vibrationScatter`` from the steady end of a tone well above the noise.
    private func noteScatter(_ trace: AccelerationTrace, stimulus: Stimulus, baseline: SensorBaseline) {
        guard vibrationScatter == nil, case .settled(let end, let window) = stimulus.measure else { return }
        let powers = trace.powers(from: end - window, to: end).map(\.power)
        guard powers.count >= 40 else { return }
        let mean = powers.reduce(0, +) / Double(powers.count)
        guard mean > 25 * baseline.noisePower else { return }
        let variance = powers.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(powers.count)
        vibrationScatter = variance.squareRoot() / mean
    }

    /// Reads until the last ``quietWindow`` is quiet and the backend's rest time has passed since
    /// the last drive; returns the rest values (per-axis means) over that window.
    private func waitForQuiet(_ baseline: SensorBaseline) throws(CalibrationError) -> SIMD3<Double> {
        let began = HapticInstant.monotonicNow()
        let restUntil = lastDriveEnd?.advanced(bySeconds: envelope?.restDuration ?? 0) ?? began
        var window: [(time: HapticInstant, values: SIMD3<Double>)] = []
        var result: SIMD3<Double>?
        var level = 0.0
        try sampleWhile(until: began.advanced(bySeconds: settleTimeout)) { now, values in
            window.append((now, values))
            let cutoff = now.advanced(bySeconds: -quietWindow)
            if let first = window.firstIndex(where: { $0.time >= cutoff }), first > 0 { window.removeFirst(first) }
            guard now >= restUntil, now.seconds(since: began) >= quietWindow, window.count >= 8 else { return true }
            let powers = window.map { Self.squared($0.values - baseline.rest) }
            level = powers.reduce(0, +) / Double(powers.count)
            // Noise power in a window of n readings of three axes scatters by about √(2/3n).
            let margin = 1 + 5 * (2 / (3 * Double(window.count))).squareRoot()
            if level <= baseline.noisePower * margin {
                let sum = window.reduce(SIMD3<Double>.zero) { $0 + $1.values }
                result = sum / Double(window.count)
                return false
            }
            return true
        }
        guard let result else {
            throw .notSettling(
                "the sensor still read \(format((2 * level).squareRoot())) g of vibration \(format(settleTimeout)) s after the last drive "
                    + "(at rest it reads \(format(baseline.noiseAmplitude)) g); is the actuator still driven, or the sensor on something that shakes?")
        }
        return result
    }

    /// Reads for `duration` seconds.
    private func record(for duration: Double) throws(CalibrationError) -> [SIMD3<Double>] {
        var readings: [SIMD3<Double>] = []
        try sample(until: HapticInstant.monotonicNow().advanced(bySeconds: duration)) { _, values in readings.append(values) }
        return readings
    }

    private func sample(until end: HapticInstant, _ body: (HapticInstant, SIMD3<Double>) -> Void) throws(CalibrationError) {
        try sampleWhile(until: end) { now, values in
            body(now, values)
            return true
        }
    }

    /// Reads the sensor until `end` or until `body` returns false, paced to twice its conversion
    /// rate when the driver states it, else every millisecond: a sysfs read of a sensor on I²C or SPI
    /// takes about that long, and this thread runs at real-time priority, so polling faster would
    /// only take the CPU from the threads that play (on a one-core board, all of them).
    private func sampleWhile(until end: HapticInstant, _ body: (HapticInstant, SIMD3<Double>) -> Bool) throws(CalibrationError) {
        let pace = sensor.samplingFrequency.map { 0.5 / $0 } ?? 0.001
        while true {
            let now = HapticInstant.monotonicNow()
            if now >= end { return }
            let values = try sensor.read()
            let reading = SIMD3(values[0], values.count > 1 ? values[1] : 0, values.count > 2 ? values[2] : 0)
            if !body(now, reading) { return }
            let next = now.advanced(bySeconds: pace)
            if next < end { RealtimePlayback.sleep(until: next) }
        }
    }

    /// Runs `work` on a thread of its own at real-time priority (where the system allows it), so
    /// the readings keep their pace on a busy machine; the calling thread waits for it.
    private func onSamplingThread<T: Sendable>(_ work: @escaping @Sendable () throws(CalibrationError) -> T) throws(CalibrationError) -> T {
        let outcome = Mutex<Result<T, CalibrationError>?>(nil)
        let thread: PosixThread
        do {
            thread = try PosixThread.start(name: "haptics-sample") {
                PosixThread.requestRealtimeForCurrentThread(priority: 5)
                let result: Result<T, CalibrationError>
                do throws(CalibrationError) { result = .success(try work()) } catch { result = .failure(error) }
                outcome.withLock { $0 = result }
            }
        } catch {
            return try work()
        }
        thread.join()
        return try outcome.withLock { $0! }.get()
    }

    static func magnitude(_ vector: SIMD3<Double>) -> Double { squared(vector).squareRoot() }

    static func squared(_ vector: SIMD3<Double>) -> Double { vector.x * vector.x + vector.y * vector.y + vector.z * vector.z }
}

/// The sensor at rest: each axis's value and the noise around it.
public struct SensorBaseline: Sendable, Hashable {
    /// Per-axis rest values (gravity and offsets), g.
    public var rest: SIMD3<Double>
    /// Mean squared deviation from them, g².
    public var noisePower: Double
    /// Readings per second while at rest, Hz.
    public var readingRate: Double
    /// The median interval between readings, seconds.
    public var interval: Double

    /// The baseline of `readings` taken over `duration` seconds.
    init(_ readings: [SIMD3<Double>], duration: Double) {
        let rest = readings.reduce(SIMD3<Double>.zero, +) / Double(max(readings.count, 1))
        self.rest = rest
        noisePower = readings.map { AccelerometerSource.squared($0 - rest) }.reduce(0, +) / Double(max(readings.count, 1))
        readingRate = Double(readings.count) / duration
        interval = 1 / max(readingRate, 1)
    }

    /// The amplitude the noise alone measures as, g: √(2 × noise power).
    public var noiseAmplitude: Double { (2 * noisePower).squareRoot() }
}
