import Haptics
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a live run did, and how late the haptics followed the audio.
public struct LiveHapticsReport: Sendable, Hashable {
    /// Blocks of audio read.
    public var blocks = 0
    /// Seconds of audio read.
    public var seconds = 0.0
    /// Overruns the capture recovered from (audio lost because a read came late).
    public var overruns = 0
    /// Onsets found.
    public var onsets = 0
    /// Blocks whose drive changed: sent to the engine.
    public var updates = 0
    /// Each update's latency, counted per 10 µs up to 100 ms (the last bin holds any later):
    /// seconds from the oldest sample of its block entering the source (the latest a sound in the
    /// block can be felt: a period, plus the work) to the engine's pass that sent its drive to the
    /// device (the pass runs before the update returns); in ``LiveHaptics/Mode/signal``, to when
    /// the block is meant to play (``LiveHaptics/signalDelay``, or later when it came late), before
    /// the device's own stream latency. A fixed 40 kB however long the run (a service's listener
    /// may run for days).
    private var histogram = [UInt32](repeating: 0, count: LiveHapticsReport.bins + 1)
    /// The longest latency of the run, seconds.
    public private(set) var maximumLatency: Double?

    private static let bins = 10_000
    private static let binWidth = 0.000_01

    /// Counts one update's latency, seconds.
    public mutating func record(latency seconds: Double) {
        guard seconds.isFinite else { return }
        histogram[min(Self.bins, Int(max(seconds, 0) / Self.binWidth))] &+= 1
        maximumLatency = max(maximumLatency ?? seconds, seconds)
    }

    /// Why the run ended: nil when asked to stop or its time was up, else the failure.
    public var failure: String?

    /// An empty report.
    public init() {}

    /// The latency below which `fraction` (0 … 1) of the updates fell, seconds, to the 10 µs bin's
    /// upper edge (1: the latest exactly); nil without updates.
    public func latency(percentile fraction: Double) -> Double? {
        guard let maximumLatency else { return nil }
        guard fraction < 1 else { return maximumLatency }
        let total = histogram.reduce(0) { $0 + Int($1) }
        let rank = Int((Double(total - 1) * max(fraction, 0)).rounded())
        var seen = 0
        for (bin, count) in histogram.enumerated() {
            seen += Int(count)
            if seen > rank { return min(Double(bin + 1) * Self.binWidth, maximumLatency) }
        }
        return maximumLatency
    }
}

/// Live audio driving one device through an engine: reads an ``AudioCapture`` a period at a time
/// and follows it with a ``LiveAudioFollower``.
///
/// - A motor (``Mode/frames``) plays the follower's intensity and sharpness as the controls of a
///   continuous event, so the device's calibration, its power model and every other player on the
///   engine apply as to any pattern (the engine mixes them): amplitude and frequency frames.
/// - A waveform device (``Mode/signal``: a voice coil, the DualSense's coils, a transducer on a
///   sound card) plays the band-passed signal itself, at the automatic gain: each block goes into a
///   ``LiveAudioRing`` that a looping `AudioCustom` event plays, ``signalDelay`` behind the
///   capture. Through hapticsd (an engine that plays through the service) a ring cannot travel,
///   and a waveform device gets frames like a motor.
///
/// ``run(for:)`` blocks until ``stop()``, the time given, or a failure of the capture or the
/// engine; the device is silent when it returns.
public final class LiveHaptics: Sendable {
    /// The capture it reads.
    public let capture: AudioCapture
    /// The engine it plays on.
    public let engine: HapticEngine
    /// The band the follower listens to, Hz.
    public let band: ClosedRange<Double>
    /// The options.
    public let options: LiveHapticsOptions
    /// How the device is driven.
    public let mode: Mode
    private let stopping = Atomic<Bool>(false)

    /// How a run drives its device.
    public enum Mode: String, Sendable, Hashable {
        /// Intensity and sharpness as frames (motors; any device through hapticsd).
        case frames
        /// The band-passed audio itself (waveform devices).
        case signal
    }

    /// In ``Mode/signal``: how far behind its capture a sample is meant to play, seconds: two
    /// capture periods and 2 ms, so a block is in the ring before the device's stream renders it.
    public var signalDelay: Double { 2 * capture.format.period + 0.002 }

    /// The band a device renders: its calibrated usable band where its profile has one, else the
    /// bass a motor renders (30 … 250 Hz).
    public static func band(for engine: HapticEngine, deviceID: String) -> ClosedRange<Double> {
        if let profile = engine.frequencyProfile(forDevice: deviceID), profile.minimumFrequency < profile.maximumFrequency {
            return profile.minimumFrequency...profile.maximumFrequency
        }
        return 30...250
    }

    /// A run of `capture` on `engine`, listening to `options.band` or else the band of the engine's
    /// first device.
    /// - Throws: ``AudioToHapticsError``: an option out of range, or a capture rate the follower cannot take.
    public init(capture: AudioCapture, engine: HapticEngine, options: LiveHapticsOptions = LiveHapticsOptions()) throws(AudioToHapticsError) {
        self.capture = capture
        self.engine = engine
        self.options = options
        let device = engine.devices.first?.description.id ?? ""
        var band = options.band ?? Self.band(for: engine, deviceID: device)
        // A band past the capture's Nyquist frequency ends below it.
        let nyquist = Double(capture.format.rate) / 2
        if band.upperBound >= nyquist { band = min(band.lowerBound, nyquist * 0.45)...(nyquist * 0.9) }
        self.band = band
        mode = !engine.playsThroughService && engine.devices.first?.description.sampleStream != nil ? .signal : .frames
        _ = try LiveAudioFollower(rate: Double(capture.format.rate), band: band, options: options)
    }

    /// Ends a run from any thread (within a period, at most 20 ms more).
    public func stop() { stopping.store(true, ordering: .relaxed) }

    /// Listens until ``stop()``, `duration` seconds (nil: no limit) or a failure, then silences the
    /// device; returns what happened.
    public func run(for duration: Double? = nil) -> LiveHapticsReport {
        var report = LiveHapticsReport()
        let format = capture.format
        var follower: LiveAudioFollower
        do throws(AudioToHapticsError) {
            follower = try LiveAudioFollower(rate: Double(format.rate), band: band, options: options)
        } catch {
            report.failure = "\(error)"
            return report
        }
        let signal = mode == .signal
        let ring = signal ? LiveAudioRing(seconds: 2, rate: Double(format.rate)) : nil
        let clipName = "live-audio-\(UInt(bitPattern: ObjectIdentifier(self).hashValue))"
        var clipID: AudioResourceID?
        let player: any HapticAdvancedPatternPlayer
        do {
            let pattern: HapticPattern
            if let ring {
                // The ring, looping for as long as a pattern lasts, at the options' intensity.
                clipID = try engine.registerAudioResource(AudioClip(live: ring, name: clipName), named: clipName)
                pattern = try HapticPattern(events: [
                    HapticEvent(
                        eventType: .audioCustom, parameters: [HapticEventParameter(parameterID: .audioVolume, value: options.intensity)],
                        relativeTime: 0, duration: HapticPattern.maximumTime, waveformPath: clipName, waveformLoopEnabled: true)
                ])
            } else {
                // One continuous event, looped: the controls shape it (intensity × control, sharpness + control).
                pattern = try HapticPattern(events: [
                    HapticEvent(
                        eventType: .hapticContinuous,
                        parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1), HapticEventParameter(parameterID: .hapticSharpness, value: 0)],
                        relativeTime: 0, duration: HapticEvent.maximumContinuousDuration)
                ])
            }
            player = try engine.makeAdvancedPlayer(with: pattern)
            if !signal {
                player.loopEnabled = true
                player.loopEnd = HapticEvent.maximumContinuousDuration
                try player.sendParameters([HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0, relativeTime: 0)], atTime: 0)
            }
            try player.start(atTime: 0)
        } catch {
            if let clipID { try? engine.unregisterAudioResource(clipID) }
            report.failure = "\(error)"
            return report
        }
        defer {
            try? player.stop(atTime: 0)
            if let clipID { try? engine.unregisterAudioResource(clipID) }
        }
        // Where the ring's frame 0 plays: the voice's start, on the engine's (monotonic) clock.
        let origin = engine.currentTime - player.currentTime
        let rate = Double(format.rate)
        var written: Int?
        var samples: [Float] = []
        var filtered = [Float](repeating: 0, count: signal ? max(format.bufferFrames, format.periodFrames) : 0)
        var sent: (intensity: Double, sharpness: Double) = (-1, -1)
        let end = duration.map { HapticInstant.monotonicNow().advanced(bySeconds: $0) }
        while !stopping.load(ordering: .relaxed) {
            if let end, HapticInstant.monotonicNow() >= end { break }
            let read: CapturedAudio
            do throws(AudioCaptureError) {
                read = try capture.read(into: &samples, timeout: 0.02)
            } catch {
                report.failure = "\(error)"
                break
            }
            report.overruns += read.overruns
            guard read.frames > 0 else { continue }
            report.blocks += 1
            report.seconds += Double(read.frames) / rate
            if let ring {
                if filtered.count < read.frames { filtered = [Float](repeating: 0, count: read.frames) }
                let level = samples.withUnsafeBufferPointer { input in
                    filtered.withUnsafeMutableBufferPointer { output in follower.process(input, frames: read.frames, channels: format.channels, filtered: output) }
                }
                if level.onset { report.onsets += 1 }
                // The block goes where its time puts it, a delay on; blocks that follow on stay
                // contiguous (the capture's clock and the monotonic one drift), unless 5 ms apart.
                var position = Int(((read.time.seconds + signalDelay - origin) * rate).rounded())
                if let written, abs(position - written) < Int(rate * 0.005) { position = written }
                filtered.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[0..<read.frames]), at: position) }
                written = position + read.frames
                // Felt when due, or now if it came late (its start then plays at once, if at all).
                let now = HapticInstant.monotonicNow()
                report.updates += 1
                report.record(latency: max(now.seconds(since: read.time), signalDelay))
                continue
            }
            let level = samples.withUnsafeBufferPointer { follower.process($0, frames: read.frames, channels: format.channels) }
            if level.onset { report.onsets += 1 }
            // Controls change only when the drive would: a step of 1/256 in intensity, 1/100 in sharpness.
            let intensity = (level.intensity * 256).rounded() / 256
            let sharpness = (level.sharpness * 100).rounded() / 100
            guard intensity != sent.intensity || (intensity > 0 && sharpness != sent.sharpness) else { continue }
            sent = (intensity, sharpness)
            do {
                try player.sendParameters(
                    [
                        HapticDynamicParameter(parameterID: .hapticIntensityControl, value: intensity, relativeTime: 0),
                        HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: sharpness, relativeTime: 0),
                    ], atTime: 0)
            } catch {
                report.failure = "\(error)"
                break
            }
            report.updates += 1
            report.record(latency: HapticInstant.monotonicNow().seconds(since: read.time))
        }
        return report
    }
}
