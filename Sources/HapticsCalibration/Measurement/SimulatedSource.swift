import Haptics
import HapticsTools
import Logging

/// Measures a physical model of the device, fed with what the real engine sent.
///
/// Stimuli play through a ``HapticEngine`` on a ``ManualClock`` (so a minute of sweeps takes a
/// fraction of a second and every frame time is exact) to a `recording` backend device; the
/// recorded drive frames are read back with ``Recording`` and fed to a ``DeviceModel`` (an LRA
/// resonator, an ERM, a dual-motor gamepad) to get the acceleration an accelerometer on it would
/// have read. The whole rendering path (profile, drive mapping, quantisation, update intervals,
/// the power model, the plugin) stays between the stimulus and the model.
public final class SimulatedSource: VibrationSensorSource {
    /// Simulated measurements.
    public let method = CalibrationProfile.Source.simulated
    /// The device measured.
    public let device: DeviceDescription
    /// The physics simulated.
    public let model: DeviceModel
    /// Samples per second of the simulated accelerometer, Hz.
    public let sampleRate: Double
    /// Silence between stimuli, seconds (each stimulus is simulated from rest).
    public var gap = 0.05
    /// What the simulated backend does to a drive before the model (nil: amplitudes pass through).
    /// The recording backend passes frames through; setting this makes the model see what a board
    /// with these limits would send (``DriveEnvelope/limited(_:)``).
    public var envelope: DriveEnvelope?
    /// Short events are simulated once: a signed trace at the simulation's rate needs no pooling.
    public let repetitions = 1

    let clock: ManualClock
    let system: HapticSystem
    let hapticDevice: HapticDevice
    let engine: HapticEngine
    let recordingPath: String
    private var stimuliPlayed: UInt64 = 0

    /// Opens `deviceID` on the `recording` backend loaded from `searchPath`, recording to
    /// `recordingPath`, and simulates it with `model`, else the default model changed by
    /// `modelSettings` (see ``ModelParameters``).
    /// - Parameters:
    ///   - settings: backend settings (`recording.devices`, …); `recording.output` and
    ///     `recording.simulate-wake` are set by the source.
    ///   - sampleRate: samples per second of the simulated accelerometer, Hz.
    /// - Throws: ``CalibrationError/unsupportedDevice(deviceID:reason:)`` when the device is not a
    ///   recording device (its frames could not be read back), or the device's error.
    public init(
        deviceID: String, searchPath: PluginSearchPath, settings: [String: String] = [:], recordingPath: String, model: DeviceModel? = nil,
        modelSettings: String? = nil, sampleRate: Double = 8000, logger: Logger = Logger(label: "haptics.calibration")
    ) throws(CalibrationError) {
        let clock = ManualClock()
        var settings = settings
        settings["recording.output"] = recordingPath
        settings["recording.simulate-wake"] = "0"
        // The simulated device is this process's own recording device, never hapticsd's.
        let system = HapticSystem(configuration: .init(searchPath: searchPath, settings: settings, clock: clock, logger: logger, daemon: .never))
        let description: DeviceDescription
        do { description = try system.resolve(deviceID) } catch { throw .device(error) }
        guard description.backend == "recording" else {
            throw .unsupportedDevice(
                deviceID: description.id,
                reason: "the simulated source plays through the recording backend so it can read back what the engine sent; "
                    + "calibrate recording:lra, recording:erm or recording:gamepad, or describe this device with --set recording.devices=JSON")
        }
        let chosen: DeviceModel
        if let model { chosen = model } else { chosen = try ModelParameters.model(for: description, settings: modelSettings) }
        let model = chosen
        guard model.channels.count == description.channels.count else {
            throw .invalidModel("the model has \(model.channels.count) channel(s); \(description.id) has \(description.channels.count)")
        }
        do {
            hapticDevice = try system.openDevice(description.id)
            engine = try HapticEngine(devices: [hapticDevice], clock: clock, policy: HapticPolicy(), logger: logger)
        } catch let error as DeviceError {
            throw .device(error)
        } catch let error as HapticEngineError {
            throw .engine(error)
        } catch {
            throw .measurement("\(error)")
        }
        engine.isAutoShutdownEnabled = false
        self.clock = clock
        self.system = system
        self.device = description
        self.model = model
        self.sampleRate = sampleRate
        self.recordingPath = recordingPath
        envelope = DriveEnvelope.of(description)
    }

    /// The noise amplitude of the simulated sensor, g (√2 × its standard deviation).
    public func noiseAmplitude() throws(CalibrationError) -> Double { 2.0.squareRoot() * model.noise }

    deinit {
        engine.stop()
        hapticDevice.close()
    }

    /// Simulates the model over each stimulus's drive schedule (see ``schedules(_:profile:)``).
    public func capture(_ stimuli: [Stimulus], profile: CalibrationProfile, phase: String, progress: ProgressReporter) throws(CalibrationError)
        -> [AccelerationTrace]
    {
        guard !stimuli.isEmpty else { return [] }
        let schedules = try schedules(stimuli, profile: profile)
        var traces: [AccelerationTrace] = []
        for (index, (schedule, stimulus)) in zip(schedules, stimuli).enumerated() {
            stimuliPlayed += 1
            let driven = envelope.map { $0.limited(schedule) } ?? schedule
            let samples = model.simulate(driven, duration: stimulus.captureLength, sampleRate: sampleRate, noiseStream: stimuliPlayed)
            traces.append(AccelerationTrace(samples: samples, sampleRate: sampleRate))
            progress.report(phase: phase, done: index + 1, total: stimuli.count)
        }
        return traces
    }

    /// The drive schedules the engine sent for `stimuli` through `profile` (what the model is fed):
    /// the stimuli play back to back on the manual clock and the recording is read back.
    public func schedules(_ stimuli: [Stimulus], profile: CalibrationProfile) throws(CalibrationError) -> [DriveSchedule] {
        engine.setProfile(profile, forDevice: device.id)
        var start = clock.now().advanced(bySeconds: 0.05)
        var windows: [(HapticInstant, HapticInstant)] = []
        var players: [any HapticPatternPlayer] = []
        do throws(HapticEngineError) {
            for stimulus in stimuli {
                let player = try engine.makePlayer(with: stimulus.pattern)
                try player.start(atTime: start.seconds)
                players.append(player)
                windows.append((start, start.advanced(bySeconds: stimulus.captureLength)))
                start = start.advanced(bySeconds: stimulus.captureLength + gap)
            }
        } catch {
            throw .engine(error)
        }
        // Past the last stimulus the device goes idle, which flushes the recording.
        clock.advance(to: start.advanced(bySeconds: 0.5))
        withExtendedLifetime(players) {}
        let frames: [(received: HapticInstant, frame: DriveFrame)]
        do { frames = try Recording(contentsOf: recordingPath).frames(for: device.id) } catch { throw .recording(error) }
        return windows.map { DriveSchedule(recording: frames, from: $0.0, to: $0.1) }
    }
}
