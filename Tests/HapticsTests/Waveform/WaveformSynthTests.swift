import CMallocCounter
import Foundation
import Haptics
import Testing

/// Signal measurements for the waveform tests.
enum Signal {
    /// The magnitude of `samples`' component at `frequency` (Goertzel), as a sine amplitude.
    static func amplitude(of samples: ArraySlice<Float>, at frequency: Double, rate: Double) -> Double {
        let omega = 2 * Double.pi * frequency / rate
        let coefficient = 2 * cos(omega)
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 2 * power.squareRoot() / Double(samples.count)
    }

    /// The strongest frequency among 1 Hz steps of `range`.
    static func peak(of samples: ArraySlice<Float>, in range: ClosedRange<Int>, rate: Double) -> Double {
        Double(range.max { amplitude(of: samples, at: Double($0), rate: rate) < amplitude(of: samples, at: Double($1), rate: rate) }!)
    }

    /// Channel `channel` of interleaved `samples` with `channels` channels.
    static func channel(_ channel: Int, of samples: [Float], channels: Int) -> [Float] {
        stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
    }

    /// The channels of a raw file of interleaved S16_LE samples (what alsa-lib's `file` PCM and
    /// `arecord -t raw` write), as floats of full scale.
    static func channels(ofRawS16 path: String, channels: Int) throws -> [[Float]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)).map { Float(Int16(littleEndian: $0)) / 32_767 } }
        return (0..<channels).map { channel($0, of: samples, channels: channels) }
    }

    /// The indices of the first and last sample louder than `threshold`, or nil for silence.
    static func extent(_ samples: [Float], threshold: Float = 0.01) -> ClosedRange<Int>? {
        guard let first = samples.firstIndex(where: { abs($0) > threshold }), let last = samples.lastIndex(where: { abs($0) > threshold }) else { return nil }
        return first...last
    }
}

@Suite("Waveform synth: frames become phase-continuous sines, bursts from a zero crossing, ramps with no zipper")
struct WaveformSynthTests {
    let coil = ChannelDescription(name: "coil", actuator: .voiceCoil, amplitudeSteps: 32_768, frequencyRange: 75...300, resonantFrequency: 150)

    func render(_ synth: inout WaveformSynth, frames: Int) -> [Float] {
        var buffer = [Float](repeating: .nan, count: frames * synth.channelCount)
        buffer.withUnsafeMutableBufferPointer { synth.render(into: $0, frames: frames) }
        return buffer
    }

    func drives(_ amplitude: Float, _ frequency: Float, channel: Int = 0) -> InlineDrives {
        var drives = InlineDrives.silence
        drives.amplitude[channel] = amplitude
        drives.frequency[channel] = frequency
        return drives
    }

    @Test("a drive renders a sine at its frequency and amplitude, from the frame it is scheduled at, rising from zero")
    func steadySine() {
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        synth.schedule(at: 100, drives: drives(0.5, 160))
        let samples = render(&synth, frames: 4_900)
        #expect(samples[0..<101].allSatisfy { $0 == 0 }, "silent until the scheduled frame (whose phase is 0)")
        #expect(samples[101] > 0, "the burst rises from a zero crossing")
        let steady = samples[148..<4_948 - 48]
        #expect(abs(Signal.amplitude(of: steady, at: 160, rate: 48_000) - 0.5) < 0.01)
        #expect(Signal.peak(of: steady, in: 100...250, rate: 48_000) == 160)
        #expect(steady.map { abs($0) }.max()! <= 0.5 + 1e-6)
        #expect(synth.position == 4_900)
    }

    @Test("a frequency of 0 plays the channel's resonance")
    func defaultFrequency() {
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        synth.schedule(at: 0, drives: drives(1, 0))
        let samples = render(&synth, frames: 4_800)
        #expect(Signal.peak(of: samples[96...], in: 100...250, rate: 48_000) == 150)
    }

    @Test("a frequency change keeps the phase: no step between samples beyond what the faster sine allows")
    func phaseContinuity() {
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        synth.schedule(at: 0, drives: drives(1, 100))
        for (index, frequency) in [137, 211, 89, 300].enumerated() { synth.schedule(at: Int64(1_000 + index * 777), drives: drives(1, Float(frequency))) }
        let samples = render(&synth, frames: 6_000)
        let largestStep = zip(samples.dropFirst(), samples).map { abs($0 - $1) }.max()!
        // A sine of amplitude 1 at 300 Hz moves at most 2π·300/48000 per sample.
        #expect(Double(largestStep) <= 2 * Double.pi * 300 / 48_000 + 1e-4, "largest step \(largestStep)")
    }

    @Test("an amplitude change is a linear ramp of one millisecond; silence() fades in one; reset() is silent at once")
    func ramps() {
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        #expect(synth.rampFrames == 48)
        synth.schedule(at: 0, drives: drives(1, 1_000))
        let rising = render(&synth, frames: 96)
        // At 1 kHz on 48 kHz, a quarter cycle is 12 frames: the envelope shows at each peak.
        #expect(abs(rising[12] - Float(13.0 / 48)) < 0.01, "\(rising[12])")
        #expect(abs(rising[60] - 1) < 1e-4, "full after the ramp: \(rising[60])")
        synth.silence()
        let fading = render(&synth, frames: 96)
        #expect(fading[48...].allSatisfy { $0 == 0 })
        #expect(synth.isSilent)
        synth.schedule(at: synth.position, drives: drives(1, 1_000))
        _ = render(&synth, frames: 96)
        synth.reset()
        #expect(render(&synth, frames: 48).allSatisfy { $0 == 0 })
    }

    @Test("channels are interleaved in order; an undriven channel stays exactly zero")
    func interleaving() {
        var synth = WaveformSynth(rate: 3_000, channels: [coil, coil])
        synth.schedule(at: 0, drives: drives(0.8, 150, channel: 1))
        let samples = render(&synth, frames: 3_000)
        #expect(Signal.channel(0, of: samples, channels: 2).allSatisfy { $0 == 0 })
        let right = Signal.channel(1, of: samples, channels: 2)
        #expect(abs(Signal.amplitude(of: right[300...], at: 150, rate: 3_000) - 0.8) < 0.01)
    }

    @Test("changes scheduled in the past take effect at the next frame; same-frame and overflowing changes keep the latest")
    func scheduling() {
        var synth = WaveformSynth(rate: 48_000, channels: [coil], capacity: 2)
        _ = render(&synth, frames: 100)
        synth.schedule(at: 10, drives: drives(1, 200))
        synth.schedule(at: 10, drives: drives(0.25, 200))
        synth.schedule(at: 150, drives: drives(0.5, 200))
        synth.schedule(at: 160, drives: drives(0.75, 200))
        let samples = render(&synth, frames: 4_900)
        // Frame 100 took 0.25; the queue of two held 150, whose drives 160's replaced.
        let first = samples[1..<50].map { abs($0) }.max() ?? 0
        #expect(first <= 0.25 + 1e-6 && first > 0.2, "\(first)")
        #expect(abs(Signal.amplitude(of: samples[200...], at: 200, rate: 48_000) - 0.75) < 0.01)
    }

    @Test("a NaN amplitude is silence; a NaN, negative or infinite frequency plays the default; one above half the rate is held below it")
    func badDrives() {
        var synth = WaveformSynth(rate: 3_000, channels: [coil])
        synth.schedule(at: 0, drives: drives(.nan, 150))
        #expect(render(&synth, frames: 300).allSatisfy { $0 == 0 })
        for frequency: Float in [.nan, -5, .infinity] {
            synth.schedule(at: synth.position, drives: drives(1, frequency))
            let samples = render(&synth, frames: 3_000)
            #expect(samples.allSatisfy { $0.isFinite })
            #expect(Signal.peak(of: samples[300...], in: 100...250, rate: 3_000) == 150, "\(frequency)")
        }
        synth.schedule(at: synth.position, drives: drives(1, 2_900))
        let high = render(&synth, frames: 3_000)
        #expect(Signal.peak(of: high[300...], in: 1_300...1_499, rate: 3_000) == 1_350, "held at 0.45 of the rate")
    }

    @Test("rendering and scheduling allocate nothing")
    func noAllocation() {
        var synth = WaveformSynth(rate: 48_000, channels: [coil, coil])
        var buffer = [Float](repeating: 0, count: 480 * 2)
        // Once first: the runtime instantiates type metadata on first use, which allocates.
        synth.schedule(at: 1, drives: drives(0.5, 100))
        buffer.withUnsafeMutableBufferPointer { synth.render(into: $0, frames: 480) }
        malloc_counter_begin()
        for block in 1..<50 {
            synth.schedule(at: Int64(block * 480 + 17), drives: drives(Float(block % 3) / 3, Float(100 + block)))
            buffer.withUnsafeMutableBufferPointer { synth.render(into: $0, frames: 480) }
        }
        let count = malloc_counter_end()
        #expect(count == 0)
    }
}
