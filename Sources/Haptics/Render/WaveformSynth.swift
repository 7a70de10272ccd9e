#if canImport(Glibc)
import Glibc
#endif

/// Up to four channels' drives stored inline (no array, so queuing one allocates nothing): the
/// amplitude (0 … 1 of full scale) and frequency (Hz, 0 for the channel's default) of each.
public struct InlineDrives: Sendable, Hashable {
    /// Amplitudes, one per channel (unused channels 0).
    public var amplitude: SIMD4<Float>
    /// Frequencies in Hz, one per channel (0: the channel's default).
    public var frequency: SIMD4<Float>

    /// Every channel off.
    public static let silence = InlineDrives(amplitude: .zero, frequency: .zero)

    /// Drives from explicit vectors.
    public init(amplitude: SIMD4<Float>, frequency: SIMD4<Float>) {
        self.amplitude = amplitude
        self.frequency = frequency
    }

    /// The first four of `drives` (amplitudes clamped to 0 … 1, negative frequencies to 0).
    public init(_ drives: [ChannelDrive]) {
        var amplitude = SIMD4<Float>.zero, frequency = SIMD4<Float>.zero
        for index in 0..<min(drives.count, 4) {
            amplitude[index] = Float(min(max(drives[index].amplitude, 0), 1))
            frequency[index] = Float(max(drives[index].frequency, 0))
        }
        self.init(amplitude: amplitude, frequency: frequency)
    }
}

/// Renders a device's drive frames into samples: one phase-continuous sine oscillator per channel,
/// following the frames the engine sends at the sample they are due.
///
/// The engine decides what plays exactly as for a motor (intensity through the profile into an
/// amplitude, sharpness into a frequency in the actuator's usable band, a transient as a short tap
/// at that frequency); this turns that into what a voice coil needs:
/// - **phase continuity**: a frequency change bends the running sine, never jumps it, so a ramp of
///   sharpness is a chirp with no click;
/// - **bursts from a zero crossing**: an oscillator that was silent starts at phase 0, so a tap is
///   whole cycles rising from rest, the way the Taptic Engine plays a transient at resonance;
/// - **no zipper noise**: an amplitude change is a linear ramp over ``rampFrames`` (1 ms, the
///   engine's finest update), so steps of a curve do not click and a stop fades in a millisecond.
///
/// The synth allocates only in `init`: ``schedule(at:drives:)`` and ``render(into:frames:)`` run
/// on the stream's real-time thread.
public struct WaveformSynth: Sendable {
    /// Frames per second.
    public let rate: Double
    /// Channels (samples per frame).
    public let channelCount: Int
    /// Length of an amplitude ramp, in frames (1 ms, at least one frame).
    public let rampFrames: Int
    /// Frames rendered so far: the index of the next frame ``render(into:frames:)`` writes.
    public private(set) var position: Int64 = 0

    private struct Oscillator: Sendable {
        /// Position in the cycle, 0 ..< 1.
        var phase = 0.0
        var amplitude = 0.0
        var target = 0.0
        var increment = 0.0
        var rampLeft = 0
        /// Cycles per frame.
        var step: Double
        /// Cycles per frame at the channel's default frequency.
        let defaultStep: Double
    }

    private var oscillators: [Oscillator]
    /// Changes to come, a ring in frame order.
    private var pendingFrames: [Int64]
    private var pendingDrives: [InlineDrives]
    private var pendingStart = 0
    private var pendingCount = 0

    /// A synth at `rate` frames per second for `channels` (at most four), holding up to `capacity`
    /// scheduled changes (a later change that finds the queue full replaces the last one). A
    /// channel's default frequency (a drive of 0 Hz) is its resonance, else its nominal frequency,
    /// else the middle of its range, else 150 Hz.
    public init(rate: Int, channels: [ChannelDescription], capacity: Int = 256) {
        precondition(rate > 0 && (1...4).contains(channels.count), "a synth needs a positive rate and 1…4 channels")
        self.rate = Double(rate)
        channelCount = channels.count
        rampFrames = max(rate / 1000, 1)
        oscillators = channels.map { channel in
            let fallback = channel.frequencyRange.map { ($0.lowerBound * $0.upperBound).squareRoot() } ?? 150
            let frequency = channel.resonantFrequency ?? channel.nominalFrequency ?? fallback
            return Oscillator(step: frequency / Double(rate), defaultStep: frequency / Double(rate))
        }
        pendingFrames = Array(repeating: 0, count: max(capacity, 1))
        pendingDrives = Array(repeating: .silence, count: max(capacity, 1))
    }

    /// Whether every channel is silent and nothing is scheduled.
    public var isSilent: Bool {
        pendingCount == 0 && oscillators.allSatisfy { $0.amplitude == 0 && $0.target == 0 }
    }

    /// Schedules `drives` to take effect at frame `frame` (a frame already rendered means the next
    /// one). Changes must come in time order; one earlier than the last scheduled is moved to it.
    public mutating func schedule(at frame: Int64, drives: InlineDrives) {
        var frame = max(frame, position)
        let capacity = pendingFrames.count
        if pendingCount > 0 {
            let last = (pendingStart + pendingCount - 1) % capacity
            frame = max(frame, pendingFrames[last])
            if pendingFrames[last] == frame || pendingCount == capacity {
                // The same frame, or no room: the later drives win.
                pendingDrives[last] = drives
                return
            }
        }
        let slot = (pendingStart + pendingCount) % capacity
        pendingFrames[slot] = frame
        pendingDrives[slot] = drives
        pendingCount += 1
    }

    /// Drops every scheduled change and fades every channel to silence over ``rampFrames``.
    public mutating func silence() {
        pendingCount = 0
        apply(.silence)
    }

    /// Drops every scheduled change and sets every channel to silence at once, phase 0: after the
    /// device dropped what it had queued, the next sample starts from rest anyway.
    public mutating func reset() {
        pendingCount = 0
        for index in oscillators.indices {
            oscillators[index].amplitude = 0
            oscillators[index].target = 0
            oscillators[index].rampLeft = 0
            oscillators[index].phase = 0
        }
    }

    /// Renders the next `frames` frames, interleaved, into `buffer` (at least `frames ×`
    /// ``channelCount`` samples), applying each scheduled change at its frame.
    public mutating func render(into buffer: UnsafeMutableBufferPointer<Float>, frames: Int) {
        precondition(buffer.count >= frames * channelCount, "the buffer holds \(buffer.count) samples, \(frames * channelCount) asked")
        var frame = 0
        while frame < frames {
            // Apply what is due now, then render up to the next change in one run.
            while pendingCount > 0, pendingFrames[pendingStart] <= position + Int64(frame) {
                apply(pendingDrives[pendingStart])
                pendingStart = (pendingStart + 1) % pendingFrames.count
                pendingCount -= 1
            }
            var end = frames
            if pendingCount > 0 { end = min(end, Int(pendingFrames[pendingStart] - position)) }
            for channel in 0..<channelCount {
                renderRun(channel: channel, from: frame, to: end, into: buffer)
            }
            frame = end
        }
        position += Int64(frames)
    }

    private mutating func renderRun(channel: Int, from start: Int, to end: Int, into buffer: UnsafeMutableBufferPointer<Float>) {
        var oscillator = oscillators[channel]
        var index = start * channelCount + channel
        for _ in start..<end {
            if oscillator.rampLeft > 0 {
                oscillator.rampLeft -= 1
                oscillator.amplitude = oscillator.rampLeft == 0 ? oscillator.target : oscillator.amplitude + oscillator.increment
            }
            buffer[index] = oscillator.amplitude == 0 ? 0 : Float(oscillator.amplitude * sin(2 * Double.pi * oscillator.phase))
            oscillator.phase += oscillator.step
            if oscillator.phase >= 1 { oscillator.phase -= 1 }
            index += channelCount
        }
        oscillators[channel] = oscillator
    }

    private mutating func apply(_ drives: InlineDrives) {
        for channel in 0..<channelCount {
            // NaN is silence, and a frequency that is no positive finite number the channel's default.
            let given = drives.amplitude[channel]
            let amplitude = given.isNaN ? 0 : Double(min(max(given, 0), 1))
            let frequency = Double(drives.frequency[channel])
            // Below half the rate (a higher one would alias into a low one).
            oscillators[channel].step = frequency > 0 && frequency.isFinite ? min(frequency, rate * 0.45) / rate : oscillators[channel].defaultStep
            guard amplitude != oscillators[channel].target else { continue }
            // A silent oscillator starts its burst at a zero crossing, rising.
            if oscillators[channel].amplitude == 0, oscillators[channel].rampLeft == 0 { oscillators[channel].phase = 0 }
            oscillators[channel].target = amplitude
            oscillators[channel].rampLeft = rampFrames
            oscillators[channel].increment = (amplitude - oscillators[channel].amplitude) / Double(rampFrames)
        }
    }
}
