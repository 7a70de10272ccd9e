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

/// Up to ``capacity`` clip voices of one scheduled change, stored inline (queuing one allocates
/// nothing), each with the synth frame at which its clip's first frame plays.
public struct InlineClips: Sendable {
    /// The most clips one change carries; further ones are left out.
    public static let capacity = 4
    private var voices: (ClipVoice?, ClipVoice?, ClipVoice?, ClipVoice?) = (nil, nil, nil, nil)
    private var starts = SIMD4<Double>.zero
    /// How many it holds.
    public private(set) var count = 0

    /// None.
    public static let none = InlineClips()

    /// Adds `voice`, whose clip's first frame plays at synth frame `startFrame` (fractional); false
    /// when it is full.
    @discardableResult
    public mutating func append(_ voice: ClipVoice, startFrame: Double) -> Bool {
        guard count < Self.capacity else { return false }
        switch count {
        case 0: voices.0 = voice
        case 1: voices.1 = voice
        case 2: voices.2 = voice
        default: voices.3 = voice
        }
        starts[count] = startFrame
        count += 1
        return true
    }

    /// Voice `index` (below ``count``) and its start frame.
    public subscript(index: Int) -> (voice: ClipVoice, startFrame: Double) {
        let voice = switch index {
        case 0: voices.0
        case 1: voices.1
        case 2: voices.2
        default: voices.3
        }
        return (voice!, starts[index])
    }
}

/// Renders a device's drive frames into samples: one phase-continuous sine oscillator per channel,
/// following the frames the engine sends at the sample they are due, and the clips the frames
/// carry (AHAP `AudioCustom`), mixed in.
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
/// Clips play at their own rate converted to the device's (linear interpolation; a voice's speed
/// changes the pitch with it), from the frame their voice says, each sample times the voice's
/// gain. A voice that appears mid-clip (after a seek or a resume) fades in over ``rampFrames`` and
/// one that goes fades out over as long, so neither clicks; the mix is held within ±1.
///
/// The synth allocates only in `init`: ``schedule(at:drives:clips:)`` and ``render(into:frames:)``
/// run on the stream's real-time thread.
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

    /// A clip playing (or fading out), in a slot of ``clipSlots``.
    private struct ClipPlayback: Sendable {
        var voice: ClipVoice
        /// The synth frame at which the clip's first frame plays.
        var startFrame: Double
        /// Clip frames per synth frame.
        var step: Double
        /// Clip frames it plays for.
        var lengthFrames: Double
        var gain: Float
        /// The fade in frames of a ramp, 0 … ``rampFrames`` (counted, so it ends exactly), and its
        /// change per frame: 1 fading in, -1 fading out, 0 steady.
        var level: Int
        var fade: Int
        /// Whether the last change carried it.
        var carried: Bool
    }

    private var oscillators: [Oscillator]
    /// Clips playing: twice a change's capacity, so those a change replaces can fade out.
    private var clipSlots: [ClipPlayback?]
    private var playingClips = 0
    /// Changes to come, a ring in frame order.
    private var pendingFrames: [Int64]
    private var pendingDrives: [InlineDrives]
    private var pendingClips: [InlineClips]
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
        pendingClips = Array(repeating: .none, count: max(capacity, 1))
        clipSlots = Array(repeating: nil, count: 2 * InlineClips.capacity)
    }

    /// Whether every channel is silent, no clip plays and nothing is scheduled.
    public var isSilent: Bool {
        pendingCount == 0 && playingClips == 0 && oscillators.allSatisfy { $0.amplitude == 0 && $0.target == 0 }
    }

    /// Schedules `drives` and `clips` (the whole set of clips sounding from then on) to take effect
    /// at frame `frame` (a frame already rendered means the next one). Changes must come in time
    /// order; one earlier than the last scheduled is moved to it.
    public mutating func schedule(at frame: Int64, drives: InlineDrives, clips: InlineClips = .none) {
        var frame = max(frame, position)
        let capacity = pendingFrames.count
        if pendingCount > 0 {
            let last = (pendingStart + pendingCount - 1) % capacity
            frame = max(frame, pendingFrames[last])
            if pendingFrames[last] == frame || pendingCount == capacity {
                // The same frame, or no room: the later drives win.
                pendingDrives[last] = drives
                pendingClips[last] = clips
                return
            }
        }
        let slot = (pendingStart + pendingCount) % capacity
        pendingFrames[slot] = frame
        pendingDrives[slot] = drives
        pendingClips[slot] = clips
        pendingCount += 1
    }

    /// Drops every scheduled change and fades every channel and clip to silence over ``rampFrames``.
    public mutating func silence() {
        pendingCount = 0
        apply(.silence)
        apply(.none, at: position)
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
        for index in clipSlots.indices { clipSlots[index] = nil }
        playingClips = 0
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
                apply(pendingClips[pendingStart], at: position + Int64(frame))
                pendingClips[pendingStart] = .none
                pendingStart = (pendingStart + 1) % pendingFrames.count
                pendingCount -= 1
            }
            var end = frames
            if pendingCount > 0 { end = min(end, Int(pendingFrames[pendingStart] - position)) }
            for channel in 0..<channelCount {
                renderRun(channel: channel, from: frame, to: end, into: buffer)
            }
            if playingClips > 0 { renderClips(from: frame, to: end, into: buffer) }
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

    /// Mixes every playing clip into frames `start ..< end` of `buffer`, then holds them within ±1.
    private mutating func renderClips(from start: Int, to end: Int, into buffer: UnsafeMutableBufferPointer<Float>) {
        let ramp = Float(rampFrames)
        for index in clipSlots.indices {
            guard var playing = clipSlots[index] else { continue }
            let clip = playing.voice.clip
            let clipFrames = clip.frameCount
            let clipChannels = clip.channelCount
            let loops = playing.voice.loops
            var ended = false
            clip.storage.withSamples { samples in
                for frame in start..<end {
                    var at = (Double(position + Int64(frame)) - playing.startFrame) * playing.step
                    if at < 0 { continue }  // Not begun yet.
                    if at >= playing.lengthFrames || (!loops && at >= Double(clipFrames)) {
                        ended = true
                        break
                    }
                    if loops { at = at.truncatingRemainder(dividingBy: Double(clipFrames)) }
                    // A fade steps before the sample, as an oscillator's ramp does.
                    if playing.fade != 0 {
                        playing.level += playing.fade
                        if playing.level <= 0 || playing.level >= rampFrames {
                            playing.level = min(max(playing.level, 0), rampFrames)
                            playing.fade = 0
                        }
                    }
                    let scale = playing.gain * Float(playing.level) / ramp
                    let whole = Int(at)
                    let fraction = Float(at - Double(whole))
                    // The next frame: the clip's first again when it loops, silence past its end.
                    var next = whole + 1
                    if next >= clipFrames { next = loops ? 0 : -1 }
                    var left = samples[whole * clipChannels]
                    left += ((next < 0 ? 0 : samples[next * clipChannels]) - left) * fraction
                    var right = left
                    if clipChannels == 2 {
                        right = samples[whole * 2 + 1]
                        right += ((next < 0 ? 0 : samples[next * 2 + 1]) - right) * fraction
                    }
                    let base = frame * channelCount
                    for channel in 0..<channelCount {
                        let value = clipChannels == 1 ? left : channelCount == 1 || channel > 1 ? (left + right) / 2 : channel == 0 ? left : right
                        buffer[base + channel] += value * scale
                    }
                    if playing.level == 0, !playing.carried {
                        ended = true  // Faded out.
                        break
                    }
                }
            }
            if ended {
                clipSlots[index] = nil
                playingClips -= 1
            } else {
                clipSlots[index] = playing
            }
        }
        for index in (start * channelCount)..<(end * channelCount) { buffer[index] = min(max(buffer[index], -1), 1) }
    }

    /// Makes `clips` the set playing from synth frame `frame`: a voice already playing carries on
    /// (at its new gain), a new one starts (fading in when it starts mid-clip), one left out fades out.
    private mutating func apply(_ clips: InlineClips, at frame: Int64) {
        guard playingClips > 0 || clips.count > 0 else { return }
        for index in clipSlots.indices { clipSlots[index]?.carried = false }
        for entry in 0..<clips.count {
            let (voice, startFrame) = clips[entry]
            let gain = voice.gain.isFinite ? Float(min(max(voice.gain, 0), 1)) : 0
            var kept = false
            for index in clipSlots.indices where !kept {
                guard let playing = clipSlots[index], !playing.carried, playing.voice.continues(voice) else { continue }
                clipSlots[index]!.carried = true
                clipSlots[index]!.gain = gain
                if playing.level < rampFrames { clipSlots[index]!.fade = 1 }
                kept = true
            }
            guard !kept, voice.speed.isFinite, voice.speed > 0, voice.length.isFinite, voice.length > 0, startFrame.isFinite else { continue }
            // A free slot, else one fading out.
            var free: Int?
            for index in clipSlots.indices where free == nil && clipSlots[index] == nil { free = index }
            for index in clipSlots.indices where free == nil && !(clipSlots[index]?.carried ?? true) { free = index }
            guard let free else { continue }
            if clipSlots[free] == nil { playingClips += 1 }
            let step = voice.clip.sampleRate * voice.speed / rate
            // Begun a frame or more before this one: it comes in mid-clip, and fades in.
            let midClip = (Double(frame) - startFrame) * step >= 1
            clipSlots[free] = ClipPlayback(
                voice: voice, startFrame: startFrame, step: step, lengthFrames: voice.length * voice.clip.sampleRate, gain: gain,
                level: midClip ? 0 : rampFrames, fade: midClip ? 1 : 0, carried: true)
        }
        for index in clipSlots.indices where !(clipSlots[index]?.carried ?? true) {
            // Silent already, or not begun (it would otherwise sound its first millisecond later).
            if clipSlots[index]!.level == 0 || Double(frame) < clipSlots[index]!.startFrame {
                clipSlots[index] = nil
                playingClips -= 1
            } else {
                clipSlots[index]!.fade = -1
            }
        }
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
