import CHapticsABI
import DRV260x
import HapticsPluginKit
import HapticsSupport
import HapticsTriggers
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `recording` backend: simulated devices that record every power transition and drive frame
/// with its monotonic time stamp. The backbone of the tests and of `haptic-cal`'s demos.
///
/// Configuration (through the host, or the environment as `HAPTICS_RECORDING_…`):
/// - `recording.devices`: which devices to simulate (see ``DeviceConfiguration``); default `lra,erm,gamepad`.
/// - `recording.output`: the JSON Lines file to write (truncated when the instance starts); unset: nothing is written.
/// - `recording.simulate-wake`: `0` makes `wake` return at once instead of taking the device's wake latency.
@_cdecl("haptics_backend_fill_v1")
public func recordingBackendFill(
    _ host: UnsafePointer<haptics_host_v1>, _ table: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int
) -> Int32 {
    fillBackendTable(name: "recording", host: host, table: table, size: size) { services throws(BackendFailure) in
        try RecordingBackend(services: services)
    }
}

final class RecordingBackend: BackendDriver {
    let services: HostServices
    let simulated: [SimulatedDevice]
    let log: RecordingLog?
    let simulateWake: Bool
    private let unplugged = Mutex<Set<String>>([])

    init(services: HostServices) throws(BackendFailure) {
        self.services = services
        let devices = try DeviceConfiguration.parse(services.configuration(DeviceConfiguration.key))
        simulated = devices
        log = try services.configuration("recording.output").map { path throws(BackendFailure) in
            try RecordingLog(path: path, devices: devices)
        }
        simulateWake = services.configuration("recording.simulate-wake") != "0"
    }

    func devices() throws(BackendFailure) -> [DeviceSpec] {
        let gone = unplugged.withLock { $0 }
        return simulated.filter { !gone.contains($0.spec.id) }.map(\.spec)
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        guard let device = simulated.first(where: { $0.spec.id == deviceID }), !unplugged.withLock({ $0.contains(deviceID) }) else {
            throw BackendFailure(code: ENODEV, "recording: no device '\(deviceID)' (configure recording.devices)")
        }
        log?.append(event: .open, device: deviceID)
        return RecordingDevice(simulated: device, backend: self)
    }

    func destroy() {
        try? log?.flush()
    }

    /// Takes a device out of the list and tells the host, as an unplug would; a device with
    /// `replug_after_ms` comes back that much later (on a thread of its own, as a hotplug monitor's).
    func unplug(_ id: String) {
        unplugged.withLock { _ = $0.insert(id) }
        log?.append(event: .unplug, device: id)
        services.notify(HAPTICS_EVENT_DEVICE_REMOVED, deviceID: id)
        guard let delay = simulated.first(where: { $0.spec.id == id })?.replugAfterMilliseconds else { return }
        let deadline = Monotonic.now() + UInt64(delay) * 1_000_000
        do {
            try PosixThread.start(name: "recording-plug") { [self] in
                Monotonic.sleep(until: deadline)
                unplugged.withLock { _ = $0.remove(id) }
                log?.append(event: .replug, device: id)
                services.notify(HAPTICS_EVENT_DEVICE_ADDED, deviceID: id)
            }.detach()
        } catch {
            services.log(HAPTICS_LOG_ERROR, "recording: cannot replug \(id): \(error)")
        }
    }
}

final class RecordingDevice: DeviceDriver {
    let simulated: SimulatedDevice
    let backend: RecordingBackend
    private let state = Mutex(State())

    private struct State {
        var frames = 0
        var lost = false
        /// Which adaptive triggers hold an effect other than off (right, left).
        var triggers = TriggerEngagement()
    }

    init(simulated: SimulatedDevice, backend: RecordingBackend) {
        self.simulated = simulated
        self.backend = backend
    }

    var id: String { simulated.spec.id }

    private func checkPresent() throws(BackendFailure) {
        if state.withLock({ $0.lost }) { throw BackendFailure(code: ENODEV, "\(id): device was unplugged") }
    }

    func wake() throws(BackendFailure) {
        try checkPresent()
        backend.log?.append(event: .wake, device: id)
        if backend.simulateWake, simulated.spec.wakeLatencyNanoseconds > 0 {
            let latency = simulated.spec.wakeLatencyNanoseconds
            var request = timespec(tv_sec: Int(latency / 1_000_000_000), tv_nsec: Int(latency % 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
        }
    }

    func sleep() throws(BackendFailure) {
        try checkPresent()
        releaseTriggers()
        backend.log?.append(event: .sleep, device: id)
        try backend.log?.flush()
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        try checkPresent()
        if let limit = simulated.failAfterFrames, state.withLock({ $0.frames }) >= limit {
            throw BackendFailure(code: EIO, "\(id): simulated transport failure after \(limit) frames (fail_after_frames)")
        }
        backend.log?.append(frame: frame, device: id)
        let unplugNow = state.withLock { state -> Bool in
            state.frames += 1
            guard let limit = simulated.unplugAfterFrames, state.frames >= limit, !state.lost else { return false }
            state.lost = true
            return true
        }
        if unplugNow { backend.unplug(id) }
    }

    func stop() throws(BackendFailure) {
        try checkPresent()
        backend.log?.append(event: .stop, device: id)
    }

    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(BackendFailure) {
        guard simulated.spec.adaptiveTriggers else { throw BackendFailure(code: EOPNOTSUPP, "\(id): the simulated device has no adaptive triggers") }
        try checkPresent()
        let engaged: TriggerEngagement
        do throws(AdaptiveTriggerError) {
            // Checked as a DualSense checks them: what it would refuse, this refuses, changing nothing.
            engaged = try state.withLock { $0.triggers }.after(right: right, left: left)
        } catch {
            throw BackendFailure(code: EINVAL, "\(id): \(error)")
        }
        backend.log?.append(right: right, left: left, device: id)
        // Written at once (effects are set seldom, and a reader waits for them while the device stays awake).
        try backend.log?.flush()
        state.withLock { $0.triggers = engaged }
    }

    /// A simulated DRV2605L answers as the i2c backend does for the chip: the same ROM mapping.
    func nativeFeedback(_ effect: String, scale: Double) -> String? {
        guard simulated.spec.nativeEffects else { return nil }
        return FeedbackROM.sequence(for: effect, scale: scale)?.description
    }

    func startNative(_ sequence: String) throws(BackendFailure) {
        try recordNative(sequence, waited: false)
    }

    func playNative(_ sequence: String) throws(BackendFailure) {
        try recordNative(sequence, waited: true)
    }

    /// Checks `sequence` as a DRV2605L's ROM sequence (what the chip would refuse, this refuses)
    /// and records it, written out at once.
    private func recordNative(_ sequence: String, waited: Bool) throws(BackendFailure) {
        guard simulated.spec.nativeEffects else { throw BackendFailure(code: EOPNOTSUPP, "\(id): the simulated device has no effects of its own") }
        try checkPresent()
        let parsed: ROMSequence
        do throws(ROMSequenceError) {
            parsed = try ROMSequence(parsing: sequence)
        } catch {
            throw BackendFailure(code: EINVAL, "\(id): \(error)")
        }
        backend.log?.append(native: parsed.description, waited: waited, device: id)
        try backend.log?.flush()
    }

    /// Records both triggers set free when an effect holds either (sleep and close release them).
    private func releaseTriggers() {
        let held = state.withLock { state in
            defer { state.triggers = TriggerEngagement() }
            return state.triggers.any
        }
        if held { backend.log?.append(right: .off, left: .off, device: id) }
    }

    func close() {
        releaseTriggers()
        backend.log?.append(event: .close, device: id)
        try? backend.log?.flush()
    }
}
