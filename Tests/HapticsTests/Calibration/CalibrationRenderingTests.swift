import Foundation
import Haptics
import Testing

/// How the renderer uses what version 2 of the profile adds: a curve that starts below drive 0,
/// saturation, and a tap intensity exponent.
@Suite("Calibration profiles: rendering the response model")
struct CalibrationRenderingTests {
    static let erm = DeviceDescription(
        id: "gpio:rpi-coin-erm:erm", name: "coin ERM", backend: "gpio", actuator: .erm, channels: [ChannelDescription(name: "main", actuator: .erm)],
        minimumUpdateInterval: 0.002, wakeLatency: 0)

    @Test("drive and output invert each other through an offset curve and a saturation")
    func inversion() {
        let channel = ChannelCalibration(name: "main", deadZone: -0.12, responseExponent: 2, fullScaleOutput: 6, saturationOutput: 3.7)
        for output in [0.1, 0.3, 0.8, 1.4, 2.5] {
            let drive = channel.drive(forOutput: output, at: 0)
            #expect(drive > 0 && drive < 1)
            #expect(abs(channel.output(atDrive: drive, frequency: 0) / output - 1) < 1e-9, "\(output) g → drive \(drive)")
        }
        // Beyond the saturation: out of reach.
        #expect(channel.drive(forOutput: 3.8, at: 0) > 1)
        // Under what the smallest drive gives (6 × (0.12/1.12)² ≈ 0.069 g): the smallest drive, or nothing.
        let smallest = channel.output(atDrive: .leastNonzeroMagnitude, frequency: 0)
        #expect(abs(smallest - 0.0688) < 0.001)
        #expect(channel.drive(forOutput: 0.05, at: 0) == .leastNonzeroMagnitude)
        #expect(channel.drive(forOutput: 0.02, at: 0) == 0)
    }

    @Test("the drive mapper keeps the smallest drive of an offset curve from rounding to nothing")
    func smallestStep() {
        let profile = CalibrationProfile(
            deviceID: nil, deviceName: nil, source: .accelerometer,
            channels: [ChannelCalibration(name: "main", deadZone: -0.12, responseExponent: 2, fullScaleOutput: 6)], sharpness: .none,
            transient: .init(duration: 0.06), limits: .init(ratedLevel: 0.4666, overdriveLevel: 1))
        let mapper = DriveMapper(device: Self.erm, profile: profile)
        #expect(abs(mapper.drives(intensity: 0.05, sharpness: 0)[0].amplitude - 1.0 / 255) < 1e-12)
        #expect(mapper.drives(intensity: 0.02, sharpness: 0)[0].amplitude == 0)
        // Held steadily at most at the backend's rated level, in amplitude, when that is not enough.
        var weaker = profile
        weaker.channels[0].fullScaleOutput = 2
        #expect(DriveMapper(device: Self.erm, profile: weaker).drives(intensity: 1, sharpness: 0)[0].amplitude == 0.4666)
    }

    @Test("a profile of levels is sent as frames of levels to a device that takes them, and turned into amplitudes for one that does not")
    func levels() {
        let profile = CalibrationProfile(
            deviceID: nil, deviceName: nil, source: .accelerometer,
            channels: [ChannelCalibration(name: "main", deadZone: 0.1, responseExponent: 2, fullScaleOutput: 7, startDrive: 0.15, stopDrive: 0.1)],
            sharpness: .none, transient: .init(duration: 0.06), limits: .init(ratedLevel: 0.6, overdriveLevel: 1), drive: .level)
        var board = Self.erm
        board.envelope = DriveEnvelope(amplitudeOffset: 0.25, ratedLevel: 0.6, kickLevel: 1, kickDuration: 0.04, acceptsLevels: true)
        let level = profile.channels[0].drive(forOutput: 0.1, at: 0)
        #expect(level > 0.1 && level < 0.25, "0.1 g lies under the board's offset: level \(level)")
        let mapper = DriveMapper(device: board, profile: profile)
        #expect(mapper.sendsLevels && abs(mapper.drives(intensity: 0.1, sharpness: 0)[0].amplitude - level) < 1e-12)
        // An older backend (no ABI 1.3) lifts whatever it gets over its offset: it is sent the
        // amplitude of the level, or nothing where the level lies under the offset.
        var older = board
        older.envelope?.acceptsLevels = false
        let converted = DriveMapper(device: older, profile: profile)
        #expect(!converted.sendsLevels && converted.drives(intensity: 0.1, sharpness: 0)[0].amplitude == 0)
        let high = profile.channels[0].drive(forOutput: 1, at: 0)
        #expect(abs(converted.drives(intensity: 1, sharpness: 0)[0].amplitude - (high - 0.25) / 0.75) < 1e-12)
        // A profile of amplitudes is never sent as levels.
        var amplitudes = profile
        amplitudes.drive = .amplitude
        #expect(!DriveMapper(device: board, profile: amplitudes).sendsLevels)
        // What the start gives from rest, and what the stop keeps once running: the floor.
        #expect(abs(profile.channels[0].lowestOutputFromRest() - 7 * pow(0.05 / 0.9, 2)) < 1e-12)
        #expect(profile.channels[0].lowestRunningOutput() == 0 && profile.floorOutput == 0)
        // A sustained vibration's start lifts a drive under the start threshold to it.
        #expect(mapper.drives(intensity: 0.01, sharpness: 0, starting: true)[0].amplitude == 0.15)
        #expect(mapper.drives(intensity: 0.01, sharpness: 0)[0].amplitude < 0.15)
        #expect(abs(mapper.drives(intensity: 0.5, sharpness: 0, starting: true)[0].amplitude - profile.channels[0].drive(forOutput: 0.5, at: 0)) < 1e-12)
    }

    @Test("a sustained vibration under a motor's start threshold is started at the threshold for 20 ms, then held where asked; a tap is not")
    func startKick() throws {
        let rig = try EngineRig(devices: ["recording:erm"])
        let profile = CalibrationProfile(
            deviceID: "recording:erm", deviceName: nil, source: .accelerometer,
            channels: [ChannelCalibration(name: "main", deadZone: 0.1, responseExponent: 2, fullScaleOutput: 4, startDrive: 0.3, stopDrive: 0.1)],
            sharpness: .none, transient: .init(duration: 0.03))
        rig.engine.setProfile(profile, forDevice: "recording:erm")
        // 0.1 g: drive 0.1 + 0.9 × √(0.1 / 4) ≈ 0.242, under the start (0.3).
        let hold = profile.channels[0].drive(forOutput: 0.1, at: 0)
        try rig.engine.makePlayer(with: .continuous(at: 0, duration: 0.1, intensity: 0.1, sharpness: 0)).start(atTime: 0)
        try rig.engine.makePlayer(with: .transient(at: 0.2, intensity: 0.1, sharpness: 0)).start(atTime: 0)
        rig.advance(to: 0.4)
        let frames = try rig.frames("recording:erm")
        // As the engine rounds to the device's amplitude steps, and the rig to 4 decimals.
        let steps = Double(rig.devices[0].description.channels[0].amplitudeSteps - 1)
        func rounded(_ value: Double) -> Double { ((value * steps).rounded() / steps * 1e4).rounded() / 1e4 }
        #expect(frames.map(\.milliseconds) == [0, 20, 100, 200, 230], "\(frames)")
        #expect(frames.map { $0.amplitudes[0] } == [rounded(0.3), rounded(hold), 0, rounded(hold), 0], "\(frames)")
    }

    /// A vibrator behind evdev's `FF_PERIODIC`: periods in whole milliseconds (166.7 Hz, 200 Hz, nothing between).
    static let periodic = DeviceDescription(
        id: "evdev:virtual:lra", name: "periodic vibrator", backend: "evdev", actuator: .lra,
        channels: [ChannelDescription(name: "main", actuator: .lra, frequencyRange: 40...500)], minimumUpdateInterval: 0.001, wakeLatency: 0,
        periodStep: 0.001)

    @Test("a device that plays whole periods is sent, and its profile read at, the frequency it plays, within the band")
    func wholePeriods() {
        let device = Self.periodic
        #expect(abs(device.playedFrequency(181.2) - 1000.0 / 6) < 1e-9)
        #expect(abs(device.playedFrequency(190) - 200) < 1e-9)
        // Kept within the band where a whole period lies in it: 6 ms (166.7 Hz) is the only one in 160…180 Hz.
        #expect(abs(device.playedFrequency(179, within: 160...180) - 1000.0 / 6) < 1e-9)
        #expect(abs(device.playedFrequency(200, within: 160...200) - 200) < 1e-9)
        // Between two whole periods (171…180 Hz holds none): the nearest.
        #expect(abs(device.playedFrequency(175, within: 171...180) - 1000.0 / 6) < 1e-9)
        var free = device
        free.periodStep = nil
        #expect(free.playedFrequency(181.2) == 181.2)

        // A band of 166.6–197.1 Hz: sharpness 0.5 asks for 181.2 Hz, which this device plays as 166.7 Hz,
        // where the map says full output; read at 181.2 Hz the map would say 0.87 and the tone would come
        // out 15 % strong (it did, before).
        let profile = CalibrationProfile(
            deviceID: device.id, deviceName: nil, source: .accelerometer,
            channels: [
                ChannelCalibration(
                    name: "main", fullScaleOutput: 2, resonantFrequency: 160.7,
                    frequencyResponse: [.init(frequency: 1000.0 / 6, relativeOutput: 1), .init(frequency: 200, relativeOutput: 0.73)], usableBand: 166.6...197.1)
            ], sharpness: .frequency, transient: .init(duration: 0.02), limits: .init())
        let drive = DriveMapper(device: device, profile: profile).drives(intensity: 0.5, sharpness: 0.5)[0]
        #expect(abs(drive.frequency - 1000.0 / 6) < 1e-9)
        #expect(abs(profile.channels[0].output(atDrive: drive.amplitude, frequency: drive.frequency) - 0.5 * CalibrationProfile.referenceOutput) < 1e-9)
        #expect(abs(drive.amplitude - 0.5 * CalibrationProfile.referenceOutput / 2) < 1e-9)
    }

    @Test("a tap's intensity exponent and level change taps and leave continuous events alone", arguments: [(0.5, 1.0), (1.0, 0.9)])
    func tapExponent(exponent: Double, level: Double) throws {
        var frames: [[EngineRig.Frame]] = []
        for (exponent, level) in [(1.0, 1.0), (exponent, level)] {
            let rig = try EngineRig()
            var profile = CalibrationProfile(
                deviceID: "recording:lra", deviceName: nil, source: .simulated,
                channels: [ChannelCalibration(name: "main", resonantFrequency: 175, usableBand: 150...200)], sharpness: .frequency,
                transient: .init(duration: 0.02, intensityExponent: exponent, level: level))
            profile.limits = .init()
            rig.engine.setProfile(profile, forDevice: "recording:lra")
            let tap = try rig.engine.makePlayer(with: .transient(intensity: 0.25, sharpness: 0.5))
            try tap.start(atTime: rig.time(0.01))
            let tone = try rig.engine.makePlayer(with: .continuous(at: 0, duration: 0.05, intensity: 0.25, sharpness: 0.5))
            try tone.start(atTime: rig.time(0.1))
            rig.advance(to: 0.3)
            frames.append(try rig.frames())
        }
        let tapDrive = { (frames: [EngineRig.Frame]) in frames.first { $0.milliseconds >= 10 && $0.amplitudes[0] > 0 }!.amplitudes[0] }
        let toneDrive = { (frames: [EngineRig.Frame]) in frames.first { $0.milliseconds >= 100 && $0.amplitudes[0] > 0 }!.amplitudes[0] }
        let expected = pow(0.25, exponent) * level
        #expect(abs(tapDrive(frames[0]) - 0.25) < 0.003 && abs(tapDrive(frames[1]) - expected) < 0.003, "tap drives \(tapDrive(frames[0])), \(tapDrive(frames[1])), expected \(expected)")
        #expect(toneDrive(frames[0]) == toneDrive(frames[1]))
    }

    @Test("a tap's trim by sharpness follows the sharpness it plays at, its parameter curve included", arguments: [(0.0, 0.9), (1.0, 1.1), (0.75, 1.05)])
    func tapSharpnessTrim(sharpness: Double, trim: Double) throws {
        let rig = try EngineRig()
        let profile = CalibrationProfile(
            deviceID: "recording:lra", deviceName: nil, source: .simulated,
            channels: [ChannelCalibration(name: "main", resonantFrequency: 175, usableBand: 150...200)], sharpness: .frequency,
            transient: .init(duration: 0.02, sharpnessTrim: [0.9, 1, 1.1]), limits: .init())
        rig.engine.setProfile(profile, forDevice: "recording:lra")
        // The event asks for sharpness 0.5; a dynamic parameter moves it to the sharpness tested.
        let pattern = try HapticPattern(
            events: [HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 0.25), .init(parameterID: .hapticSharpness, value: 0.5)], relativeTime: 0)],
            parameters: [HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: sharpness - 0.5, relativeTime: 0)])
        let tap = try rig.engine.makePlayer(with: pattern)
        try tap.start(atTime: rig.time(0.01))
        rig.advance(to: 0.1)
        let drive = try #require(try rig.frames().first { $0.milliseconds >= 10 && $0.amplitudes[0] > 0 }).amplitudes[0]
        #expect(abs(drive - 0.25 * trim) < 0.003, "sharpness \(sharpness): drive \(drive), expected \(0.25 * trim)")
    }
}
