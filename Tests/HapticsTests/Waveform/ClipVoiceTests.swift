import CMallocCounter
import Foundation
import Haptics
import Testing

/// Clips (AHAP `AudioCustom`) in the waveform synth: exact samples, channels, rate conversion,
/// loops, fades, and nothing allocated on the real-time path.
@Suite("Waveform synth: clips mixed sample-exact, mono on every channel, stereo left/right, loops, no clicks")
struct ClipVoiceTests {
    /// The synth tests' coil and their render.
    let coil = WaveformSynthTests().coil
    func render(_ synth: inout WaveformSynth, frames: Int) -> [Float] { WaveformSynthTests().render(&synth, frames: frames) }

    /// The clip's voice, first frame at synth frame `startFrame`, as the stream schedules it.
    func clips(_ voices: (ClipVoice, Double)...) -> InlineClips {
        var clips = InlineClips.none
        for (voice, start) in voices { clips.append(voice, startFrame: start) }
        return clips
    }

    /// A ramp clip: sample `i` is `(i + 1) / 1000`, so every output sample says where in the clip it came from.
    func ramp(frames: Int = 200, channels: Int = 1, rate: Double = 48_000) throws -> AudioClip {
        var samples: [Float] = []
        for frame in 0..<frames {
            for channel in 0..<channels { samples.append(Float(frame + 1) / 1000 * (channel == 0 ? 1 : -1)) }
        }
        return try AudioClip(interleaved: samples, channelCount: channels, sampleRate: rate, name: "ramp")
    }

    @Test("a mono clip at the device's rate: every sample times the gain, from its frame, on every channel; silence after")
    func exactSamples() throws {
        var synth = WaveformSynth(rate: 48_000, channels: [coil, coil])
        let clip = try ramp()
        synth.schedule(at: 10, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0), gain: 0.5), 10)))
        let out = render(&synth, frames: 300)
        for frame in 0..<300 {
            let expected: Float = (10..<210).contains(frame) ? Float(frame - 10 + 1) / 1000 * 0.5 : 0
            #expect(out[frame * 2] == expected && out[frame * 2 + 1] == expected, "frame \(frame): \(out[frame * 2]), \(out[frame * 2 + 1]), expected \(expected)")
        }
        #expect(synth.isSilent, "the clip ended, nothing else plays")
    }

    @Test("a stereo clip: left on the first channel, right on the second; a one-channel device takes their mean")
    func stereo() throws {
        let clip = try ramp(channels: 2)
        var two = WaveformSynth(rate: 48_000, channels: [coil, coil])
        two.schedule(at: 0, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0)), 0)))
        let out = render(&two, frames: 100)
        #expect(out[2 * 50] == 0.051 && out[2 * 50 + 1] == -0.051)
        var one = WaveformSynth(rate: 48_000, channels: [coil])
        one.schedule(at: 0, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0)), 0)))
        #expect(render(&one, frames: 100).allSatisfy { $0 == 0 })
    }

    @Test("a 24 kHz clip plays at 48 kHz: twice the frames, interpolated, the same pitch; speed 2 plays it an octave up")
    func rateConversion() throws {
        let samples = (0..<2_400).map { Float(0.8 * sin(2 * Double.pi * 100 * Double($0) / 24_000)) }
        let clip = try AudioClip(interleaved: samples, channelCount: 1, sampleRate: 24_000)
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        synth.schedule(at: 0, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0)), 0)))
        let out = render(&synth, frames: 6_000)
        let span = try #require(Signal.extent(out, threshold: 0.001))
        #expect(abs(span.count - 4_800) <= 24, "0.1 s at 48 kHz: \(span.count) frames")
        #expect(Signal.peak(of: out[0..<4_800], in: 50...400, rate: 48_000) == 100)
        #expect(abs(Signal.amplitude(of: out[0..<4_800], at: 100, rate: 48_000) - 0.8) < 0.01)

        var fast = WaveformSynth(rate: 48_000, channels: [coil])
        fast.schedule(at: 0, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0), speed: 2), 0)))
        let doubled = render(&fast, frames: 6_000)
        #expect(Signal.peak(of: doubled[0..<2_400], in: 50...400, rate: 48_000) == 200)
        #expect(abs((Signal.extent(doubled, threshold: 0.001)?.count ?? 0) - 2_400) <= 24)
    }

    @Test("a looping clip starts over at its end until its length; one that does not loop ends with the clip")
    func loops() throws {
        let clip = try ramp(frames: 100)
        let rate = 48_000.0
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        synth.schedule(at: 0, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0), length: 250 / rate, loops: true), 0)))
        let out = render(&synth, frames: 400)
        for frame in 0..<400 {
            let expected: Float = frame < 250 ? Float(frame % 100 + 1) / 1000 : 0
            #expect(abs(out[frame] - expected) < 1e-6, "frame \(frame): \(out[frame]), expected \(expected)")
        }
        var once = WaveformSynth(rate: 48_000, channels: [coil])
        once.schedule(at: 0, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0), length: 250 / rate), 0)))
        #expect(render(&once, frames: 400)[100...].allSatisfy { $0 == 0 })
    }

    @Test("a voice sent again carries on where it is; one left out fades out over 1 ms; one that begins mid-clip fades in")
    func continuityAndFades() throws {
        let samples = [Float](repeating: 0.5, count: 4_800)
        let clip = try AudioClip(interleaved: samples, channelCount: 1, sampleRate: 48_000)
        let voice = ClipVoice(clip: clip, start: .init(nanoseconds: 1_000_000_000))
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        synth.schedule(at: 0, drives: .silence, clips: clips((voice, 0)))
        // The same voice again with a drive change, its start rounded 100 ns away: no restart, no fade.
        var again = voice
        again.start = .init(nanoseconds: 1_000_000_100)
        synth.schedule(at: 100, drives: .silence, clips: clips((again, 100.0048)))
        // Then left out at frame 1000.
        synth.schedule(at: 1_000, drives: .silence)
        let out = render(&synth, frames: 1_200)
        #expect(out[0..<1_000].allSatisfy { $0 == 0.5 }, "carried on through the second change")
        #expect(out[1_000] < 0.5 && out[1_000] > 0.48, "fading from the change: \(out[1_000])")
        #expect(zip(out[1_000..<1_048], out[1_001..<1_049]).allSatisfy { $0 >= $1 }, "a linear fade")
        #expect(out[1_048...].allSatisfy { $0 == 0 }, "silent after 48 frames (1 ms)")
        #expect(synth.isSilent)

        // A voice whose first frame played 1,000 frames ago: comes in mid-clip, fading in.
        var late = WaveformSynth(rate: 48_000, channels: [coil])
        late.schedule(at: 0, drives: .silence, clips: clips((voice, -1_000)))
        let fadeIn = render(&late, frames: 100)
        #expect(fadeIn[0] < 0.02 && fadeIn[47] > 0.48 && fadeIn[48] == 0.5, "\(fadeIn[0]), \(fadeIn[47]), \(fadeIn[48])")
    }

    @Test("a voice dropped before its first frame never sounds")
    func droppedBeforeItBegins() throws {
        let clip = try AudioClip(interleaved: [Float](repeating: 0.5, count: 480), channelCount: 1, sampleRate: 48_000)
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        synth.schedule(at: 0, drives: .silence, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0)), 500)))
        synth.schedule(at: 100, drives: .silence)
        #expect(render(&synth, frames: 1_200).allSatisfy { $0 == 0 })
        #expect(synth.isSilent)
    }

    @Test("clips and the coil's own sine add up, held within full scale; silence() fades clips out too")
    func mixAndClamp() throws {
        let clip = try AudioClip(interleaved: [Float](repeating: 0.9, count: 4_800), channelCount: 1, sampleRate: 48_000)
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        var drives = InlineDrives.silence
        drives.amplitude[0] = 1
        synth.schedule(at: 0, drives: drives, clips: clips((ClipVoice(clip: clip, start: .init(nanoseconds: 0)), 0)))
        let out = render(&synth, frames: 960)
        #expect(out.allSatisfy { $0 <= 1 && $0 >= -1 })
        #expect(out.contains(1), "the sum reached full scale and was held there")
        #expect(out.contains { $0 < 0 }, "the sine still swings below the clip's offset")
        synth.silence()
        let after = render(&synth, frames: 200)
        #expect(after[60...].allSatisfy { $0 == 0 }, "silent within the 1 ms ramps")
        #expect(synth.isSilent)
    }

    @Test("scheduling and rendering clips allocates nothing")
    func noAllocation() throws {
        let clip = try ramp(frames: 48_000, channels: 2)
        var synth = WaveformSynth(rate: 48_000, channels: [coil, coil])
        var buffer = [Float](repeating: 0, count: 480 * 2)
        let first = ClipVoice(clip: clip, start: .init(nanoseconds: 0), gain: 0.5)
        synth.schedule(at: 1, drives: .silence, clips: clips((first, 1)))
        buffer.withUnsafeMutableBufferPointer { synth.render(into: $0, frames: 480) }
        malloc_counter_begin()
        for block in 1..<50 {
            var voices = InlineClips.none
            voices.append(first, startFrame: 1)
            if block.isMultiple(of: 3) { voices.append(ClipVoice(clip: clip, start: .init(nanoseconds: UInt64(block) * 10_000_000), loops: true), startFrame: Double(block * 480)) }
            synth.schedule(at: Int64(block * 480 + 17), drives: .silence, clips: voices)
            buffer.withUnsafeMutableBufferPointer { synth.render(into: $0, frames: 480) }
        }
        let count = malloc_counter_end()
        #expect(count == 0)
    }

    @Test("bad samples are typed errors naming the clip and the fix")
    func badClips() {
        #expect(throws: AudioClipError.channelCount(name: "x.wav", 4)) { try AudioClip(interleaved: [0, 0, 0, 0], channelCount: 4, sampleRate: 48_000, name: "x.wav") }
        #expect(throws: AudioClipError.sampleRate(name: "x.wav", 0)) { try AudioClip(interleaved: [0], channelCount: 1, sampleRate: 0, name: "x.wav") }
        #expect(throws: AudioClipError.empty(name: "x.wav")) { try AudioClip(interleaved: [], channelCount: 1, sampleRate: 48_000, name: "x.wav") }
        #expect(throws: AudioClipError.notANumber(name: "x.wav", frame: 1)) { try AudioClip(interleaved: [0, 0, .nan, 0], channelCount: 2, sampleRate: 48_000, name: "x.wav") }
        #expect(throws: AudioClipError.tooLong(name: "x.wav", seconds: 61)) {
            try AudioClip(interleaved: [Float](repeating: 0, count: 61_000), channelCount: 1, sampleRate: 1_000, name: "x.wav")
        }
        #expect(AudioClipError.channelCount(name: "x.wav", 4).description.contains("remix 3 4"))
    }
}
