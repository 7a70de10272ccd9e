import Synchronization

/// A device's adaptive triggers (a DualSense's L2 and R2), held by one owner, as Apple's
/// `GCDualSenseAdaptiveTrigger` is reached through a controller.
///
/// Effects set through it keep the device awake (one activity of its power model, from the first
/// effect to ``release()``), and releasing it, explicitly or when it is deinitialised, sets both
/// triggers free and lets the device idle. Every other kind of end releases them too: the device
/// closing or sleeping (the backend's duty), and the process dying (the backends register the
/// release with the stop guard).
///
/// ```swift
/// let triggers = try AdaptiveTriggers(device: pad)
/// try triggers.set(right: .weapon(startPosition: 0.3, endPosition: 0.6, strength: 0.9))
/// // ...
/// triggers.release()
/// ```
public final class AdaptiveTriggers: Sendable {
    /// The device whose triggers these are.
    public let device: HapticDevice
    private let state = Mutex<(engaged: Bool, released: Bool)>((false, false))

    /// The triggers of `device`.
    ///
    /// - Throws: ``DeviceError/noAdaptiveTriggers(deviceID:)`` when the device has none.
    public init(device: HapticDevice) throws(DeviceError) {
        guard device.description.hasAdaptiveTriggers else { throw .noAdaptiveTriggers(deviceID: device.description.id) }
        self.device = device
    }

    deinit { release() }

    /// Sets the effects of the right (R2) and left (L2) triggers; nil leaves one as it is. Both are
    /// checked before anything is sent, so an effect that cannot be played changes nothing.
    ///
    /// - Throws: ``DeviceError/invalidTriggerEffect(deviceID:_:)`` naming the parameter and its
    ///   range; ``DeviceError/closed(deviceID:)`` after ``release()``; the backend's failure to wake
    ///   the device or to send the effects.
    public func set(right: AdaptiveTriggerEffect? = nil, left: AdaptiveTriggerEffect? = nil) throws(DeviceError) {
        let id = device.description.id
        for effect in [right, left].compactMap(\.self) {
            do throws(AdaptiveTriggerError) { _ = try effect.plan() } catch { throw .invalidTriggerEffect(deviceID: id, error) }
        }
        try state.withLock { (state) throws(DeviceError) in
            guard !state.released else { throw .closed(deviceID: id) }
            let began = !state.engaged
            if began { try device.beginActivity() }
            do throws(DeviceError) {
                try device.setTriggers(right: right, left: left)
            } catch {
                if began { device.endActivity() }
                throw error
            }
            state.engaged = true
        }
    }

    /// Sets both triggers free and lets the device idle. Idempotent; later ``set(right:left:)``
    /// calls fail.
    public func release() {
        state.withLock { state in
            defer { state = (false, true) }
            guard state.engaged else { return }
            try? device.setTriggers(right: .off, left: .off)
            device.endActivity()
        }
    }
}
