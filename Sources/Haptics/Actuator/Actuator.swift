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
    /// Plays `sequence`, effects stored in the awake device (``DeviceDescription/hasNativeEffects``)
    /// in its backend's text form, and returns when it has played. The default throws
    /// ``DeviceError/noNativeEffects(deviceID:)``.
    func playNative(_ sequence: String) throws(DeviceError)
    /// Which of its stored effects the device plays for the feedback vocabulary's effect `effect`
    /// at `scale` (0…1] of its strength, in the text form ``playNative(_:)`` takes; nil when none
    /// fits (the engine then renders the effect with frames). Touches no hardware. The default: nil.
    func nativeFeedback(_ effect: String, scale: Double) -> String?
    /// Starts `sequence` (as ``playNative(_:)`` takes it) and returns without waiting for its end.
    /// It plays on through ``stop()`` and silent frames; a frame with any amplitude, another start
    /// and ``close()`` end it; ``sleep()`` lets it finish first. The default throws
    /// ``DeviceError/noNativeEffects(deviceID:)``.
    func startNative(_ sequence: String) throws(DeviceError)
    /// Runs the device's own calibration (``DeviceDescription/selfCalibrates``) and returns its
    /// results by name, the device left idle. The default throws ``DeviceError/noSelfCalibration(deviceID:)``.
    func selfCalibrate() throws(DeviceError) -> [String: Double]
    /// Gives the device stored results of ``selfCalibrate()``. The default throws
    /// ``DeviceError/noSelfCalibration(deviceID:)``.
    func restoreCalibration(_ values: [String: Double]) throws(DeviceError)
}

extension Actuator {
    /// Does nothing: failures come back from the calls.
    public func onFailure(_ handler: @escaping @Sendable (DeviceError) -> Void) {}

    /// No effects of its own.
    public func playNative(_ sequence: String) throws(DeviceError) {
        throw .noNativeEffects(deviceID: description.id)
    }

    /// No effects of its own.
    public func nativeFeedback(_ effect: String, scale: Double) -> String? { nil }

    /// No effects of its own.
    public func startNative(_ sequence: String) throws(DeviceError) {
        throw .noNativeEffects(deviceID: description.id)
    }

    /// No calibration of its own.
    public func selfCalibrate() throws(DeviceError) -> [String: Double] {
        throw .noSelfCalibration(deviceID: description.id)
    }

    /// No calibration of its own.
    public func restoreCalibration(_ values: [String: Double]) throws(DeviceError) {
        throw .noSelfCalibration(deviceID: description.id)
    }

    /// No adaptive triggers.
    public func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(DeviceError) {
        throw .noAdaptiveTriggers(deviceID: description.id)
    }
}
