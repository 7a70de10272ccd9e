#if canImport(Glibc)
import Glibc
#endif

/// A device hapticsd owns, as this process sees it: the ``Actuator`` behind a ``HapticDevice`` that
/// ``HapticSystem/openDevice(_:)`` hands out in daemon mode.
///
/// It never receives frames: an engine over remote devices sends patterns and player commands to
/// the service, which renders them with the device's calibration profile. Power is the service's
/// too (a generator's `prepare()` becomes the service's `Prepare`), so wake and sleep do nothing here.
final class RemoteActuator: Actuator {
    let description: DeviceDescription
    /// The connection to the service.
    let client: ServiceLink

    init(description: DeviceDescription, client: ServiceLink) {
        self.description = description
        self.client = client
    }

    func wake() throws(DeviceError) {}

    func sleep() throws(DeviceError) {}

    func submit(_ frame: DriveFrame) throws(DeviceError) {
        throw .backendFailure(
            deviceID: description.id, backend: "hapticsd", operation: .submit, errno: ENOTSUP,
            message: "hapticsd owns this device and renders its frames; play patterns and effects through a HapticEngine")
    }

    func stop() throws(DeviceError) {}

    /// The service sets them (`SetTriggers`); this connection holds them until both are off or it closes.
    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(DeviceError) {
        guard description.hasAdaptiveTriggers else { throw .noAdaptiveTriggers(deviceID: description.id) }
        do throws(HapticEngineError) { try client.setTriggers(deviceID: description.id, right: right, left: left) } catch {
            throw .backendFailure(deviceID: description.id, backend: "hapticsd", operation: .setTriggers, errno: EIO, message: "\(error)")
        }
    }

    func close() {}
}
