/// A device as the core drives it: the Swift face of one opened backend device.
///
/// The power model (``HapticDevice``) and the engine talk to devices only through this protocol.
/// The implementation for plugins is ``PluginActuator``; calls are serialised by the caller, and
/// `submit` never blocks on a slow transport (backends hand frames to their own writers).
public protocol Actuator: AnyObject, Sendable {
    /// What the device is and can do.
    var description: DeviceDescription { get }
    /// Leaves the lowest-power state so the next frame renders with minimum latency.
    func wake() throws(DeviceError)
    /// Returns to the lowest-power state; output stops.
    func sleep() throws(DeviceError)
    /// Drives every channel as `frame` says until the next frame.
    func submit(_ frame: DriveFrame) throws(DeviceError)
    /// Stops all output now; the device stays awake.
    func stop() throws(DeviceError)
    /// Stops the device, puts it to sleep and releases it. Further calls fail with ``DeviceError/closed(deviceID:)``.
    func close()
    /// Registers the one handler for failures the actuator meets on its own, between calls (a
    /// sample device's stream thread finding the device unplugged). ``HapticDevice`` registers it
    /// and marks the device lost. The default does nothing: an actuator that only acts when
    /// called reports its failures by throwing.
    func onFailure(_ handler: @escaping @Sendable (DeviceError) -> Void)
    /// Sets the adaptive triggers (``DeviceDescription/hasAdaptiveTriggers``) of the awake device:
    /// nil leaves that trigger as it is. Effects hold until set again, `sleep`, `close` or the
    /// process's death; `stop` leaves them. The default throws ``DeviceError/noAdaptiveTriggers(deviceID:)``.
    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(DeviceError)
}

extension Actuator {
    /// Does nothing: failures come back from the calls.
    public func onFailure(_ handler: @escaping @Sendable (DeviceError) -> Void) {}

    /// No adaptive triggers.
    public func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(DeviceError) {
        throw .noAdaptiveTriggers(deviceID: description.id)
    }
}
