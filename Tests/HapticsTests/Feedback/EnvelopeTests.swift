import Foundation
import Haptics
import Testing

/// Android 16's envelope effects: refused where Android's `build()` refuses them, rendered as
/// Android interpolates them, and the frequency profile they are mapped through.
@Suite("Envelopes (Android 16's BasicEnvelopeBuilder and WaveformEnvelopeBuilder) and the frequency profile")
struct EnvelopeTests {
    static let swell = BasicEnvelope.Builder()
        .setInitialSharpness(0)
        .addControlPoint(intensity: 1, sharpness: 1, durationMillis: 500)
        .addControlPoint(intensity: 0, sharpness: 1, durationMillis: 100)

    @Test("build() refuses what Android refuses, naming the point, the parameter, the value and the range")
    func refusals() {
        func refused(_ builder: BasicEnvelope.Builder, _ expected: EnvelopeError) {
            #expect(throws: expected) { _ = try builder.build() }
        }
        refused(BasicEnvelope.Builder(), .empty)
        refused(BasicEnvelope.Builder().addControlPoint(intensity: 1, sharpness: 0.5, durationMillis: 100), .doesNotEndAtZero(lastIntensity: 1))
        refused(
            BasicEnvelope.Builder().addControlPoint(intensity: 1.2, sharpness: 0.5, durationMillis: 100).addControlPoint(intensity: 0, sharpness: 0.5, durationMillis: 10),
            .outOfRange(point: 0, parameter: "intensity", value: 1.2, range: "0.0…1.0"))
        refused(
            BasicEnvelope.Builder().addControlPoint(intensity: 0.5, sharpness: -0.1, durationMillis: 100).addControlPoint(intensity: 0, sharpness: 0.5, durationMillis: 10),
            .outOfRange(point: 0, parameter: "sharpness", value: -0.1, range: "0.0…1.0"))
        refused(Self.swell.setInitialSharpness(2), .outOfRange(point: nil, parameter: "sharpness", value: 2, range: "0.0…1.0"))
        refused(BasicEnvelope.Builder().addControlPoint(intensity: 0, sharpness: 0.5, durationMillis: 0), .badDuration(point: 0, milliseconds: 0))
        #expect(throws: EnvelopeError.self) { _ = try BasicEnvelope(controlPoints: [.init(intensity: .nan, sharpness: 0, duration: 0.1), .init(intensity: 0, sharpness: 0, duration: 0.1)]) }
        #expect("\(EnvelopeError.doesNotEndAtZero(lastIntensity: 1))".contains("must end at a zero intensity"))

        // A waveform envelope need not end at 0; its frequencies must be positive.
        #expect(throws: Never.self) { _ = try WaveformEnvelope.Builder().addControlPoint(amplitude: 1, frequencyHz: 150, durationMillis: 100).build() }
        #expect(throws: EnvelopeError.outOfRange(point: 0, parameter: "frequency (Hz)", value: 0, range: "> 0 Hz")) {
            _ = try WaveformEnvelope.Builder().addControlPoint(amplitude: 1, frequencyHz: 0, durationMillis: 100).build()
        }
        #expect(throws: EnvelopeError.outOfRange(point: 1, parameter: "amplitude", value: 1.5, range: "0.0…1.0")) {
            _ = try WaveformEnvelope.Builder().addControlPoint(amplitude: 1, frequencyHz: 100, durationMillis: 100).addControlPoint(amplitude: 1.5, frequencyHz: 100, durationMillis: 100).build()
        }
        #expect(throws: EnvelopeError.empty) { _ = try WaveformEnvelope.Builder().setInitialFrequencyHz(100).build() }
    }

    @Test("a basic envelope starts at intensity 0 and moves linearly to each point: intensity and sharpness at every millisecond")
    func basicIsLinear() throws {
        let envelope = try Self.swell.build()
        #expect(envelope.duration == 0.6)
        let voices = envelope.pattern.strongestVoice(spacing: 0.001)
        for sample in voices where sample.time > 0.001 && sample.time < 0.599 {
            let expectedIntensity = sample.time <= 0.5 ? sample.time / 0.5 : 1 - (sample.time - 0.5) / 0.1
            let expectedSharpness = min(sample.time / 0.5, 1)
            #expect(abs(sample.intensity - expectedIntensity) < 1e-6, "intensity at \(sample.time)")
            if sample.intensity > 0 { #expect(abs(sample.sharpness - expectedSharpness) < 1e-6, "sharpness at \(sample.time)") }
        }
        // Without an initial sharpness it starts at the first point's (Android's default).
        let flat = try BasicEnvelope.Builder().addControlPoint(intensity: 1, sharpness: 0.7, durationMillis: 100).addControlPoint(intensity: 0, sharpness: 0.2, durationMillis: 100).build()
        #expect(flat.initialSharpness == 0.7)
        #expect(abs((flat.pattern.strongestVoice(spacing: 0.01).first { abs($0.time - 0.05) < 1e-9 }?.sharpness ?? 0) - 0.7) < 1e-6)
    }

    @Test("long envelopes: continuous events of at most 30 s, curves of at most 16 points, still one line")
    func long() throws {
        var builder = BasicEnvelope.Builder()
        for index in 0..<39 { builder = builder.addControlPoint(intensity: index % 2 == 0 ? 0.8 : 0.4, sharpness: 0.5, durationMillis: 1_000) }
        let envelope = try builder.addControlPoint(intensity: 0, sharpness: 0.5, durationMillis: 1_000).build()
        let pattern = envelope.pattern
        #expect(pattern.events.count == 2 && pattern.events.allSatisfy { $0.duration <= 30 })
        #expect(pattern.parameterCurves.allSatisfy { $0.controlPoints.count <= 16 })
        let at = pattern.strongestVoice(spacing: 0.25).filter { [10.5, 30.0, 35.25].contains($0.time) }
        #expect(at.map { ($0.intensity * 1e6).rounded() / 1e6 } == [0.6, 0.4, 0.7])
    }

    @Test("on a device: the frames' frequency follows the sharpness ramp; on a waveform device the glide stays phase-continuous")
    func onDevices() throws {
        let rig = try EngineRig()
        try rig.engine.makePlayer(with: try Self.swell.build().pattern).start(atTime: 0)
        for step in 1...70 { rig.advance(to: Double(step) * 0.01) }
        let frames = try rig.frames().filter { $0.amplitudes[0] > 0 }
        #expect(frames.count > 20)
        let rising = frames.filter { $0.milliseconds < 500 }
        #expect(zip(rising, rising.dropFirst()).allSatisfy { $0.frequencies[0] <= $1.frequencies[0] && $0.amplitudes[0] <= $1.amplitudes[0] }, "\(rising)")

        // The same frames on a voice coil's synth: no sample steps beyond what its fastest sine allows.
        let coil = ChannelDescription(name: "coil", actuator: .voiceCoil, amplitudeSteps: 32_768, frequencyRange: 75...300, resonantFrequency: 150)
        var synth = WaveformSynth(rate: 48_000, channels: [coil])
        for frame in frames {
            var drives = InlineDrives.silence
            drives.amplitude[0] = Float(frame.amplitudes[0])
            drives.frequency[0] = Float(frame.frequencies[0])
            synth.schedule(at: Int64(frame.milliseconds * 48), drives: drives)
        }
        var samples = [Float](repeating: 0, count: 48 * 700)
        samples.withUnsafeMutableBufferPointer { synth.render(into: $0, frames: 48 * 700) }
        let largestStep = zip(samples.dropFirst(), samples).map { abs($0 - $1) }.max()!
        let fastest = frames.map { $0.frequencies[0] }.max()!
        // The fastest sine at full amplitude moves 2πf/48000 per sample; amplitude ramps add 1/48 per ms at most.
        #expect(Double(largestStep) <= 2 * Double.pi * fastest / 48_000 + 1.0 / 48 + 1e-4, "largest step \(largestStep)")
    }

    @Test("a waveform envelope's frequencies map onto the device's band; outside it is an error as Android would not play it; a motor has none")
    func waveformOnAProfile() throws {
        let rig = try EngineRig(devices: ["recording:lra", "recording:erm"])
        let profile = try #require(rig.engine.profile(forDevice: "recording:lra"))
        let frequencies = try #require(rig.engine.frequencyProfile(forDevice: "recording:lra"))
        #expect(rig.engine.frequencyProfile(forDevice: "recording:erm") == nil, "an ERM's frequency cannot be chosen")
        let low = frequencies.minimumFrequency, high = frequencies.maximumFrequency
        let envelope = try WaveformEnvelope.Builder()
            .setInitialFrequencyHz(low)
            .addControlPoint(amplitude: 1, frequencyHz: high, durationMillis: 200)
            .addControlPoint(amplitude: 0, frequencyHz: high, durationMillis: 100)
            .build()
        let pattern = try envelope.pattern(for: profile)
        let mapper = DriveMapper(device: rig.devices[0].description, profile: profile)
        for sample in pattern.strongestVoice(spacing: 0.05) where sample.intensity > 0 && sample.time <= 0.2 {
            // A glide linear in Hz, as Android's.
            let hertz = mapper.drives(intensity: sample.intensity, sharpness: sample.sharpness)[0].frequency
            let expected = low + (high - low) * sample.time / 0.2
            #expect(abs(Double(hertz) - expected) <= 1, "at \(sample.time) s: \(hertz) Hz, expected \(expected)")
        }
        #expect(throws: EnvelopeError.frequencyOutsideDevice(point: 0, hertz: high + 50, band: low...high)) {
            _ = try WaveformEnvelope.Builder().addControlPoint(amplitude: 1, frequencyHz: high + 50, durationMillis: 10).build().pattern(for: profile)
        }
        let erm = try #require(rig.engine.profile(forDevice: "recording:erm"))
        #expect { _ = try envelope.pattern(for: erm) } throws: { error in
            if case .noFrequencyControl = error as? EnvelopeError { true } else { false }
        }
    }

    @Test("the frequency profile reads a measured response: the output at a frequency, the peak, the range above a level")
    func frequencyProfile() throws {
        let description = try TestSupport.recordingSystem(devices: "lra").resolve("recording:lra")
        var profile = CalibrationProfile.uncalibrated(for: description)
        profile.channels[0].usableBand = 100...250
        profile.channels[0].fullScaleOutput = 2
        profile.channels[0].frequencyResponse = [
            .init(frequency: 100, relativeOutput: 0.2), .init(frequency: 150, relativeOutput: 0.8), .init(frequency: 175, relativeOutput: 1),
            .init(frequency: 200, relativeOutput: 0.6), .init(frequency: 250, relativeOutput: 0.1),
        ]
        let frequencies = try #require(FrequencyProfile(profile: profile))
        #expect(frequencies.minimumFrequency == 100 && frequencies.maximumFrequency == 250)
        #expect(frequencies.maximumOutputAcceleration == 2)
        #expect(abs(frequencies.outputAcceleration(atFrequency: 125) - 1.0) < 1e-9)
        #expect(frequencies.outputAcceleration(atFrequency: 300) == 0)
        let range = try #require(frequencies.frequencyRange(minimumOutputAcceleration: 1.2))
        #expect(abs(range.lowerBound - (100 + 50 * 0.8 / 1.2)) < 1e-9 && abs(range.upperBound - 200) < 1e-9, "\(range)")
        #expect(frequencies.frequencyRange(minimumOutputAcceleration: 3) == nil)
    }
}
