import Foundation
import Haptics
import HapticsCalibration
import HapticsSupport
import Synchronization
import Testing

/// The accelerometer source on IIO sysfs directory trees: discovery and conversion, and a whole
/// calibration in real time against a tree that a physical model keeps writing. Serialized: the two
/// real-time tests each run a real-time player and sampler, and a model that must keep up with them.
@Suite("Calibration: accelerometer source (IIO sysfs)", .serialized)
struct CalibrationAccelerometerTests {
    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A tree with a gyroscope (no accel files), an ADXL345 (shared scale, per-axis offsets) and
    /// an MPU-6050 (per-axis scales).
    static func tree() throws -> String {
        let root = TestSupport.makeTemporaryDirectory("iio")
        let fm = FileManager.default
        for device in ["iio:device0", "iio:device1", "iio:device2"] { try fm.createDirectory(atPath: "\(root)/\(device)", withIntermediateDirectories: true) }
        try write("bmg160\n", to: root + "/iio:device0/name")
        try write("12\n", to: root + "/iio:device0/in_anglvel_x_raw")
        try write("adxl345\n", to: root + "/iio:device1/name")
        try write("0.038300\n", to: root + "/iio:device1/in_accel_scale")
        for (axis, raw, offset) in [("x", "256", "0"), ("y", "-10", "2"), ("z", "0", "0")] {
            try write(raw + "\n", to: "\(root)/iio:device1/in_accel_\(axis)_raw")
            try write(offset + "\n", to: "\(root)/iio:device1/in_accel_\(axis)_offset")
        }
        try write("mpu6050\n", to: root + "/iio:device2/name")
        for (axis, scale) in [("x", "0.000598"), ("y", "0.000598"), ("z", "0.001196")] {
            try write("16384\n", to: "\(root)/iio:device2/in_accel_\(axis)_raw")
            try write(scale + "\n", to: "\(root)/iio:device2/in_accel_\(axis)_scale")
        }
        return root
    }

    @Test("accelerometers are found by default, number, name or path, and read in g with the IIO ABI's (raw + offset) × scale")
    func discovery() throws {
        let root = try Self.tree()
        let first = try IIOAccelerometer.find(root: root, request: nil)
        #expect(first.name == "adxl345" && first.axes.map(\.name) == ["x", "y", "z"])
        let reading = try first.read()
        #expect(abs(reading[0] - 256 * 0.0383 / 9.80665) < 1e-9 && abs(reading[1] - (-8) * 0.0383 / 9.80665) < 1e-9)
        #expect(try IIOAccelerometer.find(root: root, request: "mpu6050").directory == root + "/iio:device2")
        #expect(try IIOAccelerometer.find(root: root, request: "2").name == "mpu6050")
        #expect(try IIOAccelerometer.find(root: root, request: "iio:device1").name == "adxl345")
        #expect(try IIOAccelerometer.find(root: root, request: root + "/iio:device2").read()[2] > 1.99)
        let missing = try #require(throws: CalibrationError.self) { try IIOAccelerometer.find(root: root, request: "lis3dh") }
        #expect(missing.description == "no IIO accelerometer matches 'lis3dh' under \(root); found: iio:device1 (adxl345), iio:device2 (mpu6050)")
        let none = try #require(throws: CalibrationError.self) { try IIOAccelerometer.find(root: root + "/nothing", request: nil) }
        #expect(none.description.contains("is the driver loaded"))
    }

    @Test("a missing scale or an unreadable value is an error naming the file")
    func errors() throws {
        let root = try Self.tree()
        try FileManager.default.removeItem(atPath: root + "/iio:device1/in_accel_scale")
        let scale = try #require(throws: CalibrationError.self) { try IIOAccelerometer(directory: root + "/iio:device1") }
        #expect(scale.description.hasPrefix(root + "/iio:device1/in_accel_scale: missing or not a positive number"))
        try Self.write("garbage\n", to: root + "/iio:device2/in_accel_y_raw")
        let sensor = try IIOAccelerometer(directory: root + "/iio:device2")
        let read = try #require(throws: CalibrationError.self) { try sensor.read() }
        #expect(read.description.hasPrefix(root + "/iio:device2/in_accel_y_raw: cannot read a whole number"))
    }

    @Test("nan and inf in sysfs, which Double(_:) reads, are errors rather than readings")
    func nonFinite() throws {
        let root = try Self.tree()
        try Self.write("inf\n", to: root + "/iio:device1/in_accel_scale")
        let scale = try #require(throws: CalibrationError.self) { try IIOAccelerometer(directory: root + "/iio:device1") }
        #expect(scale.description.hasPrefix(root + "/iio:device1/in_accel_scale: the scale is not a finite number"))
        try Self.write("nan\n", to: root + "/iio:device2/in_accel_x_raw")
        let sensor = try IIOAccelerometer(directory: root + "/iio:device2")
        let read = try #require(throws: CalibrationError.self) { try sensor.read() }
        #expect(read.description.hasPrefix(root + "/iio:device2/in_accel_x_raw: cannot read a whole number"))
    }

    /// The world the accelerometer sits in: a simulated LRA whose drive is what the engine last
    /// sent, advanced in real time by a writer thread that keeps an ADXL345-like tree up to date
    /// (x vibrates, y holds gravity, z is 0; 3.9 mg per count).
    final class World: @unchecked Sendable {
        // `drives` and `running` are shared under their mutexes; the runner belongs to the writer thread.
        let directory: String
        let drives = Mutex<[ChannelDrive]>([.off])
        let running = Atomic<Bool>(true)
        let scale = 0.0383
        var runner: DeviceModel.Runner
        var thread: Thread?

        init(model: DeviceModel) throws {
            // In memory like sysfs: a disk file system makes each of these rewrites an inode allocation.
            var template = Array("\(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")/haptics-iio-world-XXXXXX".utf8CString)
            directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) } + "/iio:device0"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try CalibrationAccelerometerTests.write("adxl345\n", to: directory + "/name")
            try CalibrationAccelerometerTests.write("\(scale)\n", to: directory + "/in_accel_scale")
            // About what the writer below manages: readings are paced to it, repeats dropped.
            try CalibrationAccelerometerTests.write("4000\n", to: directory + "/in_accel_sampling_frequency")
            try CalibrationAccelerometerTests.write("0\n", to: directory + "/in_accel_x_raw")
            try CalibrationAccelerometerTests.write("\(Int((9.80665 / scale).rounded()))\n", to: directory + "/in_accel_y_raw")
            try CalibrationAccelerometerTests.write("0\n", to: directory + "/in_accel_z_raw")
            runner = model.makeRunner()
        }

        func start() {
            let thread = Thread { [self] in
                // The model stands in for the physical world: it runs above the real-time threads under
                // test (21), or a busy machine holds it up while they play (in CI, beside two emulated
                // guests, a drive below the dead zone read as output and moved the fitted one to 0.04).
                PosixThread.requestRealtimeForCurrentThread(priority: 30)
                var last = HapticInstant.monotonicNow()
                let path = directory + "/in_accel_x_raw", temporary = directory + "/.in_accel_x_raw"
                while running.load(ordering: .relaxed) {
                    let now = HapticInstant.monotonicNow()
                    var elapsed = now.seconds(since: last)
                    last = now
                    let drive = drives.withLock { $0 }
                    var acceleration = 0.0
                    // Small steps: the resonator's force is held over each.
                    while elapsed > 0 {
                        let step = min(elapsed, 1.0 / 16000)
                        acceleration = runner.advance(by: step, drives: drive)
                        elapsed -= step
                    }
                    let raw = Int((acceleration * 9.80665 / scale).rounded())
                    _ = FileManager.default.createFile(atPath: temporary, contents: Data("\(raw)\n".utf8))
                    rename(temporary, path)
                    usleep(200)
                }
            }
            self.thread = thread
            thread.start()
        }

        func stop() { running.store(false, ordering: .relaxed) }
    }

    /// The recording backend's actuator, telling the world every frame it is sent.
    final class TappedActuator: Actuator {
        let inner: any Actuator
        let world: World

        init(inner: any Actuator, world: World) {
            self.inner = inner
            self.world = world
        }

        var description: DeviceDescription { inner.description }
        func wake() throws(DeviceError) { try inner.wake() }
        func sleep() throws(DeviceError) { try inner.sleep() }
        func submit(_ frame: DriveFrame) throws(DeviceError) {
            try inner.submit(frame)
            world.drives.withLock { $0 = frame.channels }
        }
        func stop() throws(DeviceError) {
            try inner.stop()
            world.drives.withLock { $0 = [.off] }
        }
        func close() { inner.close() }
    }

    @Test("calibrating in real time against a model-driven IIO tree recovers the LRA's resonance and dead zone")
    func calibrationThroughSysfs() throws {
        let model = DeviceModel(
            channels: [.lra(LRAModel(resonantFrequency: 190, qFactor: 5, deadZone: 0.1, peakAcceleration: 2))], noise: 0, seed: 1)
        let world = try World(model: model)
        let system = TestSupport.recordingSystem(devices: "lra")
        let backend = try #require(system.backends.first { $0.name == "recording" })
        let actuator = TappedActuator(inner: try backend.open(deviceID: "recording:lra"), world: world)
        let device = HapticDevice(actuator: actuator, logger: TestSupport.quietLogger)
        defer { device.close() }
        world.start()
        defer { world.stop() }
        let source = AccelerometerSource(
            playback: try RealtimePlayback(device: device, logger: TestSupport.quietLogger), sensor: try IIOAccelerometer.find(root: world.directory + "/..", request: nil))
        let plan = CalibrationPlan(
            toneDuration: 0.25, steadyWindow: 0.12, gap: 0.08, tapCapture: 0.15, coarseFrequencies: 8, fineFrequencies: 6, sweepDrive: 0.7,
            driveLevels: [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6, 0.8, 1], tapIntensities: [1], tapSharpnesses: [0.5], tapDurationStride: 6,
            kickGains: [2], kickFractions: [1])
        let result = try Calibrator(plan: plan).calibrate(source, verify: false)
        let channel = result.profile.channels[0]
        #expect(result.profile.source == .accelerometer)
        let f0 = try #require(channel.resonantFrequency)
        #expect(abs(f0 - 190) <= 5, "fitted f0 \(f0) Hz, truth 190 Hz (the description says 175)")
        #expect(abs(channel.deadZone - 0.1) <= 0.04, "fitted dead zone \(channel.deadZone), truth 0.1; measured \(result.measurements[0].amplitude)")
        #expect(abs(channel.fullScaleOutput - 2) <= 0.35, "fitted full scale \(channel.fullScaleOutput) g, truth 2 g")
        print("accelerometer: f0 \(f0) Hz, Q \(channel.qFactor ?? 0), dead zone \(channel.deadZone), full scale \(channel.fullScaleOutput) g")
    }

    @Test("an actuator that is still ringing when the next stimulus is due is waited for, and one that never rests is an error")
    func settling() throws {
        // Q 200 at 175 Hz: a ring-down time constant of 0.36 s.
        let model = DeviceModel(channels: [.lra(LRAModel(resonantFrequency: 175, qFactor: 200, deadZone: 0, peakAcceleration: 2))], noise: 0, seed: 1)
        let world = try World(model: model)
        let system = TestSupport.recordingSystem(devices: "lra")
        let backend = try #require(system.backends.first { $0.name == "recording" })
        let actuator = TappedActuator(inner: try backend.open(deviceID: "recording:lra"), world: world)
        let device = HapticDevice(actuator: actuator, logger: TestSupport.quietLogger)
        defer { device.close() }
        world.start()
        defer { world.stop() }
        let source = AccelerometerSource(
            playback: try RealtimePlayback(device: device, logger: TestSupport.quietLogger), sensor: try IIOAccelerometer.find(root: world.directory + "/..", request: nil))
        let probe = ChannelProbe.profile(for: source.device, channel: 0)
        let tone = Stimulus.tone(intensity: 0.8, sharpness: ChannelProbe.sharpness(for: 175, channel: source.device.channels[0]), duration: 0.3, window: 0.1)
        // Waited for: the second tone starts only once the first has rung down.
        source.settleTimeout = 4
        let start = HapticInstant.monotonicNow()
        let traces = try source.capture([tone, tone], profile: probe, phase: "settling", progress: SilentProgress())
        #expect(HapticInstant.monotonicNow().seconds(since: start) > 1.2, "two 0.3 s tones and a ring-down of seconds")
        #expect(abs(traces[1].amplitude(from: 0, to: 0.05) - traces[0].amplitude(from: 0, to: 0.05)) < 0.2, "the second tone started from rest too")
        // Never resting within the time allowed: an error that says so.
        source.settleTimeout = 0.3
        let error = try #require(throws: CalibrationError.self) { try source.capture([tone, tone], profile: probe, phase: "settling", progress: SilentProgress()) }
        guard case .notSettling(let message) = error else { Issue.record("\(error)"); return }
        #expect(message.contains("still read") && message.contains("0.3 s after the last drive"), "\(message)")
    }
}
