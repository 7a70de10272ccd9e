import Foundation
import Haptics
import HapticsCalibration
import Testing

/// The coil bench's files, without running a calibration: the alsa backend lists the device file
/// the bench writes as the preset describes it, and the bench leaves nothing behind.
@Suite("Coil bench: its device file, pipe and sensor tree")
struct CoilBenchLayoutTests {
    @Test("the alsa backend lists the bench's coil as the preset states it; remove() leaves no directory")
    func layout() throws {
        let parent = TestSupport.makeTemporaryDirectory("coilbench")
        let bench = try SimulatedCoilBench(preset: .voiceCoil, parent: parent)
        var info = stat()
        #expect(stat(bench.fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "the card's pipe is a named pipe")
        #expect(FileManager.default.fileExists(atPath: bench.iioRoot + "/iio:device0/in_accel_z_raw"))
        let system = HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), settings: bench.backendSettings,
                logger: TestSupport.quietLogger, daemon: .never))
        let device = try #require(system.devices().first { $0.id == bench.deviceID })
        #expect(device.isAvailable)
        #expect(device.channels == [ChannelDescription(name: "coil", actuator: .voiceCoil, amplitudeSteps: 32_768, frequencyRange: 40...300)])
        #expect(device.sampleStream == SampleStreamFormat(rate: 48_000, periodFrames: 96, bufferFrames: 288))
        // The delay a capture waits for: the buffer (6 ms) and the core's millisecond of render slack.
        #expect(abs((device.sampleStream?.outputDelay ?? 0) - 0.007) < 1e-9)
        bench.remove()
        #expect(!FileManager.default.fileExists(atPath: bench.directory))
    }

    @Test("a bench that cannot be laid out throws, naming the path, and leaves nothing half made")
    func unwritableParent() throws {
        let parent = TestSupport.makeTemporaryDirectory("coilbench-ro")
        // A regular file where the bench's directory would go under: mkdtemp fails with ENOTDIR.
        let file = parent + "/file"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: CalibrationError.self) { try SimulatedCoilBench(preset: .voiceCoil, parent: file) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == ["file"])
    }

    @Test("every preset is made by name, and an unknown name is none")
    func names() throws {
        #expect(Benches.names.contains("voice-coil") && Benches.names.contains("hbridge-lra"))
        #expect(try Benches.make("no-such-bench") == nil)
    }
}
