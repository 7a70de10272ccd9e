import Foundation
import Haptics
import HapticsTools
import Testing

@Suite("Recording backend through dlopen")
struct RecordingBackendTests {
    @Test("lists the default simulated devices with their capabilities")
    func listsDefaults() throws {
        let system = TestSupport.recordingSystem(devices: "lra,erm,gamepad")
        let devices = system.devices().filter { $0.backend == "recording" }
        #expect(devices.map(\.id) == ["recording:lra", "recording:erm", "recording:gamepad"])
        let lra = try #require(devices.first)
        #expect(lra.actuator == .lra)
        #expect(lra.channels.count == 1)
        #expect(lra.channels[0].frequencyRange == 80...300)
        #expect(lra.channels[0].resonantFrequency == 175)
        #expect(lra.minimumUpdateInterval == 0.001)
        let gamepad = devices[2]
        #expect(gamepad.actuator == .dualRumble)
        #expect(gamepad.channels.map(\.name) == ["strong", "weak"])
        #expect(gamepad.channels.allSatisfy { !$0.controlsFrequency })
    }

    @Test("the file read back holds every transition and frame, in order, with monotonic stamps")
    func roundTrip() throws {
        let directory = TestSupport.makeTemporaryDirectory("rec")
        let output = directory + "/out.jsonl"
        let clock = ManualClock()
        let frames = [
            DriveFrame(time: HapticInstant(seconds: 10), channels: [ChannelDrive(amplitude: 0.25, frequency: 150)]),
            DriveFrame(time: HapticInstant(seconds: 10.01), channels: [ChannelDrive(amplitude: 1, frequency: 175)]),
            DriveFrame(time: HapticInstant(seconds: 10.02), channels: [ChannelDrive(amplitude: 0.5, frequency: 300)]),
        ]
        do {
            let system = TestSupport.recordingSystem(devices: "lra", output: output, clock: clock)
            let device = try system.openDevice("recording:lra")
            try device.beginActivity()
            for frame in frames { try device.submit(frame) }
            device.endActivity()
            device.close()
        }
        let recording = try Recording(contentsOf: output)
        #expect(recording.version == 1)
        #expect(recording.devices.map(\.id) == ["recording:lra"])
        #expect(recording.devices[0].channels[0].resonantFrequency == 175)
        #expect(recording.transitions(for: "recording:lra") == ["open", "wake", "stop", "sleep", "close"])
        let played = recording.frames(for: "recording:lra").map(\.frame)
        #expect(played == frames)
        let stamps = recording.entries.map(\.time)
        #expect(stamps == stamps.sorted())
    }

    @Test("a device described in JSON, with the description's errors naming the key")
    func customDevices() throws {
        let json = #"[{"id":"recording:vc","name":"Voice coil","actuator":"voiceCoil","wake_latency_ms":2,"#
            + #""channels":[{"name":"main","actuator":"voiceCoil","frequency_min_hz":20,"frequency_max_hz":1000}]}]"#
        let system = TestSupport.recordingSystem(devices: json)
        let device = try #require(system.devices().first { $0.id == "recording:vc" })
        #expect(device.actuator == .voiceCoil)
        #expect(device.wakeLatency == 0.002)
        #expect(device.channels[0].frequencyRange == 20...1000)

        let bad = TestSupport.recordingSystem(devices: #"{"id":"x","channels":[{"name":"m","frequency_min_hz":"high"}]}"#)
        #expect(bad.backends.allSatisfy { $0.name != "recording" })
        let failure = try #require(bad.plugins.failures.first { $0.path.hasSuffix("libhaptics-recording.so") })
        #expect("\(failure)".contains("$.channels[0].frequency_min_hz: expected a number, found string \"high\""))
    }

    @Test("an unwritable output path fails that backend alone, with the path in the error")
    func unwritableOutput() throws {
        let system = TestSupport.recordingSystem(output: "/proc/definitely/not/here.jsonl")
        #expect(system.backends.contains { $0.name == "null" })
        let failure = try #require(system.plugins.failures.first { $0.path.hasSuffix("libhaptics-recording.so") })
        guard case .initializationFailed(let path, _, let messages) = failure else {
            Issue.record("unexpected \(failure)")
            return
        }
        #expect(path.hasSuffix("libhaptics-recording.so"))
        #expect(messages.joined().contains("/proc/definitely/not/here.jsonl"))
    }
}
