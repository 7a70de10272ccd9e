import CLibFuzzer
import Haptics
import Logging
import Synchronization

/// A harness: libFuzzer's `LLVMFuzzerTestOneInput` signature.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer over `target` with this process's command line (corpus directories, `-runs=`,
/// `-max_total_time=`, or files to replay) and returns its exit status.
///
/// A harness's main calls this rather than linking libFuzzer's own `main`: SwiftPM names every
/// executable's entry point itself, and this keeps that entry point the program's.
public func runLibFuzzer(_ target: FuzzTarget) -> CInt {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    return LLVMFuzzerRunDriver(&argc, &argv, target)
}

/// Ends the run as a crash libFuzzer reports, with `message`: a harness's invariant failed (a
/// value out of its documented range, a round trip that changed the value).
public func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}

/// The input libFuzzer hands a harness, as an array.
public func input(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// A logger that drops everything: the harnesses run millions of inputs, and warnings about
/// skipped profiles or settings are expected ones.
public let silentLogger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

/// An actuator that keeps nothing but checks every frame the engine sends it: one value per
/// channel, each amplitude finite and in 0…1, each frequency finite and ≥ 0.
public final class CheckingActuator: Actuator {
    /// The device this actuator claims to be.
    public let description: DeviceDescription
    private let frames = Atomic<Int>(0)

    /// An actuator described by `description`.
    public init(_ description: DeviceDescription) {
        self.description = description
    }

    /// Frames received so far.
    public var frameCount: Int { frames.load(ordering: .relaxed) }

    /// Accepts the wake (there is no hardware to wake).
    public func wake() throws(DeviceError) {}
    /// Accepts the sleep.
    public func sleep() throws(DeviceError) {}
    /// Accepts the stop.
    public func stop() throws(DeviceError) {}
    /// Accepts the close.
    public func close() {}

    /// Checks `frame` (see the type's documentation) and counts it.
    public func submit(_ frame: DriveFrame) throws(DeviceError) {
        require(frame.channels.count == description.channels.count, "frame has \(frame.channels.count) channels for \(description.channels.count)")
        for drive in frame.channels {
            require(drive.amplitude.isFinite && (0...1).contains(drive.amplitude), "amplitude \(drive.amplitude) outside 0...1")
            require(drive.frequency.isFinite && drive.frequency >= 0, "frequency \(drive.frequency) is not a finite frequency")
        }
        frames.add(1, ordering: .relaxed)
    }
}

/// Devices of every kind the renderer distinguishes: an LRA whose frequency follows sharpness,
/// a dual-motor gamepad (sharpness mixes the motors) and a single ERM (sharpness ignored).
public let fuzzDevices: [DeviceDescription] = [
    DeviceDescription(
        id: "fuzz:lra", name: "LRA", backend: "fuzz", actuator: .lra,
        channels: [ChannelDescription(name: "main", actuator: .lra, frequencyRange: 80...300, resonantFrequency: 175)],
        minimumUpdateInterval: 0.001, wakeLatency: 0.001),
    DeviceDescription(
        id: "fuzz:gamepad", name: "gamepad", backend: "fuzz", actuator: .dualRumble,
        channels: [
            ChannelDescription(name: "strong", actuator: .erm, amplitudeSteps: 101, nominalFrequency: 55),
            ChannelDescription(name: "weak", actuator: .erm, amplitudeSteps: 101, nominalFrequency: 160),
        ],
        minimumUpdateInterval: 0.010, wakeLatency: 0.008),
    DeviceDescription(
        id: "fuzz:erm", name: "ERM", backend: "fuzz", actuator: .erm,
        channels: [ChannelDescription(name: "main", actuator: .erm, nominalFrequency: 200)],
        minimumUpdateInterval: 0.001, wakeLatency: 0.0005),
]

/// An engine on a manual clock over checking actuators: no threads, no plugins, no files, so a
/// harness can drive the real engine path for every input.
public struct FuzzEngine {
    /// The engine's clock: it moves only when the harness advances it.
    public let clock: ManualClock
    /// One per device, in the order of the devices.
    public let actuators: [CheckingActuator]
    /// The engine.
    public let engine: HapticEngine

    /// An engine over `devices`, with `profiles` by device id and `policy`.
    public init(
        devices: [DeviceDescription] = fuzzDevices, profiles: [String: CalibrationProfile] = [:], policy: HapticPolicy = HapticPolicy()
    ) throws(HapticEngineError) {
        let clock = ManualClock()
        let actuators = devices.map(CheckingActuator.init)
        let hapticDevices = actuators.map { HapticDevice(actuator: $0, clock: clock, logger: silentLogger) }
        self.clock = clock
        self.actuators = actuators
        engine = try HapticEngine(devices: hapticDevices, clock: clock, profiles: profiles, profileStore: nil, policy: policy, logger: silentLogger)
    }

    /// Runs the clock `seconds` on, then stops the engine and runs what its stop scheduled.
    public func finish(after seconds: Double) {
        clock.advance(bySeconds: seconds)
        engine.stop()
        clock.advance(bySeconds: 1)
    }
}
