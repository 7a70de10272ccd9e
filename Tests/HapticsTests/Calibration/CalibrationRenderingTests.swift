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
}
