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
    private let state = Mutex(State())

    private struct State {
        /// An activity holds the device (from the first effect to the release).
        var active = false
        /// Which triggers hold an effect other than off.
        var engagement = TriggerEngagement()
        var released = false
    }

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
        try state.withLock { (state) throws(DeviceError) in
            guard !state.released else { throw .closed(deviceID: id) }
            let next: TriggerEngagement
            do throws(AdaptiveTriggerError) { next = try state.engagement.after(right: right, left: left) } catch {
                throw .invalidTriggerEffect(deviceID: id, error)
            }
            let began = !state.active
            if began { try device.beginActivity() }
            do throws(DeviceError) {
                try device.setTriggers(right: right, left: left)
            } catch {
                if began { device.endActivity() }
                throw error
            }
            state.active = true
            state.engagement = next
        }
    }

    /// Which triggers hold an effect other than off.
    public var engagement: TriggerEngagement { state.withLock { $0.engagement } }

    /// Sets both triggers free (unless both are off already) and lets the device idle. Idempotent;
    /// later ``set(right:left:)`` calls fail.
    public func release() {
        state.withLock { state in
            defer { state = State(released: true) }
            if state.engagement.any { try? device.setTriggers(right: .off, left: .off) }
            if state.active { device.endActivity() }
        }
    }
}
